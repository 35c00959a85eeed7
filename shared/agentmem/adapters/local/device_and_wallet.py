"""A device's hardware address and a bitcoin wallet's address, both unmistakable alone.

- MAC_ADDRESS: six pairs of hex digits joined by ":" or "-" all alike ("3C:22:FB:9A:41:07"), or three
  groups of four joined by "." (Cisco's "3c22.fb9a.4107"), with a hex letter among them; Comprehend finds
  the same type in AWS.
- CRYPTO (Presidio's name): a bitcoin address, legacy (base58, starting with 1 or 3) or segwit
  ("bc1..."), kept only when python-stdnum's ``bitcoin`` validates its checksum, so a random string
  of the same letters is not one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum import bitcoin

from agentmem.domain.pii import PiiSpan

MAC_ADDRESS = "MAC_ADDRESS"
CRYPTO = "CRYPTO"

_MAC = re.compile(
    r"(?<![\w:.-])(?:[0-9A-Fa-f]{2}(?P<sep>[:-])(?:[0-9A-Fa-f]{2}(?P=sep)){4}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\w:-]|\.\w)"
)
_BITCOIN = re.compile(r"(?<![\w])(?:[13][1-9A-HJ-NP-Za-km-z]{25,34}|bc1[02-9ac-hj-np-z]{8,87})(?![\w])")


def device_and_wallet_spans(text: str) -> Iterator[PiiSpan]:
    """MAC_ADDRESS and CRYPTO spans of ``text``."""
    # What each needs before its expression is run (most texts have neither): five separators of one
    # kind or two dots, and a word of at least 26 characters.
    if text.count(":") >= 5 or text.count("-") >= 5 or text.count(".") >= 2:
        yield from _mac_spans(text)
    if any(len(word) >= 26 for word in text.split()):
        yield from _bitcoin_spans(text)


def _mac_spans(text: str) -> Iterator[PiiSpan]:
    for match in _MAC.finditer(text):
        # A hex letter in it: "12:30:45:10:20:30" is a time and "2024.1105.1230" a version (one MAC in
        # three hundred has no letter, and is missed).
        if any(char.isalpha() for char in match.group()):
            yield PiiSpan(MAC_ADDRESS, match.start(), match.end(), match.group(), 0.9)


def _bitcoin_spans(text: str) -> Iterator[PiiSpan]:
    for match in _BITCOIN.finditer(text):
        if bitcoin.is_valid(match.group()):
            yield PiiSpan(CRYPTO, match.start(), match.end(), match.group(), 0.95)
