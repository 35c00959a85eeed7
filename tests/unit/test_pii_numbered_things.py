"""A number right after a thing that is numbered is an identifier, not a phone ("build 0057417069 failed",
"row 6526293924 in the export"), unless the words before also say phone. The rule is the structured
detector's, so it holds on both backends. Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector


def phones(text: str) -> list[str]:
    return [span.value for span in RegexPiiDetector().detect(text) if span.entity_type == "PHONE_NUMBER"]


@pytest.mark.parametrize(
    "text",
    [
        "build 0061827354 failed on the runner",
        "row 7184402936 in the export is empty",
        "ticket #4471209933 is closed",
        "the job 5193370264 ran twice",
        "Booking no. 8264019357 confirmed",
    ],
)
def test_a_numbered_thing_s_number_is_no_phone(text: str) -> None:
    assert phones(text) == []


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("Call the patient 0871936245 today", "0871936245"),  # the words before say phone
        ("Ring me on 0871936245 after six.", "0871936245"),
        ("my number 4155550187", "4155550187"),
        ("home 0871936245, work 0861936245", "0871936245"),
        ("text 4155550187 when the build is done", "4155550187"),  # "build" after the number
    ],
)
def test_phones_stay_phones(text: str, phone: str) -> None:
    assert phone in phones(text)
