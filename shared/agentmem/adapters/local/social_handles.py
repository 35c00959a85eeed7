"""A social handle ("@kwame_mensah87", "my insta is @li.na_art"): the account's name, masked as USERNAME
(Comprehend's type for a user name, which ``credentials`` finds after "username is").

A handle is "@" and 1-30 letters, digits, "_" and "." (a final "." ends the sentence), with no word
character, dot or "@" before the "@" (so no e-mail address) and no "/" after the handle (an npm scope,
"@types/node"). What is written so and is no one's account is left alone:

- the group mentions of chat tools ("@here", "@channel", "@everyone", "@all");
- code: a decorator or annotation opening a line before "(" or before a line of code ("@dataclass",
  "@app.route("), an "@" right after a backtick, the decorators, annotations, doc tags and CSS at-rules
  programmers name in prose ("the @property decorator", "@param", "@media");
- a time or an amount ("@10", "@5pm", "@7.30"), a size ("@2x"), and a domain ("ends in @gmail.com").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentmem.adapters.local.credentials import USERNAME
from agentmem.adapters.local.written_emails import TOP_LEVEL_DOMAINS
from agentmem.domain.pii import PiiSpan

_HANDLE = re.compile(r"(?<![\w.@`+-])@(?P<handle>[A-Za-z0-9_.]{1,31})(?![\w./])")
_MAX_LENGTH = 30
_GROUP_MENTIONS = frozenset({"here", "channel", "everyone", "all"})
# Written in prose about code, lower-cased.
_CODE_NAMES = frozenset(
    {
        "property", "staticmethod", "classmethod", "dataclass", "abstractmethod", "cached_property", "lru_cache",
        "cache", "wraps", "contextmanager", "override", "overload", "pytest.fixture", "pytest.mark.parametrize",
        "app.route", "test", "autowired", "component", "injectable", "input", "output", "entity", "bean",
        "deprecated", "param", "return", "returns", "throws", "raises", "see", "author", "since", "type",
        "example", "todo", "media", "import", "keyframes", "font", "charset", "supports", "mixin", "include",
        "extend",
    }
)  # fmt: skip
# A line of code after a decorator opening its line: indented, another decorator, or a definition.
_CODE_LINE_AFTER = re.compile(
    r"[ \t]*\r?\n(?:$|[ \t]|@|(?:def|class|async|public|private|protected|static|final|fun|export)\b)"
)
_PYTHON_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_TIME_OR_SIZE = re.compile(r"\d{1,2}(?:[.:]?\d{2})?(?:am|pm|h|hrs)?|\d+x", re.IGNORECASE)


def social_handle_spans(text: str) -> Iterator[PiiSpan]:
    """USERNAME spans of the @handles of ``text``."""
    if "@" not in text:
        return
    for match in _HANDLE.finditer(text):
        handle = match.group("handle").rstrip(".")
        if not handle or len(handle) > _MAX_LENGTH or not _names_an_account(handle):
            continue
        start = match.start("handle")
        if _a_decorator(text, match.start(), start + len(handle), handle):
            continue
        # The "@" stays: "twitter @{{PII_USERNAME_...}}" still reads as a handle, and the name alone is the
        # value consistent masking finds again where it is written without one.
        yield PiiSpan(USERNAME, start, start + len(handle), handle, 0.75)


def _names_an_account(handle: str) -> bool:
    """False for what follows an "@" in ordinary writing: no letter, a time, a size, a group, code, a domain."""
    lowered = handle.lower()
    if not any(char.isalpha() for char in handle) or _TIME_OR_SIZE.fullmatch(handle):
        return False
    if lowered in _GROUP_MENTIONS or lowered in _CODE_NAMES:
        return False
    return not ("." in handle and lowered.rsplit(".", 1)[1] in TOP_LEVEL_DOMAINS)


def _a_decorator(text: str, start: int, end: int, handle: str) -> bool:
    """True for a decorator or annotation opening its line: a Python name before "(" or a line of code."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip() or not _PYTHON_NAME.fullmatch(handle):
        return False
    return text.startswith("(", end) or _CODE_LINE_AFTER.match(text, end) is not None
