"""Phone numbers written in many countries' formats are found whole; other numbers are not phone numbers.

The cases in tests/fixtures/pii_formats.json were written by hand for this test, not taken from
pii-dev.json, so they check that the detector generalises beyond the file it is measured on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "pii_formats.json").read_text("utf-8"))
DETECTOR = RegexPiiDetector()


def phones_in(text: str) -> list[str]:
    return [span.value for span in DETECTOR.detect(text) if span.entity_type == "PHONE_NUMBER"]


@pytest.mark.parametrize("case", FIXTURE["phones"], ids=[case["phone"] for case in FIXTURE["phones"]])
def test_phone_numbers_in_international_formats_are_found_whole(case: dict[str, str]) -> None:
    assert phones_in(case["text"]) == [case["phone"]]


@pytest.mark.parametrize("text", FIXTURE["not_phones"])
def test_other_numbers_are_not_phone_numbers(text: str) -> None:
    assert phones_in(text) == []
