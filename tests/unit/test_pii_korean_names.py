"""Korean names in Latin letters: "Seo-yeon Park" and "Soo-ah Jung" were stored raw (spaCy reads "Park" and
"Jung" as words; the gazetteer holds Korean names in Hangul only). A hyphenated two-syllable given name of
Korean's form beside a common Korean surname is a person. Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.korean_names import korean_names
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("We hired Seo-yeon Park last week.", "Seo-yeon Park"),
        ("Please ring Soo-ah Jung tomorrow.", "Soo-ah Jung"),
        ("Park Seo-yeon called about the lease.", "Park Seo-yeon"),
        ("I had lunch with Kyung-soo Song yesterday.", "Kyung-soo Song"),
    ],
)
def test_a_romanised_korean_name_is_a_person(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert [span.value for span in detector.detect(text) if span.entity_type == "PERSON"] == [name]


@pytest.mark.parametrize(
    "text",
    [
        "Seo-yeon called.",  # a given name alone: most two-syllable compounds have the form
        "Visit the Pop-up Park on Sunday.",  # two English words joined
        "The Set-up Song is ready.",
        "SEO-YEON PARK",  # not a name's case
        "the Co-op Bank",
    ],
)
def test_compounds_and_other_cases_are_not_read_as_korean_names(text: str) -> None:
    assert korean_names(text) == []
