"""Credentials a user writes into a conversation: passwords, PINs, user names and AWS keys.

Amazon Comprehend finds PASSWORD, PIN, USERNAME, AWS_ACCESS_KEY and AWS_SECRET_KEY; this is the local
detector's reading of the same types, so a tenant's mode does not decide whether "my password is
Hunter2!" is stored:

- an AWS access key id is unmistakable alone (``AKIA`` or ``ASIA`` and sixteen base-32 capitals);
- a secret access key (forty characters of base 64) only after "secret" or "secret access key";
- a password, passcode or passphrase is the word right after its name and "is", ":" or "=" (any
  word of four characters or more but the few that describe a password: "is wrong", "is required"),
  or, after the bare name, a word with a digit or a symbol ("password Hunter2!", not "password reset");
  after "pw" or "pass", only with ":" or "=" ("pw: Kettle!88");
- a PIN is four to eight digits after "PIN"; a user name the word after "username" or "user name" and
  ":" or "is", after "login:", or after "login is" when it has a digit, ".", "_", "@" or "+" inside.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentmem.domain.pii import PiiSpan

PASSWORD = "PASSWORD"
PIN = "PIN"
USERNAME = "USERNAME"
AWS_ACCESS_KEY = "AWS_ACCESS_KEY"
AWS_SECRET_KEY = "AWS_SECRET_KEY"

_ACCESS_KEY = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z2-7]{16}(?![A-Za-z0-9])")
_SECRET_KEY = re.compile(
    r"\bsecret(?:[ \t_-]*access)?(?:[ \t_-]*key)?(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]*[\"']?"
    r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    re.IGNORECASE,
)
# A word: what stands until the next space, less the punctuation that ends a sentence or a quote.
_WORD = r"[\"'`]?(?P<value>[^\s\"'`]+?)[\"'`]?(?=[.,;:!?)\]]*(?:\s|$))"
_PASSWORD_NAMED = re.compile(
    r"\b(?:password|passwd|pwd|passcode|pass[ \t]?phrase)[ \t]*(?:(?:is|was)[ \t]+|[:=][ \t]*)" + _WORD,
    re.IGNORECASE,
)
_PASSWORD_BARE = re.compile(r"\b(?:password|passwd|pwd|passcode)[ \t]+" + _WORD, re.IGNORECASE)
# The short names ("pw: Kettle!88", "pass=..."), only before ":" or "=": "the pass is valid" names none.
_PASSWORD_SHORT = re.compile(r"\b(?:pw|pass)[ \t]*[:=][ \t]*" + _WORD, re.IGNORECASE)
_PIN = re.compile(
    r"\bpin(?:[ \t]+(?:code|number|no\.?))?(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]*(?P<value>\d{4,8})(?!\d)",
    re.IGNORECASE,
)
_USERNAME = re.compile(
    r"\b(?:user[ \t]?name[ \t]*(?:(?:is|was)[ \t]+|[:=][ \t]*)|login[ \t]*[:=][ \t]*)" + _WORD, re.IGNORECASE
)
# After "login is", only a word shaped like an account name ("amara.okoye", "k_mensah7"): "the login is broken".
_LOGIN_IS = re.compile(r"\blogin[ \t]+(?:is|was)[ \t]+" + _WORD, re.IGNORECASE)
_ACCOUNT_NAME = re.compile(r"[\w.+-]*[\d._@+][\w.+-]*\w")
# A part of each name above, or an access key's prefix, lower-cased: a text without one (most) is not
# read further.
_NAME_PARTS = ("pass", "pw", "pin", "user", "login", "secret", "akia", "asia")
# What follows "password is" to describe it rather than to say it.
_DESCRIBES = frozenset(
    {
        "wrong", "incorrect", "invalid", "expired", "required", "correct", "weak", "strong", "too", "not", "the", "a",
        "an", "my", "your", "his", "her", "our", "their", "case", "same", "different", "changed", "reset", "still",
        "now", "set", "saved", "stored", "hidden", "encrypted", "missing", "empty", "blank", "long", "short", "secure",
        "insecure", "safe", "unsafe", "easy", "hard", "simple", "complex", "old", "new", "mandatory", "optional",
        "broken", "down", "locked", "disabled", "none", "null", "nil", "undefined", "true", "false", "taken",
        "available", "unavailable", "unique", "free", "used", "reserved", "ok", "fine", "good", "bad", "visible",
    }
)  # fmt: skip


def credential_spans(text: str) -> Iterator[PiiSpan]:
    """PASSWORD, PIN, USERNAME, AWS_ACCESS_KEY and AWS_SECRET_KEY spans of ``text`` (they may overlap)."""
    lowered = text.lower()
    if not any(part in lowered for part in _NAME_PARTS):
        return
    for match in _ACCESS_KEY.finditer(text):
        yield PiiSpan(AWS_ACCESS_KEY, match.start(), match.end(), match.group(), 0.95)
    for match in _SECRET_KEY.finditer(text):
        yield _value_span(AWS_SECRET_KEY, match, 0.9)
    for match in _PASSWORD_NAMED.finditer(text):
        value = match.group("value")
        if len(value) >= 4 and value.lower() not in _DESCRIBES:
            yield _value_span(PASSWORD, match, 0.85)
    for match in _PASSWORD_SHORT.finditer(text):
        if len(match.group("value")) >= 4 and match.group("value").lower() not in _DESCRIBES:
            yield _value_span(PASSWORD, match, 0.8)
    for match in _PASSWORD_BARE.finditer(text):
        value = match.group("value")
        if len(value) >= 4 and any(not char.isalpha() for char in value):
            yield _value_span(PASSWORD, match, 0.8)
    for match in _PIN.finditer(text):
        yield _value_span(PIN, match, 0.85)
    for match in _USERNAME.finditer(text):
        if match.group("value").lower() not in _DESCRIBES:
            yield _value_span(USERNAME, match, 0.8)
    for match in _LOGIN_IS.finditer(text):
        if _ACCOUNT_NAME.fullmatch(match.group("value")):
            yield _value_span(USERNAME, match, 0.8)


def _value_span(entity_type: str, match: re.Match[str], score: float) -> PiiSpan:
    return PiiSpan(entity_type, match.start("value"), match.end("value"), match.group("value"), score)
