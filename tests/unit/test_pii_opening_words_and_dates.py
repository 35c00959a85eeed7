"""Names after a sentence-opening verb, a name spaCy reads as an organisation, and a day and month that are
a date, not a street: found by calling the service from outside with values no project file held. Every
value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def found(detector: LocalPiiDetector, text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in detector.detect(text)}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Ring Bogusław Zawadzki on Monday", "Bogusław Zawadzki"),  # an imperative before a full name
        ("Phone Grzegorz Kowalewski after lunch", "Grzegorz Kowalewski"),
        ("Ebuka Onyekachi", "Ebuka Onyekachi"),  # a bare label: spaCy says organisation
        ("please thank Ebuka Onyekachi", "Ebuka Onyekachi"),
        ("Dear Anastasios Karamanlidis,", "Anastasios Karamanlidis"),  # the salutation stays a word
        ("Ring Bogusław", "Bogusław"),
        ("Thanks Chiamaka!", "Chiamaka"),  # a greeting before a name no dictionary holds
        ("Hello Síle, how was the trip?", "Síle"),
    ],
)
def test_a_full_name_is_found_after_an_opening_verb_or_alone(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert ("PERSON", name) in found(detector, text)


@pytest.mark.parametrize("text", ["Thanks Google", "Cheers Mate", "Hi All", "Welcome Home"])
def test_a_greeting_before_an_english_word_is_no_name(detector: LocalPiiDetector, text: str) -> None:
    assert found(detector, text) == set()


@pytest.mark.parametrize("text", ["Onyekachi Holdings", "Will Smith called"])
def test_an_organisation_with_a_dictionary_word_and_a_given_name_first_are_unchanged(
    detector: LocalPiiDetector, text: str
) -> None:
    spans = found(detector, text)
    if text.startswith("Will"):
        assert ("PERSON", "Will Smith") in spans  # "Will" is a given name: nothing trimmed
    else:
        assert not any(kind == "PERSON" for kind, _ in spans)


@pytest.mark.parametrize(
    "text",
    ["We moved on 9 November 1983. Really glad we did.", "It opened on 21 Oct 2004. Nobody came."],
)
def test_a_day_and_a_month_are_no_street_and_take_no_word_of_the_next_sentence(
    detector: LocalPiiDetector, text: str
) -> None:
    assert not any(kind == "STREET_ADDRESS" for kind, _ in found(detector, text))


def test_a_birth_date_before_a_new_sentence_is_a_date_of_birth(detector: LocalPiiDetector) -> None:
    assert found(detector, "Born 9 November 1983. Reach me by post.") == {("DATE_TIME", "9 November 1983")}
