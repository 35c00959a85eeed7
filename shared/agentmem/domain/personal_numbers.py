"""Which JSON numbers are personal data: a payment card or a phone number written as a bare integer.

A text detector sees "5227183490615382" inside a sentence; an item value such as
`{"card": 5227183490615382}` holds it as a number, which no text detector is ever shown. The items
path asks this module about every integer of a value and stores the ones it names as token strings.

The rules are deliberately narrow, because a false alarm turns a number into a string for good:
- a card: 12 to 19 digits, a known issuer prefix and length, and a valid Luhn sum (an order number is
  rarely all three);
- a phone: 10 to 15 digits that libphonenumber holds valid as an international number (`+` and the
  digits: a JSON integer has no leading `+` or `0`, so the country code comes first). Timestamps in
  seconds or milliseconds, counters and amounts are not valid numbering-plan numbers.
"""

from __future__ import annotations

import phonenumbers

CARD = "CREDIT_CARD"
PHONE = "PHONE_NUMBER"

# Issuer identification ranges: (lowest prefix, highest prefix, allowed lengths). The same ranges as
# the local text detector's (adapters/local/pii_regex.py), kept here because the domain imports no adapter.
_CARD_RANGES: tuple[tuple[str, str, frozenset[int]], ...] = (
    ("4", "4", frozenset({13, 16, 19})),  # Visa
    ("51", "55", frozenset({16})),  # Mastercard
    ("2221", "2720", frozenset({16})),  # Mastercard 2-series
    ("2200", "2204", frozenset({16, 17, 18, 19})),  # Mir
    ("34", "34", frozenset({15})),  # American Express
    ("37", "37", frozenset({15})),  # American Express
    ("300", "305", frozenset(range(14, 20))),  # Diners Club
    ("36", "36", frozenset(range(14, 20))),  # Diners Club
    ("38", "39", frozenset(range(14, 20))),  # Diners Club
    ("35", "35", frozenset(range(16, 20))),  # JCB
    ("6011", "6011", frozenset(range(16, 20))),  # Discover
    ("644", "649", frozenset(range(16, 20))),  # Discover
    ("65", "65", frozenset(range(16, 20))),  # Discover, RuPay
    ("62", "62", frozenset(range(16, 20))),  # UnionPay
    ("60", "60", frozenset(range(16, 20))),  # RuPay
    ("50", "50", frozenset(range(12, 20))),  # Maestro, Verve
    ("56", "69", frozenset(range(12, 20))),  # Maestro and other debit schemes
)


def luhn_valid(digits: str) -> bool:
    """True when a string of digits passes the Luhn (mod 10) checksum of payment cards."""
    if not digits.isdigit():
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def is_card_number(digits: str) -> bool:
    """True for 12-19 digits with a known issuer prefix and length and a valid Luhn sum."""
    if not digits.isdigit() or not 12 <= len(digits) <= 19:
        return False
    issuer = any(len(digits) in lengths and low <= digits[: len(low)] <= high for low, high, lengths in _CARD_RANGES)
    return issuer and luhn_valid(digits)


def is_international_phone(digits: str) -> bool:
    """True for 10-15 digits that are a valid phone number once read as `+<digits>` (E.164)."""
    if not digits.isdigit() or not 10 <= len(digits) <= 15:
        return False
    try:
        parsed = phonenumbers.parse("+" + digits, None)
    except phonenumbers.NumberParseException:
        return False
    return bool(phonenumbers.is_valid_number(parsed))


def personal_number_type(value: object) -> str | None:
    """The entity type (Presidio's name) of a JSON integer that is a card or a phone number, else None.

    Booleans, floats and negative numbers are never personal numbers here.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    digits = str(value)
    if is_card_number(digits):
        return CARD
    if is_international_phone(digits):
        return PHONE
    return None
