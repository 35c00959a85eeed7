"""Irish-language street types before the street's name, which Faker's address providers never write: a
"Bóthar" address was stored raw when the service was called from outside. Every value is made up here."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("Write to them at 52 Bóthar an Chladaigh, phone later", "52 Bóthar an Chladaigh"),
        ("I live at 8 Sráid na Siopaí, Gaillimh.", "8 Sráid na Siopaí"),
        ("Send it to 3 Ascaill Uí Néill", "3 Ascaill Uí Néill"),
    ],
)
def test_an_irish_street_type_with_its_link_words_is_one_address(
    detector: LocalPiiDetector, text: str, street: str
) -> None:
    assert ("STREET_ADDRESS", street) in {(span.entity_type, span.value) for span in detector.detect(text)}


def test_an_irish_street_word_alone_is_no_address(detector: LocalPiiDetector) -> None:
    assert not any(span.entity_type == "STREET_ADDRESS" for span in detector.detect("the Bealach was closed"))
