"""A fast local detector for structured personal identifiers.

It finds e-mail addresses, URLs, IBANs, payment card numbers, US social security numbers,
IP addresses and phone numbers with regular expressions, and keeps a candidate only when it
passes the identifier's own rules: the Luhn checksum and issuer prefixes for cards, mod-97 and
the registry length for IBANs, the SSA's area/group/serial rules for SSNs, the stdlib
``ipaddress`` parser for IPs. Phone numbers have no checksum, so candidates are read against
the shapes numbers are written in (country code, trunk prefix in parentheses, digit groups,
extension) and rejected when they are dates, decimals, ZIP+4 codes or other identifiers. A
number with a country code must start with a calling code that exists, by Google's
libphonenumber (``phonenumbers``; its length rules are not applied: a number written with a
code but a digit too many or too few is still someone's number to mask). An 11-digit number
that python-stdnum validates as a national identity number with two check digits (Brazil's
CPF, Norway's fodselsnummer) is not read as a phone number unless the
words around it say so. National identity, passport and driving licence numbers are ``national_ids``'
(python-stdnum's validators), bank accounts and routing codes ``bank_accounts``', passwords, PINs, user
names and AWS keys ``credentials``', MAC and bitcoin addresses and IMEIs ``device_and_wallet``', e-mail
addresses written out ("wei at qq dot com") ``written_emails``', @handles ``social_handles``'. Names, addresses
and other free-text entities need a model (see ``presidio_pii`` locally, the Comprehend adapter on AWS).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from collections.abc import Iterator

import phonenumbers
from stdnum.br import cpf
from stdnum.no import fodselsnummer

from agentmem.adapters.local.bank_accounts import ABA_ROUTING_NUMBER, US_BANK_NUMBER, bank_account_spans
from agentmem.adapters.local.credentials import (
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    PASSWORD,
    PIN,
    USERNAME,
    credential_spans,
)
from agentmem.adapters.local.device_and_wallet import CRYPTO, IMEI, MAC_ADDRESS, device_and_wallet_spans
from agentmem.adapters.local.national_ids import (
    NAMED_ID_SCORE,
    NATIONAL_ID,
    PASSPORT,
    US_DRIVER_LICENSE,
    driving_licence_spans,
    national_id_spans,
    nino_spans,
    passport_spans,
)
from agentmem.adapters.local.social_handles import social_handle_spans
from agentmem.adapters.local.written_emails import written_email_spans
from agentmem.domain.pii import PiiSpan, drop_overlapping, resolve_overlaps

EMAIL_ADDRESS = "EMAIL_ADDRESS"
URL = "URL"
IBAN_CODE = "IBAN_CODE"
CREDIT_CARD = "CREDIT_CARD"
IP_ADDRESS = "IP_ADDRESS"
US_SSN = "US_SSN"
PHONE_NUMBER = "PHONE_NUMBER"

# IBAN lengths per country from the SWIFT IBAN registry; a candidate from a country that does
# not issue IBANs, or of the wrong length, is not an IBAN whatever its checksum says.
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip

# Issuer identification number ranges: (lowest prefix, highest prefix, allowed lengths).
# A Luhn-valid number outside every range is more likely an order or account number.
_CARD_RANGES: tuple[tuple[str, str, frozenset[int]], ...] = (
    ("4", "4", frozenset({13, 16, 19})),  # Visa
    ("51", "55", frozenset({16})),  # Mastercard
    ("2221", "2720", frozenset({16})),  # Mastercard 2-series
    ("2200", "2204", frozenset({16, 17, 18, 19})),  # Mir
    ("34", "34", frozenset({15})),  # American Express
    ("37", "37", frozenset({15})),  # American Express
    ("300", "305", frozenset(range(14, 20))),  # Diners Club
    ("3095", "3095", frozenset(range(14, 20))),  # Diners Club
    ("36", "36", frozenset(range(14, 20))),  # Diners Club
    ("38", "39", frozenset(range(14, 20))),  # Diners Club
    # JCB issues 3528-3589; the rest of 35 is accepted too because card generators (Faker)
    # draw JCB numbers from the whole 35 range.
    ("35", "35", frozenset(range(16, 20))),  # JCB
    ("1800", "1800", frozenset({15})),  # JCB (legacy)
    ("2131", "2131", frozenset({15})),  # JCB (legacy)
    ("1", "1", frozenset({15})),  # UATP
    ("6011", "6011", frozenset(range(16, 20))),  # Discover
    ("644", "649", frozenset(range(16, 20))),  # Discover
    ("65", "65", frozenset(range(16, 20))),  # Discover, RuPay
    ("62", "62", frozenset(range(16, 20))),  # UnionPay
    ("60", "60", frozenset(range(16, 20))),  # RuPay
    ("50", "50", frozenset(range(12, 20))),  # Maestro, Verve
    ("56", "69", frozenset(range(12, 20))),  # Maestro and other debit schemes
    ("0604", "0604", frozenset(range(12, 20))),  # Maestro (old range)
)

_SSN_CONTEXT = re.compile(r"\b(?:ssn|ss#|ss no|social security|soc\.? ?sec)", re.IGNORECASE)
_SSN_CONTEXT_WINDOW = 60
# Numbers the SSA never issued or that were published as examples and so are not anyone's.
_SSN_NEVER_ISSUED = frozenset({"078051120", "219099999", "123456789"})

_COUNTRY_CODE_PREFIX = re.compile(r"(?:\+\d{1,3}|\+\(\d{1,3}\)|\(\+\d{1,3}\))[ .-]?")
_AREA_CODE_PREFIX = re.compile(r"\(\d{1,5}\)(?:[ .-]|/ ?)?")
_PHONE_CONTEXT_WINDOW = 40
_PHONE_CONTEXT = re.compile(
    r"\b(?:phone|tel|telephone|call|fax|mobile|cell|contact|dial|ring|text|sms|whatsapp|reach|desk|"
    r"office|landline|messag|answer)",
    re.IGNORECASE,
)
# A label straight after the number ("963000037-Fax", "781 1704 office") names it as well.
_PHONE_LABEL_AFTER = re.compile(
    r"[ \t]*[-(]?[ \t]*(?:office|fax|mobile|cell|home|work|tel|phone|desk|landline|direct|main)\b"
    # "64286476 is the number for the clinic", "... is my mobile"
    r"|[ \t]+(?:is|was)[ \t]+(?:the|my|our|his|her|their|your)[ \t]+(?:new[ \t]+)?"
    r"(?:number|phone|mobile|cell|landline|fax|office)\b",
    re.IGNORECASE,
)
_OTHER_NUMBER_CONTEXT = re.compile(
    r"\b(?:licen[cs]e|passport|account|acct|invoice|order|reference|ref|serial|zip|postal|postcode|"
    r"post code|iban|ssn|social security|tracking|policy|id)\b",
    re.IGNORECASE,
)
# A thing that is numbered, right before the number, names an identifier: "build 0057417069 failed", "row
# 6526293924 in the export", "ticket #4471209933" (unless the words before also say phone).
_NUMBERED_THING_BEFORE = re.compile(
    r"\b(?:build|row|ticket|case|job|batch|commit|issue|item|record|entry|version|release|revision|sku|part|lot"
    r"|receipt|transaction|booking|reservation|confirmation|shipment|parcel|package|customer|member|employee"
    r"|student|patient|claim|incident|request|page|table|file|run|step|task|port|pid|process|sample|test|unit)"
    r"[ \t]*(?:#|no\.?|nr\.?|number|id)?[ \t]*:?[ \t]*$",
    re.IGNORECASE,
)
_NEXT_WORD = re.compile(r"[ \t]+([^\W\d_][\w'-]*)")
_WORDS_AFTER_PHONE_NUMBERS = frozenset(
    {
        "office", "fax", "mobile", "cell", "home", "work", "tel", "phone", "landline", "direct",
        "main", "private", "business", "ext", "extension", "or", "and", "to", "if", "for", "at",
        "before", "after", "between", "until", "from", "on", "is", "was", "please", "thanks",
        "thank", "today", "tomorrow", "tonight", "anytime", "i", "we", "you", "it", "but", "then",
        "when", "so", "now", "instead", "again",
    }
)  # fmt: skip

_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w%+-](?:[\w.%+-]*[\w%+-])?"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?![\w-])"
)
_URL = re.compile(r"(?<![\w@])(?:(?:https?|ftp)://|www\.)[^\s<>\"'`{}|\\^]+", re.IGNORECASE)
_URL_TRAILING = ".,;:!?'\"*"
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ ]?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])")
_CARD = re.compile(r"(?<![\w.-])\d(?:[ -]?\d){11,18}(?!\w|[.-]\d)")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)")
_IPV6 = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|\d{1,3}(?:\.\d{1,3}){3})?"
    r"(?:%[\w.]+)?(?![\w:])"
)
_SSN = re.compile(r"(?<![\w.-])(\d{3})([- .]?)(\d{2})\2(\d{4})(?!\w|[.-]\d)")
_PHONE = re.compile(
    r"(?<![\w@+./#-])"
    r"(?P<number>"
    r"(?:(?:\+\d{1,3}|\+\(\d{1,3}\)|\(\+\d{1,3}\))[ .-]?)?"  # country code: +46, +(370), (+358)
    r"(?:\(\d{1,5}\)(?:[ .-]|/ ?)?)?"  # area code or the (0) trunk prefix
    r"\d{1,14}(?:(?:[ .-]|/ ?)\d{1,14}){0,7}"
    r")"
    r"(?P<extension>[ ]?(?:x|ext\.?|\#)[ ]?\d{1,6})?"
    r"(?!\w|[.\-:/]\d|-[Xx]\b)"
)


def luhn_valid(digits: str) -> bool:
    """True when a string of digits passes the Luhn (mod 10) checksum used by payment cards."""
    if not digits.isdigit():
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def card_issuer_known(digits: str) -> bool:
    """True when the number's prefix and length belong to a payment card scheme."""
    return any(len(digits) in lengths and low <= digits[: len(low)] <= high for low, high, lengths in _CARD_RANGES)


def credit_card_valid(candidate: str) -> bool:
    """True for a card number (spaces or dashes allowed) with a known issuer and a valid Luhn sum."""
    digits = re.sub(r"[ -]", "", candidate)
    if not digits.isdigit() or not 12 <= len(digits) <= 19:
        return False
    separators = set(re.findall(r"[ -]", candidate))
    if len(separators) > 1:
        return False
    if separators:
        groups = re.split(r"[ -]", candidate)
        # Printed card numbers start with a group of four and use groups of three to six.
        if len(groups[0]) != 4 or any(not 3 <= len(group) <= 6 for group in groups[:-1]):
            return False
    return card_issuer_known(digits) and luhn_valid(digits)


def iban_valid(candidate: str) -> bool:
    """True for an IBAN (spaces allowed) with a registered country, its length and mod-97 == 1."""
    compact = candidate.replace(" ", "").upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]+", compact):
        return False
    if IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def ssn_valid(area: str, group: str, serial: str) -> bool:
    """True when an SSN's parts follow the SSA's rules.

    Area 000, 666 and 900-999, group 00 and serial 0000 are never issued; numbers of one
    repeated digit and published example numbers are not anyone's either.
    """
    number = area + group + serial
    if not (len(area) == 3 and len(group) == 2 and len(serial) == 4 and number.isdigit()):
        return False
    if area in {"000", "666"} or area.startswith("9") or group == "00" or serial == "0000":
        return False
    return len(set(number)) > 1 and number not in _SSN_NEVER_ISSUED


def ip_address_valid(candidate: str) -> bool:
    """True for an IPv4 or IPv6 address as the stdlib parses it (no leading zeros in IPv4)."""
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        return False
    return True


def _is_calendar_date(year: str, month: str, day: str) -> bool:
    if len(year) != 4 or not 1900 <= int(year) <= 2099:
        return False
    try:
        dt.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def phone_number_plausible(number: str, context_says_phone: bool = False) -> bool:
    """True when a candidate is written like a phone number rather than another kind of number.

    ``number`` excludes any extension. It needs 7 to 15 digits (E.164 allows 15). Written solid,
    without a country code or parentheses, it must have 10 digits, or 11 starting with 0 or 1,
    or any length when ``context_says_phone``. Without a country code or area code, numbers of
    7-8 digits must be grouped in twos to fours, as local numbers are, and dates, decimals
    (unless ``context_says_phone``) and amounts, dotted quads, ISBNs, postal codes, year
    ranges and the SSN shape are rejected.
    """
    digits = re.sub(r"\D", "", number)
    if not 7 <= len(digits) <= 15:
        return False
    country_code = _COUNTRY_CODE_PREFIX.match(number)
    body = number[country_code.end() :] if country_code else number
    area_code = _AREA_CODE_PREFIX.match(body)
    local_part = body[area_code.end() :] if area_code else body
    groups = re.split(r"[ .-]|/ ?", local_part)
    has_prefix = country_code is not None or area_code is not None

    if not has_prefix and not context_says_phone and len(digits) == 11 and _national_identity_number(digits):
        return False  # 05828815105 or 058.288.151-05: a CPF, not a number to call
    if len(groups) == 1 and not has_prefix:
        # Eleven solid digits are a phone number with a trunk or country prefix (0..., 1...);
        # otherwise they are more often a national identity number (PESEL, CPF, fodselsnummer).
        # Ten solid digits start with a trunk 0 or are a North American number (area and exchange
        # codes start 2-9); "1431149752" is a row or order number.
        if context_says_phone:
            return True
        return (len(digits) == 10 and _ten_digits_dialable(digits)) or (len(digits) == 11 and digits[0] in "01")
    if not has_prefix and not context_says_phone:
        if len(digits) > 11 and digits[0] != "0":
            return False  # "7661 7764 3166": twelve digits or more without a code or trunk 0 are no number to dial
        if len(groups) >= 3 and digits[0] != "0" and any(len(group) > 4 for group in groups[1:]):
            # "758-5946-142234": after the first, phone groups are of two to four digits, unless the
            # number starts with a trunk 0 (Austria writes "0512 43676 383")
            return False
    if sum(len(group) == 1 for group in groups) > 2:
        return False
    if len(groups[-1]) == 1:
        return False  # a check digit on its own (ISBN-10 8105-7479-1, licence numbers); numbers end in a group
    if country_code is not None:
        return _possible_international_number(number)
    if has_prefix:
        return True
    # Local numbers are grouped in twos to fours; a one-digit group inside ("612 6 291") only when the
    # words around say phone.
    shortest = 1 if context_says_phone else 2
    if len(digits) < 9 and any(not shortest <= len(group) <= 4 for group in groups):
        return False
    return not _looks_like_other_number(groups, re.findall(r"[ .-]|/", local_part), context_says_phone)


def _ten_digits_dialable(digits: str) -> bool:
    """Ten digits written solid: a national number with its trunk 0, or a NANP number (NXX NXX XXXX)."""
    return digits[0] == "0" or (digits[0] in "23456789" and digits[3] in "23456789")


def _possible_international_number(number: str) -> bool:
    """True when libphonenumber knows the calling code ``+CC`` that ``number`` starts with."""
    # "+46 (0)8 ..." writes the national trunk prefix in parentheses; it is not dialled after the code.
    written = number.replace("(0)", " ").replace("(", " ").replace(")", " ")
    try:
        parsed = phonenumbers.parse(written, None)
    except phonenumbers.NumberParseException:
        return False
    reason = phonenumbers.is_possible_number_with_reason(parsed)
    return bool(reason != phonenumbers.ValidationResult.INVALID_COUNTRY_CODE)


def _national_identity_number(digits: str) -> bool:
    """True for eleven digits that validate as a CPF or a fodselsnummer.

    Both carry two check digits, so about one phone number in a hundred passes by chance; schemes
    with one check digit and a birth date (PESEL, isikukood) pass one Japanese mobile number in ten.
    """
    return any(scheme.is_valid(digits) for scheme in (cpf, fodselsnummer))


def _is_short_date(six_digits: str) -> bool:
    for year, month, day in (
        (six_digits[:2], six_digits[2:4], six_digits[4:]),
        (six_digits[4:], six_digits[2:4], six_digits[:2]),
    ):
        try:
            dt.date(2000 + int(year), int(month), int(day))
        except ValueError:
            continue
        return True
    return False


def _isbn_valid(digits: str) -> bool:
    if len(digits) == 13 and digits[:3] in {"978", "979"}:
        return sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits)) % 10 == 0
    if len(digits) == 10:
        return sum(int(d) * (10 - i) for i, d in enumerate(digits)) % 11 == 0
    return False


def _looks_like_other_number(groups: list[str], separator_list: list[str], context_says_phone: bool) -> bool:
    lengths = tuple(len(group) for group in groups)
    separators = set(separator_list)
    if len(groups) == 2 and separators == {"."} and not context_says_phone:
        return True  # a decimal number
    if len(separators) > 1 and separator_list[-1] == "." and lengths[-1] == 2:
        return True  # an amount with grouped thousands and cents: 7 931 414.99
    if separators == {"-"} and len(groups) in {4, 5} and _isbn_valid("".join(groups)):
        return True
    if len(groups) == 4 and separators == {"."} and all(length <= 3 for length in lengths):
        return True  # a dotted quad, left to the IP detector
    if separators == {"-"} and lengths in {(5, 4), (4, 3), (3, 2, 4)}:
        return True  # US ZIP+4 or Portuguese postal code, or an SSN's shape
    if separators == {"-"} and lengths == (6, 4) and _is_short_date(groups[0]):
        return True  # Nordic personal identity number: YYMMDD-NNNN or DDMMYY-NNNN
    if len(groups) == 2 and separators <= {"-", "/"} and all(1900 <= int(g) <= 2099 for g in groups):
        return True  # a range of years
    if len(groups) == 3 and len(separators) == 1:
        first, second, third = groups
        return (
            _is_calendar_date(first, second, third)
            or _is_calendar_date(third, second, first)
            or _is_calendar_date(third, first, second)
        )
    return False


def _iban_spans(text: str) -> Iterator[PiiSpan]:
    position = 0
    while (match := _IBAN.search(text, position)) is not None:
        candidate = match.group(0)
        # Grouped IBANs can swallow what follows (a short word, a number, the next IBAN: "NO93 8601 1117
        # 947 and his is CH93 ..."); try shorter readings, then look again right after the one found.
        position = match.start() + 1
        while candidate:
            if iban_valid(candidate):
                start = match.start()
                yield PiiSpan(IBAN_CODE, start, start + len(candidate), candidate, 1.0)
                position = start + len(candidate)
                break
            if " " not in candidate:
                break
            candidate = candidate.rsplit(" ", 1)[0]


def _url_spans(text: str) -> Iterator[PiiSpan]:
    for match in _URL.finditer(text):
        candidate = match.group(0)
        while candidate and (
            candidate[-1] in _URL_TRAILING
            or (candidate[-1] == ")" and candidate.count(")") > candidate.count("("))
            or (candidate[-1] == "]" and candidate.count("]") > candidate.count("["))
        ):
            candidate = candidate[:-1]
        host = re.sub(r"^(?:[a-z]+://)?", "", candidate, flags=re.IGNORECASE).split("/", 1)[0]
        if "." not in host and not host.lower().startswith("localhost"):
            continue
        yield PiiSpan(URL, match.start(), match.start() + len(candidate), candidate, 0.9)


def _ssn_spans(text: str) -> Iterator[PiiSpan]:
    for match in _SSN.finditer(text):
        area, separator, group, serial = match.groups()
        if not ssn_valid(area, group, serial):
            continue
        window = text[max(0, match.start() - _SSN_CONTEXT_WINDOW) : match.start()]
        has_context = _SSN_CONTEXT.search(window) is not None
        # Undashed nine-digit numbers are everywhere; only context makes them SSNs.
        if separator != "-" and not has_context:
            continue
        yield PiiSpan(US_SSN, match.start(), match.end(), match.group(0), 0.95 if has_context else 0.85)


def _words_before(text: str, position: int) -> str:
    line_start = text.rfind("\n", 0, position) + 1
    # Labels often sit on their own line ("Phone:\n467 3395"), so look one line further back.
    if line_start > 0 and not text[line_start:position].strip():
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return text[max(line_start, position - _PHONE_CONTEXT_WINDOW) : position]


def _phone_context_rejects(text: str, match: re.Match[str]) -> bool:
    """True when the words around a phone-shaped number say it is something else."""
    before = _words_before(text, match.start())
    if _OTHER_NUMBER_CONTEXT.search(before) and not _PHONE_CONTEXT.search(before):
        return True
    if _NUMBERED_THING_BEFORE.search(before) and not _PHONE_CONTEXT.search(before):
        return True
    number = match.group("number")
    digit_count = sum(char.isdigit() for char in number)
    is_short_and_spaced = digit_count < 9 and " " in number and "(" not in number and not re.search(r"[+./-]", number)
    if is_short_and_spaced and match.group("extension") is None:
        # A house number and a numbered street ("5533 119 Countess Close") look like a local
        # phone number; a following word that is not a phone label gives them away.
        following = _NEXT_WORD.match(text, match.end())
        if following and following.group(1).lower().split("'")[0] not in _WORDS_AFTER_PHONE_NUMBERS:
            return True
    return False


def _phone_spans(text: str) -> Iterator[PiiSpan]:
    for match in _PHONE.finditer(text):
        number = match.group("number")
        context_says_phone = (
            _PHONE_CONTEXT.search(_words_before(text, match.start())) is not None
            or _PHONE_LABEL_AFTER.match(text, match.end()) is not None
        )
        if not phone_number_plausible(number, context_says_phone) or _phone_context_rejects(text, match):
            continue
        score = 0.75 if number.startswith("+") or "(" in number else 0.6
        yield PiiSpan(PHONE_NUMBER, match.start(), match.end(), match.group(0), score)


class RegexPiiDetector:
    """Finds structured identifiers with regular expressions and their validation rules."""

    entity_types: frozenset[str] = frozenset(
        {EMAIL_ADDRESS, URL, IBAN_CODE, CREDIT_CARD, IP_ADDRESS, US_SSN, PHONE_NUMBER, NATIONAL_ID, PASSPORT}
        | {US_DRIVER_LICENSE, US_BANK_NUMBER, ABA_ROUTING_NUMBER, PASSWORD, PIN, USERNAME}
        | {AWS_ACCESS_KEY, AWS_SECRET_KEY, MAC_ADDRESS, CRYPTO, IMEI}
    )

    def detect(self, text: str) -> list[PiiSpan]:
        """Spans of structured identifiers in ``text``, sorted and not overlapping."""
        spans: list[PiiSpan] = []
        spans.extend(PiiSpan(EMAIL_ADDRESS, m.start(), m.end(), m.group(0), 1.0) for m in _EMAIL.finditer(text))
        spans.extend(_url_spans(text))
        # An address written out ("wei.zhang at qq dot com") where no @ made one.
        spans.extend(drop_overlapping(written_email_spans(text), spans))
        spans.extend(_iban_spans(text))
        # A number the words before it call an identity number, and that validates as one, is one,
        # even when it also passes the Luhn check of a card ("my identity number: 5640122224791").
        named_ids = [span for span in national_id_spans(text) if span.score >= NAMED_ID_SCORE]
        spans.extend(named_ids)
        spans.extend(
            drop_overlapping(
                (
                    PiiSpan(CREDIT_CARD, m.start(), m.end(), m.group(0), 1.0)
                    for m in _CARD.finditer(text)
                    if credit_card_valid(m.group(0))
                ),
                named_ids,
            )
        )
        for pattern in (_IPV4, _IPV6):
            spans.extend(
                PiiSpan(IP_ADDRESS, m.start(), m.end(), m.group(0), 0.95)
                for m in pattern.finditer(text)
                if m.group(0) != "::" and ip_address_valid(m.group(0))
            )
        spans.extend(drop_overlapping(device_and_wallet_spans(text), spans))
        spans.extend(_ssn_spans(text))
        spans.extend(drop_overlapping([*national_id_spans(text), *nino_spans(text), *passport_spans(text)], spans))
        # Numbers and words named as a licence, an account or a credential just before them.
        spans.extend(drop_overlapping(driving_licence_spans(text), spans))
        spans.extend(drop_overlapping(bank_account_spans(text), spans))
        spans.extend(drop_overlapping(credential_spans(text), spans))
        # An @handle, unless an address, a URL or a "username:" above holds its "@".
        spans.extend(drop_overlapping(social_handle_spans(text), spans))
        # Phone numbers are the least certain, so a digit run already read as a validated
        # identifier is never also read as a phone number.
        spans.extend(drop_overlapping(_phone_spans(text), spans))
        return resolve_overlaps(spans)
