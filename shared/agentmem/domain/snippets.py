"""Snippets: the start of a long text, for listings that show many at once."""

from __future__ import annotations

from agentmem.domain.pii import TOKEN_PATTERN

ELLIPSIS = "…"
TOKEN_WINDOW = 128


def snippet(text: str, max_chars: int) -> tuple[str, bool]:
    """The start of `text` in at most `max_chars` characters (an ellipsis ending a cut one), and whether it was cut.

    A cut never splits a PII token (`{{PII_EMAIL_3f9a1c2b_1}}`): a token that would not fit whole is left out,
    so a reader never sees a fragment that looks like data.
    """
    if len(text) <= max_chars:
        return text, False
    end = max(0, max_chars - len(ELLIPSIS))
    # A token is far shorter than this window, so one that straddles `end` starts and ends inside it.
    for token in TOKEN_PATTERN.finditer(text, max(0, end - TOKEN_WINDOW), end + TOKEN_WINDOW):
        if token.start() < end < token.end():
            end = token.start()
            break
    return text[:end].rstrip() + ELLIPSIS, True
