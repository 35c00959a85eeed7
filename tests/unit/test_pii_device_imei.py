"""A phone's IMEI: fifteen digits passing Luhn, found alone in the groupings phones print, and written solid
only near "IMEI", "serial" or "device id"; a card number of fifteen digits stays a card. Every number here
is made up (its check digit computed with python-stdnum's ``luhn``)."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.domain.pii import KNOWN_ENTITY_TYPES, format_token


def found(text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in RegexPiiDetector().detect(text)}


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("my phone's IMEI is 35-209900-176148-1", "35-209900-176148-1"),
        ("IMEI: 352099001761481", "352099001761481"),
        ("imei 35 209900 176148 1.", "35 209900 176148 1"),
        ("Device ID: 861234567890127", "861234567890127"),
        ("serial number 012345678901237 on the box", "012345678901237"),
        ("352099001761481 is the old phone's IMEI", "352099001761481"),
        # The groupings alone: as phones show them, and the older TAC-FAC-serial-check.
        ("it is 86-123456-789012-7, I checked", "86-123456-789012-7"),
        ("35209900-176148-1", "35209900-176148-1"),
        ("352099-00-176148-1", "352099-00-176148-1"),
        # Starting like a Diners Club card, but grouped as an IMEI is: no card is grouped 2-6-6-1.
        ("IMEI 30-123456-789012-5", "30-123456-789012-5"),
    ],
)
def test_an_imei_is_found_in_its_grouping_or_near_its_name(text: str, number: str) -> None:
    assert found(text) == {("IMEI", number)}


@pytest.mark.parametrize(
    "text",
    [
        # Fifteen digits passing Luhn, solid, with no word naming a device: an order, a reference.
        "order 352099001761481 shipped",
        "the reference 490154203237518 is in the email",
        "his number 861234567890127",
        # The name, but the check digit is wrong.
        "IMEI: 352099001761482",
        "my phone's IMEI is 35-209900-176148-2",
        # The name on another line is not this number's.
        "IMEI below\n352099001761481",
        # Fourteen and sixteen digits; and separators of two kinds.
        "IMEI 35209900176148",
        "IMEI 3520990017614815",
        "35 209900-176148 1",
    ],
)
def test_other_fifteen_digit_numbers_are_no_imei(text: str) -> None:
    assert "IMEI" not in {kind for kind, _ in found(text)}


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("card 378282246310005", "378282246310005"),
        ("Amex 3782 822463 10005, exp 09/29", "3782 822463 10005"),
        # A card wins a number both read: masked either way, a card's type is the one not to lose.
        ("IMEI 378282246310005", "378282246310005"),
    ],
)
def test_a_fifteen_digit_card_stays_a_card(text: str, card: str) -> None:
    assert found(text) == {("CREDIT_CARD", card)}


def test_an_imei_is_a_known_type_with_a_token_type_of_its_own() -> None:
    # Every detector's types are known ones (tests/contract): a span of an unknown type breaks the contract.
    assert "IMEI" in KNOWN_ENTITY_TYPES
    assert format_token("IMEI", "3f9a1c2b", 1) == "{{PII_IMEI_3f9a1c2b_1}}"
