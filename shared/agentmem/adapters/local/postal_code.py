"""A Presidio pattern recognizer for a postal code the words before it name ("my zip code is 76400").

Postal codes inside a street address are part of the STREET_ADDRESS span (``street_address``); alone,
a number is a postal code only when it is introduced as one: "zip code is", "ZIP:", "postal code",
"postcode". The code itself may be written as in the US (76400, 76400-1234), Brazil (75534-030),
Sweden (394 13), the Netherlands (7412 SL), the UK (SW1A 1AA) or Canada (K1A 0B1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from presidio_analyzer import PatternRecognizer

ZIP_CODE = "ZIP_CODE"

_CUE = r"\b(?i:zip(?:[ \t]?code)?|postal[ \t]?code|post[ \t]?code)(?:[ \t]+(?i:is|was))?[ \t]*[:#]?[ \t]*"
_CODE = (
    r"(?:\d{3,5}(?:[ \t-]\d{2,4})?(?:[ \t][A-Z]{2})?"
    r"|[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}"
    r"|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d)"
)


def build_recognizer() -> PatternRecognizer:
    """Presidio's ``PatternRecognizer`` for ZIP_CODE after its cue."""
    import regex
    from presidio_analyzer import Pattern, PatternRecognizer

    return PatternRecognizer(
        supported_entity=ZIP_CODE,
        name="PostalCodeRecognizer",
        patterns=[Pattern("after its name", rf"(?<={_CUE}){_CODE}(?![\p{{L}}\d])", 0.8)],
        global_regex_flags=regex.MULTILINE,
    )
