"""Someone named as the object of a verb that takes a person ("Please ring ...", "Remind ... about"): two
capitalised words the NER missed or called a place were stored raw when the service was called from outside
with names no project file held. Firms and places after the same verbs stay what they were. Every value here is
made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def people(detector: LocalPiiDetector, text: str) -> list[str]:
    return [span.value for span in detector.detect(text) if span.entity_type == "PERSON"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Please ring Bukola Adeyemi-Okafor tomorrow.", "Bukola Adeyemi-Okafor"),  # spaCy: a place
        ("Remind Batı Tahincioğlu about the meeting.", "Batı Tahincioğlu"),  # spaCy: nothing
        ("Could you call Öğünç Durmaz tomorrow?", "Öğünç Durmaz"),  # two words no dictionary holds
        ("Text Pantaleon Mejstřík when you land.", "Pantaleon Mejstřík"),
        # a given name alone, the verb opening the sentence (spaCy: an organisation, or nothing)
        ("Ring Tomasz tomorrow.", "Tomasz"),
        ("Email Priya the slides.", "Priya"),
        ("Text Sam at the gate.", "Sam"),  # a given name that is also a word, not "Text Sam"
        ("Wrong: Ring Tomasz first.", "Tomasz"),  # the verb after a colon opens a clause too
    ],
)
def test_the_object_of_a_verb_that_takes_someone_is_a_person(
    detector: LocalPiiDetector, text: str, name: str
) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize(
    "text",
    [
        "Ask Google Maps for the route.",
        "Call Customer Services first.",
        "Text Dell Sales when you land.",
        "Please call Vodafone Ireland.",  # an unknown word and a place: a firm
        "Remind Microsoft Teams users.",
        "Text Emerson Electric Company when you land.",
        "Call Security now.",
        "Text Support if it breaks.",
        "Remind Lemon Grove about the meeting.",  # a town of words after the verb
        "Ask Royal Bank Scot to sign it.",
    ],
)
def test_a_firm_or_a_service_after_such_a_verb_is_no_person(detector: LocalPiiDetector, text: str) -> None:
    assert people(detector, text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # a given name no table holds, alone, after a verb whose object is a person and before what ends it
        ("I met Radomir at the station.", "Radomir"),
        ("We thanked Ifeoluwa for the help.", "Ifeoluwa"),
        ("Remind Zbyhněv about the invoice.", "Zbyhněv"),
        ("She told Tsegaye that it was late.", "Tsegaye"),
    ],
)
def test_a_given_name_no_table_holds_alone_after_a_verb_that_meets_someone(
    detector: LocalPiiDetector, text: str, name: str
) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize(
    "text",
    [
        "I met Vodafone reps at the fair.",  # a firm before a noun
        "Invite Figma users to the board.",  # "invite" takes products too: not a cue for a word alone
        "Tell Grafbank engineers about it.",
        "Ask Perplexity about the route.",  # after "ask", "call", "text", "contact": as often a tool or a firm
        "Contact Zentrix about the invoice.",
    ],
)
def test_an_unknown_word_alone_is_no_person_where_a_firm_is_as_likely(detector: LocalPiiDetector, text: str) -> None:
    assert people(detector, text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Meet Nguyễn Văn Thành at the station.", "Nguyễn Văn Thành"),  # spaCy: "Văn Thành" only
        ("Remind Ana Lucía Gómez about the form.", "Ana Lucía Gómez"),  # "Ana" is a noun too
    ],
)
def test_three_names_after_such_a_verb_are_one_person(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize("text", ["Email Ocean Park Hotel today", "Ask Vodafone Ireland Support about it."])
def test_three_words_a_dictionary_holds_after_such_a_verb_are_no_person(detector: LocalPiiDetector, text: str) -> None:
    assert people(detector, text) == []
