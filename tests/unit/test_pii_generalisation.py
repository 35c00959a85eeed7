"""The local detector on what pii-dev does not hold: names with diacritics or in lower case, identifiers
and common words that must stay as they are (issue 20). Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.name_gazetteer import fold, shared_gazetteer
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def found(detector: LocalPiiDetector, text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in detector.detect(text)}


def test_a_yoruba_name_with_combining_marks_is_one_person(detector: LocalPiiDetector) -> None:
    # "Ọlátúnjí" is written with a combining acute (U+0301) no precomposed letter holds.
    assert found(detector, "I met Adébọ́lá Ọlátúnjí at the market.") == {("PERSON", "Adébọ́lá Ọlátúnjí")}


def test_a_lower_case_name_after_a_relative_is_a_person(detector: LocalPiiDetector) -> None:
    assert found(detector, "my colleague ríona mcgillycuddy is visiting") == {("PERSON", "ríona mcgillycuddy")}
    assert found(detector, "my colleague said the train was late") == set()


def test_two_unknown_capitalised_words_with_a_known_given_name_are_a_person(detector: LocalPiiDetector) -> None:
    assert found(detector, "Ask Wanjiru Kamau about the invoice.") == {("PERSON", "Wanjiru Kamau")}


def test_a_name_after_to_is_a_person_when_it_has_two_words(detector: LocalPiiDetector) -> None:
    # spaCy reads this one as a place; two words the gazetteer knows after "to" are a person.
    assert found(detector, "Please forward the signed lease to Ove Jespersen today.") == {("PERSON", "Ove Jespersen")}


def test_a_name_written_with_diacritics_finds_its_plain_spelling_but_not_the_reverse() -> None:
    gazetteer = shared_gazetteer()
    assert fold("Ọlátúnjí") == "olatunji"
    assert gazetteer.is_first("Mária") == gazetteer.is_first("maria") is True
    # Folding the gazetteer itself would make "Bot" a name (Vietnamese "Bốt"); only the text is folded.
    assert not gazetteer.is_first("Bot")


@pytest.mark.parametrize(
    "text",
    [
        "Copied zephyr-14-3-b7e2d1 and hazel_22_c09d to the bucket",
        "Stored Jordan-7-2-aa41f0 for later.",
        "checkpoint victoria/run-3f9e written",
    ],
)
def test_words_inside_identifiers_are_not_masked(detector: LocalPiiDetector, text: str) -> None:
    assert detector.detect(text) == []


def test_a_nationality_describing_a_dish_is_not_masked_but_one_describing_a_person_is(
    detector: LocalPiiDetector,
) -> None:
    assert detector.detect("Lasagne and Thai green curry for dinner, then Turkish delight.") == []
    assert ("NRP", "Thai") in found(detector, "Our new neighbour is a Thai woman from Chiang Mai.")


def test_lower_case_nouns_spacy_reads_as_a_place_or_person_are_not_masked(detector: LocalPiiDetector) -> None:
    assert detector.detect("The gravel ridge runner was muddy after the rain.") == []
    assert detector.detect("the landlord, as usual, never answers") == []


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("We moved to 45 Phố Hàng Bạc last spring.", "45 Phố Hàng Bạc"),
        ("Send it to Jl. Kenanga Ungu No. 17 please.", "Jl. Kenanga Ungu No. 17"),
        ("She lives at Stretto Gualtieri, 88 now.", "Stretto Gualtieri, 88"),
        ("Delivery address: Wendelsteg-Weg 31", "Wendelsteg-Weg 31"),
        ("Post it to 9182 Harlowe Inlet tomorrow.", "9182 Harlowe Inlet"),
        ("Delivery address: U Zelené Louky 14", "U Zelené Louky 14"),
    ],
)
def test_street_addresses_of_more_countries_are_found(
    detector: LocalPiiDetector, text: str, address: str
) -> None:
    assert [span.value for span in detector.detect(text) if span.entity_type == "STREET_ADDRESS"] == [address]


def test_a_street_word_that_is_also_an_ordinary_word_needs_a_number(detector: LocalPiiDetector) -> None:
    spans = detector.detect("The Gang members met in the Campo after dark.")
    assert [span for span in spans if span.entity_type == "STREET_ADDRESS"] == []


def test_a_text_that_is_one_lower_case_word_is_no_name():
    # A JSON object key, a namespace label or a tag ("meta" is also a given name in Faker's lists).
    from agentmem.adapters.local.presidio_pii import LocalPiiDetector

    detector = LocalPiiDetector()
    assert detector.detect("meta") == [] and detector.detect("notes") == []
    assert [s.entity_type for s in detector.detect("Meta Jørgensen called")] == ["PERSON"]
