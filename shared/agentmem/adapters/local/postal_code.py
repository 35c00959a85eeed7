"""A Presidio pattern recognizer for a postal code the words before it name ("my zip code is 76400").

Postal codes inside a street address are part of the STREET_ADDRESS span (``street_address``); alone,
a number is a postal code only when it is introduced as one: "zip code is", "ZIP:", "postal code",
"postcode". The code itself may be written as in the US (76400, 76400-1234), Brazil (75534-030),
Sweden (394 13), the Netherlands (7412 SL), the UK (SW1A 1AA) or Canada (K1A 0B1). An Irish Eircode, a
UK or a Canadian postcode is found without a cue too: their shapes are their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from presidio_analyzer import PatternRecognizer

ZIP_CODE = "ZIP_CODE"

_CUE = (
    r"\b(?i:zip(?:[ \t]?code)?|postal[ \t]?code|post[ \t]?code|eircode|code[ \t]postal|plz|cep|postnummer"
    r"|postinumero|codice[ \t]postale|c[oó]digo[ \t]postal)(?:[ \t]+(?i:is|was))?[ \t]*[:#]?[ \t]*"
)
# A word every name of `_CUE` holds.
_CUE_WORDS = ("zip", "post", "eircode", "plz", "cep")
# Postcodes whose shape is their own, found without a cue: Ireland's Eircode (a routing key, then four
# characters of a reduced alphabet: "D02 X285", "A65F4E2"), the UK's ("SW1A 1AA", "M1 1AE") and Canada's
# ("K1A 0B1"). A shape is not enough where a code is digits only: those need the cue above.
_EIRCODE = r"(?:[AC-FHKNPRTV-Y]\d{2}|D6W)[ \t]?[0-9AC-FHKNPRTV-Y]{4}"
_UK_POSTCODE = r"(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]?)[ \t]\d[ABD-HJLNP-UW-Z]{2}"
_CA_POSTCODE = r"[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z][ \t]?\d[ABCEGHJ-NPRSTV-Z]\d"
_CODE = (
    r"(?:\d{3,5}(?:[ \t-]\d{2,4})?(?:[ \t][A-Z]{2})?"
    r"|[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}"
    r"|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d)"
)


def build_recognizer() -> PatternRecognizer:
    """Presidio's ``PatternRecognizer`` for ZIP_CODE after its cue."""
    import regex
    from presidio_analyzer import PatternRecognizer

    from agentmem.adapters.local.pattern_guards import GuardedPattern, all_of, has_any_word, has_digit

    flags = regex.MULTILINE
    # Every code has a digit, and one after its name needs a word of the name: other texts are not searched.
    return PatternRecognizer(
        supported_entity=ZIP_CODE,
        name="PostalCodeRecognizer",
        patterns=[
            GuardedPattern("after its name", rf"(?<={_CUE})(?:{_CODE}|{_EIRCODE})(?![\p{{L}}\d])", 0.8,
                           flags=flags, could_match=all_of(has_digit, has_any_word(_CUE_WORDS))),
            GuardedPattern(
                "by its shape", rf"(?<![\p{{L}}\d])(?:{_EIRCODE}|{_UK_POSTCODE}|{_CA_POSTCODE})(?![\p{{L}}\d])", 0.6,
                flags=flags, could_match=has_digit,
            ),
        ],
        global_regex_flags=flags,
    )
