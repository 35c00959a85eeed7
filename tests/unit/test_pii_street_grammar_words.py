"""A word of English grammar before a number is no street, though it may end like one ("During" like the
Nordic "-ring"): "During 2019, Brightwell Holdings ..." was masked as an address. Street types that are such
words still open streets, and a roman numeral after a street's name is no pronoun ("Újezd I. 1302" was
missed after "is at"). Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def streets(detector: LocalPiiDetector, text: str) -> list[str]:
    return [span.value for span in detector.detect(text) if span.entity_type == "STREET_ADDRESS"]


@pytest.mark.parametrize(
    "text",
    [
        "During 2019, Brightwell Holdings invested heavily in solar farms.",
        "During 1987, Norvik Shipping doubled its fleet.",
        "Since 2004, Tallowmere Foods has grown every year.",
        "Until 2031, Quarrington Rail keeps the old timetable.",
    ],
)
def test_a_grammar_word_and_a_year_are_no_street(detector: LocalPiiDetector, text: str) -> None:
    assert streets(detector, text) == []


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("Send it to 7 Skovlunde Ring 41, please.", "7 Skovlunde Ring 41"),
        ("We moved to Vesterbring 18 last spring.", "Vesterbring 18"),
        ("Deliver to Via 20 Settembre 9, Ferrara.", "Via 20 Settembre"),
    ],
)
def test_streets_that_end_or_open_like_one_are_still_found(detector: LocalPiiDetector, text: str, street: str) -> None:
    assert street in streets(detector, text)


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("The viewing is at Dlouhá I. 1408 on Saturday.", "Dlouhá I. 1408"),
        ("The viewing is at Karla IV 17 on Saturday.", "Karla IV 17"),
        ("She lives at Hradní I 52.", "Hradní I 52"),
    ],
)
def test_a_roman_numeral_after_the_name_is_part_of_the_street(
    detector: LocalPiiDetector, text: str, street: str
) -> None:
    assert streets(detector, text) == [street]


@pytest.mark.parametrize("text", ["The meeting is at I. 5 today.", "So I 5 times said it.", "The test is at 9 A.M."])
def test_the_pronoun_before_a_number_is_no_street(detector: LocalPiiDetector, text: str) -> None:
    assert streets(detector, text) == []
