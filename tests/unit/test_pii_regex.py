"""RegexPiiDetector: validators (Luhn, IBAN mod-97, SSN rules) and what it finds or refuses in text."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.pii_regex import (
    RegexPiiDetector,
    credit_card_valid,
    iban_valid,
    ip_address_valid,
    luhn_valid,
    phone_number_plausible,
    ssn_valid,
)

DETECTOR = RegexPiiDetector()


def found(text: str) -> list[tuple[str, str]]:
    return [(span.entity_type, span.value) for span in DETECTOR.detect(text)]


def with_luhn_digit(prefix: str) -> str:
    """``prefix`` completed with the one check digit that makes it pass Luhn."""
    return next(prefix + digit for digit in "0123456789" if luhn_valid(prefix + digit))


# Validators


@pytest.mark.parametrize("number", ["79927398713", "4111111111111111", "378282246310005", "0"])
def test_luhn_accepts_published_valid_numbers(number: str) -> None:
    assert luhn_valid(number)


@pytest.mark.parametrize("number", ["79927398710", "4111111111111112", "378282246310006", "12a4", ""])
def test_luhn_rejects_wrong_check_digits_and_non_digits(number: str) -> None:
    assert not luhn_valid(number)


@pytest.mark.parametrize(
    "number",
    [
        "4111111111111111",  # Visa
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "5555555555554444",  # Mastercard
        "2223003122003222",  # Mastercard 2-series
        "378282246310005",  # American Express
        "3782 822463 10005",
        "6011111111111117",  # Discover
        "3530111333300000",  # JCB
        "30569309025904",  # Diners Club
        "6759649826438453",  # Maestro
    ],
)
def test_card_numbers_of_known_issuers_with_valid_luhn_are_accepted(number: str) -> None:
    assert credit_card_valid(number)


def test_card_numbers_are_rejected_for_bad_luhn_unknown_issuer_wrong_length_or_mixed_grouping() -> None:
    assert not credit_card_valid("4111111111111112")  # Luhn fails
    assert not credit_card_valid(with_luhn_digit("999999999999999"))  # no scheme starts with 9
    assert not credit_card_valid(with_luhn_digit("34000000000000"[:-1] + "00"))  # Amex is 15 digits, not 16
    assert not credit_card_valid("4111 1111-1111 1111")  # mixed separators
    assert not credit_card_valid("41 1111111111111 11")  # not printed like a card


@pytest.mark.parametrize(
    "iban",
    [
        "GB82WEST12345698765432",
        "GB82 WEST 1234 5698 7654 32",
        "DE89370400440532013000",
        "FR1420041010050500013M02606",
        "NO9386011117947",
        "gb82west12345698765432",
    ],
)
def test_registry_example_ibans_are_valid(iban: str) -> None:
    assert iban_valid(iban)


@pytest.mark.parametrize(
    "iban",
    [
        "GB82WEST12345698765433",  # one digit changed: mod-97 fails
        "GB28WEST12345698765432",  # check digits swapped
        "GB82WEST1234569876543",  # one character short for GB
        "XX82WEST12345698765432",  # not a country that issues IBANs
        "DE8937040044053201300",  # German IBANs have 22 characters
    ],
)
def test_ibans_with_bad_checksum_length_or_country_are_rejected(iban: str) -> None:
    assert not iban_valid(iban)


@pytest.mark.parametrize("between", [" and his is ", " and ", ", "])
def test_an_iban_right_after_a_short_one_is_found_too(between: str) -> None:
    # The first IBAN's grouped reading swallows the words after it; the second must still be read.
    text = f"Her IBAN is NO93 8601 1117 947{between}CH93 0076 2011 6238 5295 7."
    assert [(span.entity_type, span.value) for span in RegexPiiDetector().detect(text)] == [
        ("IBAN_CODE", "NO93 8601 1117 947"),
        ("IBAN_CODE", "CH93 0076 2011 6238 5295 7"),
    ]


@pytest.mark.parametrize(
    ("area", "group", "serial"),
    [("001", "01", "0001"), ("665", "99", "9999"), ("667", "12", "3456"), ("899", "45", "6789")],
)
def test_ssns_inside_the_issued_ranges_are_valid(area: str, group: str, serial: str) -> None:
    assert ssn_valid(area, group, serial)


@pytest.mark.parametrize(
    ("area", "group", "serial"),
    [
        ("000", "12", "3456"),  # area 000 never issued
        ("666", "12", "3456"),  # area 666 never issued
        ("900", "12", "3456"),  # 9xx are ITINs, not SSNs
        ("999", "12", "3456"),
        ("123", "00", "4567"),  # group 00
        ("123", "45", "0000"),  # serial 0000
        ("111", "11", "1111"),  # one repeated digit
        ("078", "05", "1120"),  # the Woolworth wallet card number
        ("12", "345", "6789"),  # wrong shape
    ],
)
def test_ssns_outside_the_ssa_rules_are_invalid(area: str, group: str, serial: str) -> None:
    assert not ssn_valid(area, group, serial)


def test_ip_validation_uses_real_address_rules() -> None:
    assert ip_address_valid("192.168.1.254")
    assert ip_address_valid("2001:db8::8a2e:370:7334")
    assert ip_address_valid("::ffff:10.0.0.1")
    assert not ip_address_valid("256.1.1.1")
    assert not ip_address_valid("01.2.3.4")  # leading zeros are ambiguous (octal)
    assert not ip_address_valid("2001:db8:::1")


# Detection in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("You said your email is ann.lee+news@mail.example.co.uk. Is that correct?",
         [("EMAIL_ADDRESS", "ann.lee+news@mail.example.co.uk")]),
        ("My website is https://www.example.be/path?q=1).", [("URL", "https://www.example.be/path?q=1")]),
        ("(see www.example.com/about)", [("URL", "www.example.com/about")]),
        ("My IBAN is GB82 WEST 1234 5698 7654 32 from now on",
         [("IBAN_CODE", "GB82 WEST 1234 5698 7654 32")]),
        ("wire it to de89370400440532013000.", [("IBAN_CODE", "de89370400440532013000")]),
        ("card # 4111-1111-1111-1111 expires", [("CREDIT_CARD", "4111-1111-1111-1111")]),
        ("keep getting address 41.173.96.26 blocked", [("IP_ADDRESS", "41.173.96.26")]),
        ("ping fe80::1ff:fe23:4567:890a%eth0 now", [("IP_ADDRESS", "fe80::1ff:fe23:4567:890a%eth0")]),
        ("Here's my SSN: 054-28-6917", [("US_SSN", "054-28-6917")]),
        ("my social security number is 054 28 6917", [("US_SSN", "054 28 6917")]),
    ],
)  # fmt: skip
def test_structured_identifiers_are_found_with_exact_boundaries(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    "phone",
    [
        "+1-984-182-0190",
        "(579)888-3058",
        "345-899-3560x4587",
        "001-518-640-0854",
        "+46 (0)8 928 571 38",
        "+447700 921 916",
        "+447700677662",
        "(+358) 40 2359256",
        "+(370) 39150008",
        "01.84.17.61.18",
        "0490 75 40 81",
        "(08) 8747 6301",
        "(06)91/417-7763",
        "5403926876",
        "467 3395",
        "28-64-66-98",
    ],
)
def test_phone_numbers_in_national_and_international_formats_are_found(phone: str) -> None:
    assert found(f"They're not answering at {phone}. Try again") == [("PHONE_NUMBER", phone)]


def test_solid_short_numbers_count_as_phones_only_after_phone_words() -> None:
    assert found("Order 39150008 shipped") == []
    assert found("Call me on 39150008 please") == [("PHONE_NUMBER", "39150008")]


@pytest.mark.parametrize(
    "text",
    [
        "When: 2000-04-16 11:34:35",  # date and time
        "Born 16.04.1992 in Oslo",  # dotted date
        "It's like that since 2/16/1942",  # slashed date
        "Between 1990-2005 we grew",  # range of years
        "Send it to Beverly Hills, CA 90210-1234",  # ZIP+4
        "Quinta de São Tiago 3610-114 in Portugal",  # Portuguese postal code
        "The ratio was 1234.5678 exactly",  # decimal number
        "It costs 7 931 414.99 in total",  # amount with thousands and cents
        "ISBN 978-1-4660-0166-4 is out of print",  # ISBN-13
        "The letter arrived at 636 1812 Rue De La Gare",  # house number and numbered street
        "Address: 5533 119 Countess Close",
        "His number is 123-45-6789",  # SSN shape but a published example number
        "Area 900-12-3456 is not an SSN",  # SSN shape, area never issued
        "Version 1.2.3.4.5 was released",  # dotted but not an address
        "Meeting at 12:30:45 sharp",  # time, not IPv6
        "Transfer GB82WEST12345698765433 failed",  # IBAN with a wrong check digit
        "Invoice 4111111111111112 is overdue",  # card-like number failing Luhn
    ],
)
def test_numbers_that_are_not_pii_of_these_types_are_ignored(text: str) -> None:
    assert found(text) == []


def test_validated_identifiers_are_never_also_read_as_phone_numbers() -> None:
    text = "SSN 853-37-1694, card 3782 822463 10005, host 86.121.97.248"
    assert [entity_type for entity_type, _ in found(text)] == ["US_SSN", "CREDIT_CARD", "IP_ADDRESS"]


def test_phone_labels_after_short_numbers_do_not_hide_them() -> None:
    text = "781 1704 office\n416 60 039 fax\n"
    assert found(text) == [("PHONE_NUMBER", "781 1704"), ("PHONE_NUMBER", "416 60 039")]


def test_phone_shape_rules_need_seven_to_fifteen_digits() -> None:
    assert phone_number_plausible("+1 555 123 4567")
    assert not phone_number_plausible("123 456")
    assert not phone_number_plausible("+1 234 567 890 123 456")


def test_spans_carry_exact_offsets_into_the_text() -> None:
    text = "Ünïcødé first: ann@example.com then +41 (0)69 979 80 58!"
    for span in DETECTOR.detect(text):
        assert text[span.start : span.end] == span.value
    assert len(DETECTOR.detect(text)) == 2
