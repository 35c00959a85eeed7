"""A social handle ("@kwame_mensah87", "my insta is @li.na_art"): the account's name, masked as USERNAME
(Comprehend's type for a user name, which ``credentials`` finds after "username is").

A handle is "@" and 1-30 letters, digits, "_" and "." (a final "." ends the sentence), with no word
character, dot or "@" before the "@" (so no e-mail address) and no "/" after the handle (an npm scope,
"@types/node"). What is written so and is no one's account is left alone:

- the group mentions of chat tools ("@here", "@channel", "@everyone", "@all");
- code: a decorator or annotation opening a line before "(", a comment or a line of code ("@dataclass",
  "@app.route("), a doc tag after a comment's marks (" * @param", "## @file"), a name right before "("
  ("@settings(...)", "@Article{") or made a key ('"@type": ...', "@xsi:type") or after a backtick, a
  name of a module programmers decorate with ("@pytest.mark.slow", "@abc.abstractmethod"), and the
  decorators, annotations, doc tags and CSS
  at-rules named in prose ("the @property decorator", "@given", "@media");
- a time or an amount ("@10", "@5pm", "@7.30"), a size ("@2x"), and a domain ("ends in @gmail.com").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentmem.adapters.local.credentials import USERNAME
from agentmem.adapters.local.written_emails import TOP_LEVEL_DOMAINS
from agentmem.domain.pii import PiiSpan

# Not after a word character, "." or "@" (an e-mail address), a backtick (code) or a URL's "/", "?", "&", "=";
# not before a word character, "/" or "-" ("@types/node", "@aws-cdk/core": scopes of packages).
_HANDLE = re.compile(r"(?<![\w.@`+/?&=~-])@(?P<handle>[A-Za-z0-9_.]{1,31})(?![\w./-])")
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
        "extend", "final", "given", "composite", "settings", "runtime_checkable", "total_ordering",
        "singledispatch", "unique", "validator", "field_validator", "model_validator", "computed_field", "task",
        "shared_task", "receiver", "login_required", "file", "brief", "details", "note", "warning", "cond",
        "endcond", "addtogroup", "defgroup", "ingroup", "typedef", "callback", "private", "public", "internal",
        "ivar", "cvar", "var", "rtype", "architectures",
    }
)  # fmt: skip
# Modules (and their usual aliases) whose functions decorate: "@pytest.mark.slow" is code.
_DECORATING_MODULES = frozenset(
    {
        "pytest", "abc", "t", "typing", "functools", "dataclasses", "contextlib", "unittest", "mock", "patch",
        "app", "router", "api", "bp", "blueprint", "hypothesis", "click", "pydantic", "celery", "django",
        "flask", "torch", "tf", "jax", "np", "numba", "staticmethod", "property", "self", "cls",
    }
)  # fmt: skip
# After a decorator opening its line: a comment, or a line of code (indented, another decorator, a definition).
_CODE_LINE_AFTER = re.compile(
    r"[ \t]*(?:#|//|\r?\n(?:$|[ \t]|@|#|(?:def|class|async|public|private|protected|static|final|fun|export)\b))"
)
# Right after the name, what calls it or makes it a key: "@settings(", "@Article{", "@id = ", '"@type": '.
_CODE_AFTER_NAME = re.compile(r"[({]|[ \t]*=[^=]|[\"'][ \t]*:|:\w")
# What opens the line of a doc tag: indentation and a comment's marks (or a doctest's prompt).
_COMMENT_MARKS = re.compile(r"[ \t]*(?:#+|//+|/?\*+|;+|--|>>>|\.\.\.)[ \t]*")
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
    if lowered in _GROUP_MENTIONS or lowered in _CODE_NAMES or lowered.split(".", 1)[0] in _DECORATING_MODULES:
        return False
    return not ("." in handle and lowered.rsplit(".", 1)[1] in TOP_LEVEL_DOMAINS)


def _a_decorator(text: str, start: int, end: int, handle: str) -> bool:
    """True for code: a name called or made a key ("@settings(", '"@type":'), a doc tag after a comment's
    marks, or a decorator opening its line before a comment or a line of code."""
    if _CODE_AFTER_NAME.match(text, end) is not None:
        return True
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start]
    if before.strip():
        return _COMMENT_MARKS.fullmatch(before) is not None
    return _PYTHON_NAME.fullmatch(handle) is not None and _CODE_LINE_AFTER.match(text, end) is not None
