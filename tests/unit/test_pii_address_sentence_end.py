"""A street address ends where its sentence does, runs on past an abbreviation's full stop, and the town after
it is a place even where spaCy does not read one.

"He lives at 12 Oak Street. Mary is great." was masked as one address, "12 Oak Street. Mary", so the
model read "lives at <address> is great"; "123 Main St. Apt 4B, Springfield, IL 62704" was cut at "Apt",
so the flat's number and the ZIP code were stored raw. Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def addresses(detector: LocalPiiDetector, text: str) -> list[str]:
    return [span.value for span in detector.detect(text) if span.entity_type == "STREET_ADDRESS"]


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("She lives at 14 Quillon Street. Maren is great.", "14 Quillon Street"),
        ("He lives at Vorlandstraße 318. Berghaus is the landlord.", "Vorlandstraße 318"),
        ("Send it to 27 Rue des Vautriers. Paris is lovely.", "27 Rue des Vautriers"),
    ],
)
def test_an_address_ends_at_the_end_of_its_sentence(detector: LocalPiiDetector, text: str, address: str) -> None:
    assert addresses(detector, text) == [address]


@pytest.mark.parametrize(
    "text",
    [
        "Ship to 4471 Quillon St. Apt 7C, Marrowfield, IL 62791",
        "Send it to 872 Vesper Ave. Suite 318, Dunmore, TX 78744",
    ],
)
def test_an_address_runs_on_past_an_abbreviations_full_stop(detector: LocalPiiDetector, text: str) -> None:
    assert addresses(detector, text) == [text[text.index(" to ") + 4 :]]


@pytest.mark.parametrize(
    ("text", "town"),
    [
        ("Send it to 14 Quillon Street, Dunvarrow H91 X2Y3 please.", "Dunvarrow"),
        ("My office is 9 Vesper Road, Kilbrannagh T12 K4P8.", "Kilbrannagh"),
    ],
)
def test_a_town_spacy_does_not_read_after_a_street_is_a_place(detector: LocalPiiDetector, text: str, town: str) -> None:
    assert ("LOCATION", town) in {(span.entity_type, span.value) for span in detector.detect(text)}
