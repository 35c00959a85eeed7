"""A tool's or a service's name that spaCy takes for a person ("Docker Compose", "Kafka Streams") was masked,
lost to search and to the agent: two words ending in a common word that is no surname, after a word that is no
given name, name a thing. People whose surname is also a word stay people. Every value here is made up for this
file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from agentmem.adapters.local.thing_names import ends_in_a_common_word


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def people(detector: LocalPiiDetector, text: str) -> list[str]:
    return [span.value for span in detector.detect(text) if span.entity_type == "PERSON"]


@pytest.mark.parametrize(
    "text",
    [
        "i'm meeting Docker Compose for coffee on monday",
        "thanks to Kafka Streams, the launch went fine",
        "we hired Nginx Ingress last week",
    ],
)
def test_a_tool_named_like_a_person_is_no_one(detector: LocalPiiDetector, text: str) -> None:
    assert people(detector, text) == []


@pytest.mark.parametrize(
    ("value", "a_thing"),
    [
        ("Docker Compose", True),
        ("Kafka Streams", True),
        ("Rose Baker", False),  # a surname of the gazetteer
        ("Mark Hunter", False),  # a given name first
        ("Alım Tok", False),  # a short last word is as often a surname
        ("Asya Godina", False),  # a word only the frequency table holds
        ("Émeric Cabana", False),  # a given name the gazetteer lacks, no word
        ("Ayna Khadzhiyev's Cautionary Tales", False),  # a name and a title
    ],
)
def test_only_two_words_ending_in_a_common_word_name_a_thing(value: str, a_thing: bool) -> None:
    assert ends_in_a_common_word(value) is a_thing
