"""Identifier rules shared by every route: agentId, userId, threadId, runId, memoryId."""

from __future__ import annotations

import re

ID_REGEX = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
ID_PATTERN = re.compile(ID_REGEX)
ID_PATTERN_TEXT = "1-128 characters of A-Z a-z 0-9 . _ : @ -, starting with a letter or digit"


def is_valid_id(value: str) -> bool:
    """True when `value` is a valid agentmem identifier."""
    return bool(ID_PATTERN.fullmatch(value))
