"""Names in a script without capitals, inside English text, were stored raw: the name rules read capitals and
spaCy's model is English. Faker's lists of those scripts, and two forms (three Hangul syllables; a kanji
surname and a given name holding kana), find them now; a sentence written wholly in such a script is left
alone. Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local import script_names
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def people(detector: LocalPiiDetector, text: str) -> list[str]:
    return [span.value for span in detector.detect(text) if span.entity_type == "PERSON"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I had lunch with 王晓岚 yesterday.", "王晓岚"),  # a listed surname, then two letters
        ("Please forward the lease to 향재윤 before Friday.", "향재윤"),  # three Hangul syllables
        ("my cousin 真行寺 みなと said the ferry was late", "真行寺 みなと"),  # kanji surname, kana given name
        ("Ask رشيد القحطاني whether the boiler was serviced.", "رشيد القحطاني"),  # a listed Arabic given name
        ("The flowers were from सुनील बोसवाल, I think.", "सुनील बोसवाल"),  # a listed Devanagari given name
    ],
)
def test_a_name_in_a_caseless_script_is_a_person(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize(
    "text",
    [
        "We drove through 수원시 on the way.",  # a city: its suffix says so
        "王先生今天去北京开会了，我们明天见面。",  # a sentence wholly in Chinese: no run stands alone
        "I love the word 美しい.",  # no listed name, no name's form
    ],
)
def test_places_and_sentences_in_those_scripts_are_no_one(detector: LocalPiiDetector, text: str) -> None:
    assert script_names.find(text) == []


def test_the_lists_come_from_fakers_providers() -> None:
    given, family = script_names.names()
    assert "王" in family and "सुनील" in given and len(given) > 1000 and len(family) > 1000
