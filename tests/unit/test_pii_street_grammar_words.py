"""A word of English grammar before a number is no street, though it may end like one ("During" like the
Nordic "-ring"): "During 2019, Brightwell Holdings ..." was masked as an address. Street types that are such
words still open streets. Every value here is made up for this file."""

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
