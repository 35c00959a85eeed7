"""A device's hardware address, a phone's IMEI and a bitcoin wallet's address.

- MAC_ADDRESS: six pairs of hex digits joined by ":" or "-" all alike ("3C:22:FB:9A:41:07"), or three
  groups of four joined by "." (Cisco's "3c22.fb9a.4107"), with a hex letter among them; Comprehend finds
  the same type in AWS.
- CRYPTO (Presidio's name): a bitcoin address, legacy (base58, starting with 1 or 3) or segwit
  ("bc1..."), kept only when python-stdnum's ``bitcoin`` validates its checksum, so a random string
  of the same letters is not one.
- IMEI: a phone's fifteen digits, the last a Luhn check digit, as python-stdnum's ``imei`` validates
  them. One number of fifteen digits in ten passes Luhn, so alone only in a grouping phones and their
  boxes print ("35-209900-176148-1", "35 209900 176148 1", "35209900-176148-1", "352099-00-176148-1");
  solid or grouped otherwise, only near "IMEI", "serial" or "device id" on its line. A number the card
  rules take (a 15-digit American Express card, or an IMEI written solid that starts like a card of
  Diners Club, Maestro or UATP: 1, 30, 36, 38-39, 50, 56-69) is left to them: it is masked either way,
  and a card is the one whose type must not be lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum import bitcoin, imei

from agentmem.domain.pii import PiiSpan

MAC_ADDRESS = "MAC_ADDRESS"
CRYPTO = "CRYPTO"
IMEI = "IMEI"

_MAC = re.compile(
    r"(?<![\w:.-])(?:[0-9A-Fa-f]{2}(?P<sep>[:-])(?:[0-9A-Fa-f]{2}(?P=sep)){4}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\w:-]|\.\w)"
)
# Fifteen digits, solid or grouped by "-" or " "; what may follow is no digit nor a separator and a
# digit, so the number is not the start of a longer one.
_IMEI = re.compile(r"(?<![\w+.,-])\d(?:[ -]?\d){14}(?![\w+]|[ .,-]\d)")
# The groupings an IMEI is printed in (TAC, serial and check digit, or the older TAC, FAC, serial, check).
_IMEI_GROUPINGS = frozenset({(2, 6, 6, 1), (8, 6, 1), (6, 2, 6, 1)})
_IMEI_CUE = re.compile(r"\b(?:imei\d?|serial|device[ _-]?id)\b", re.IGNORECASE)
_IMEI_CUE_WINDOW = 40
_BITCOIN = re.compile(r"(?<![\w])(?:[13][1-9A-HJ-NP-Za-km-z]{25,34}|bc1[02-9ac-hj-np-z]{8,87})(?![\w])")


def device_and_wallet_spans(text: str) -> Iterator[PiiSpan]:
    """MAC_ADDRESS, IMEI and CRYPTO spans of ``text``."""
    # What each needs before its expression is run (most texts have none): five separators of one
    # kind or two dots, fifteen digits, and a word of at least 26 characters.
    if text.count(":") >= 5 or text.count("-") >= 5 or text.count(".") >= 2:
        yield from _mac_spans(text)
    if sum(map(text.count, "0123456789")) >= 15:
        yield from _imei_spans(text)
    if any(len(word) >= 26 for word in text.split()):
        yield from _bitcoin_spans(text)


def _mac_spans(text: str) -> Iterator[PiiSpan]:
    for match in _MAC.finditer(text):
        # A hex letter in it: "12:30:45:10:20:30" is a time and "2024.1105.1230" a version (one MAC in
        # three hundred has no letter, and is missed).
        if any(char.isalpha() for char in match.group()):
            yield PiiSpan(MAC_ADDRESS, match.start(), match.end(), match.group(), 0.9)


def _imei_spans(text: str) -> Iterator[PiiSpan]:
    for match in _IMEI.finditer(text):
        number = match.group()
        # One kind of separator ("35 209900-176148 1" is a run of numbers), and the Luhn check digit.
        if ("-" in number and " " in number) or not imei.is_valid(number):
            continue
        grouping = tuple(len(group) for group in re.split(r"[ -]", number))
        if grouping in _IMEI_GROUPINGS:
            yield PiiSpan(IMEI, match.start(), match.end(), number, 0.85)
        elif _imei_cue_near(text, match.start(), match.end()):
            yield PiiSpan(IMEI, match.start(), match.end(), number, 0.9)


def _imei_cue_near(text: str, start: int, end: int) -> bool:
    """True when "IMEI", "serial" or "device id" stands on the number's line, just before or after it
    ("IMEI: 352099001761481", "352099001761481 is the old phone's IMEI")."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    before = text[max(line_start, start - _IMEI_CUE_WINDOW) : start]
    after = text[end : min(line_end, end + _IMEI_CUE_WINDOW)]
    return _IMEI_CUE.search(before) is not None or _IMEI_CUE.search(after) is not None


def _bitcoin_spans(text: str) -> Iterator[PiiSpan]:
    for match in _BITCOIN.finditer(text):
        if bitcoin.is_valid(match.group()):
            yield PiiSpan(CRYPTO, match.start(), match.end(), match.group(), 0.95)
