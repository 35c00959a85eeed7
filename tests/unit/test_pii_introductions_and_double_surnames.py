"""A name after "I'm" or after an inflected verb opening the sentence, double-barrelled surnames, and an Irish
name with a particle that spaCy reads as an organisation: each was stored wrong when the service was called
from outside with values no project file held ("I'm" went into the vault with the name, "Refunded" became a
person of its own, "Rings <name>" was stored raw). Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.english_words import a_verb_form
from agentmem.adapters.local.name_gazetteer import shared_gazetteer
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def people(detector: LocalPiiDetector, text: str) -> list[str]:
    return [span.value for span in detector.detect(text) if span.entity_type == "PERSON"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hi, I'm Caitríona Ní Ghallchóir, call me back", "Caitríona Ní Ghallchóir"),
        ("I'm Pádraigín and I'm new here", "Pádraigín"),
        ("I’m Fionnuala Ní Chathasaigh", "Fionnuala Ní Chathasaigh"),  # a typographic apostrophe
    ],
)
def test_a_self_introduction_is_not_part_of_the_name(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Refunded Eimhear Ó Dubhghaill", "Eimhear Ó Dubhghaill"),
        ("Emailed Ifeoluwa Okonjo-Bello yesterday", "Ifeoluwa Okonjo-Bello"),
        ("Rings Temitope Adeyemi-Okafor twice a week", "Temitope Adeyemi-Okafor"),
    ],
)
def test_an_inflected_verb_opening_the_sentence_is_not_part_of_the_name(
    detector: LocalPiiDetector, text: str, name: str
) -> None:
    assert people(detector, text) == [name]


def test_verb_forms_come_from_the_lemmatizer_tables_and_names_are_none() -> None:
    assert all(a_verb_form(word) for word in ("refunded", "emailed", "rings", "drove", "booked"))
    assert not any(a_verb_form(word) for word in ("temitope", "eimhear", "okonjo"))


def test_a_double_barrelled_surname_is_a_surname_when_both_parts_are() -> None:
    gazetteer = shared_gazetteer()
    assert gazetteer.is_last("Ortiz-Gómez") and gazetteer.is_name("Adeyemi-Okafor")
    assert not gazetteer.is_last("Long-Term") and not gazetteer.is_last("Adeyemi-")


@pytest.mark.parametrize("text", ["The viewing is at Rúa de la Unión, 1177 on Saturday.", "a long-term plan"])
def test_a_street_or_a_compound_word_is_no_person(detector: LocalPiiDetector, text: str) -> None:
    assert people(detector, text) == []
