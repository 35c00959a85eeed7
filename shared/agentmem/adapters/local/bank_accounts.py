"""Bank account numbers and the codes that route to them, found after the words that name them.

An account number has no check digit its holder writes (a UK account's eight digits, a US account's
six to seventeen), so alone it is any number: it is a US_BANK_NUMBER (Presidio's name; Comprehend's
BANK_ACCOUNT_NUMBER) only when "account number", "acct", "a/c" or "account" comes just before it. A
code that routes to an account is an ABA_ROUTING_NUMBER (Comprehend's BANK_ROUTING): a US routing
number (nine digits, python-stdnum's ABA check) after "routing" or "ABA", a UK or Irish sort code
(NN-NN-NN) after "sort code", an Australian BSB (NNN-NNN) after "BSB". IBANs are ``pii_regex``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum.us import rtn

from agentmem.domain.pii import PiiSpan

US_BANK_NUMBER = "US_BANK_NUMBER"
ABA_ROUTING_NUMBER = "ABA_ROUTING_NUMBER"

# What may stand between the name and the number: "account number: ", "acct # ", "account is ".
_JOIN = r"(?:[ \t]*(?:no\.?|number|num|nr\.?|#))?(?:[ \t]+(?:is|was))?[ \t]*[:#=-]?[ \t]*$"
_ACCOUNT_CUE = re.compile(
    r"\b(?:(?:bank|checking|chequing|savings|current|deposit)[ \t]+)?(?:account|acct\.?|a/c)" + _JOIN,
    re.IGNORECASE,
)
# Six to seventeen digits, as one run or in groups of at least two joined by one space or dash.
_ACCOUNT = re.compile(r"(?<![\w.,/-])\d{2,}(?:[ -]\d{2,})*(?![\w]|[.,/-]\d)")
_ROUTING = {
    "aba": (re.compile(r"\b(?:routing|aba|rtn|transit)\b" + _JOIN, re.IGNORECASE), re.compile(r"\d{9}")),
    "sort code": (re.compile(r"\bsort[ \t]*code" + _JOIN, re.IGNORECASE), re.compile(r"\d{2}-\d{2}-\d{2}|\d{6}")),
    "bsb": (re.compile(r"\bbsb" + _JOIN, re.IGNORECASE), re.compile(r"\d{3}-\d{3}|\d{6}")),
}
_NUMBER = re.compile(r"(?<![\w.,/-])\d[\d -]*\d(?![\w]|[.,/-]\d)")
# A part of each name above, lower-cased: a text without one (most) is not read further (a caseless
# regular expression of them costs six times the substring tests).
_NAME_PARTS = ("account", "acct", "a/c", "routing", "aba", "rtn", "transit", "sort", "bsb")
# How far before a number its name may start ("account number is: " is 20 characters).
_CUE_WINDOW = 30


def bank_account_spans(text: str) -> Iterator[PiiSpan]:
    """US_BANK_NUMBER and ABA_ROUTING_NUMBER spans of ``text``, each right after the words that name it."""
    lowered = text.lower()
    if not any(part in lowered for part in _NAME_PARTS) or not any(char.isdigit() for char in text):
        return
    for match in _NUMBER.finditer(text):
        before = text[max(0, match.start() - _CUE_WINDOW) : match.start()]
        routing = _routing_span(text, match, before)
        if routing is not None:
            yield routing
            continue
        if _ACCOUNT_CUE.search(before):
            account = _ACCOUNT.match(text, match.start())
            if account is not None and 6 <= sum(char.isdigit() for char in account.group()) <= 17:
                yield PiiSpan(US_BANK_NUMBER, account.start(), account.end(), account.group(), 0.85)


def _routing_span(text: str, match: re.Match[str], before: str) -> PiiSpan | None:
    for name, (cue, shape) in _ROUTING.items():
        if not cue.search(before):
            continue
        code = shape.match(text, match.start())
        if code is None or (code.end() < len(text) and text[code.end()].isdigit()):
            continue
        if name == "aba" and not rtn.is_valid(code.group()):
            continue
        return PiiSpan(ABA_ROUTING_NUMBER, code.start(), code.end(), code.group(), 0.9)
    return None
