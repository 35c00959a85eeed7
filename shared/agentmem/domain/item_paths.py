"""Which texts of an item value are embedded: LangGraph's `index` field paths.

A path names parts of a JSON value, as LangGraph's store documents them: `a.b` (a nested field),
`a[0]`, `a[-1]` (a list element), `a[*].b` (every element), `*` (every field of an object or element
of a list), `{a,b.c}` (several fields at once), and `$` (the whole value). Each part found is one text:
a string, number or boolean as its text, an object or list as its JSON (keys sorted). A path that names
nothing yields no text, which is not an error (an item need not have every indexed field).
"""

from __future__ import annotations

import json
from typing import Any

from agentmem.domain.errors import InvalidInput


def texts_at_path(value: Any, path: str) -> list[str]:
    """The texts `path` names in `value`, in document order (see the module docstring)."""
    if path in ("", "$"):
        return [_text(value)]
    return [_text(part) for part in _walk(value, parse_path(path)) if part is not None]


def parse_path(path: str) -> list[str]:
    """`a.b[*].c` -> `["a", "b", "[*]", "c"]`; brackets and braces stay whole tokens."""
    tokens: list[str] = []
    current = ""
    i = 0
    while i < len(path):
        char = path[i]
        if char in "[{":
            if current:
                tokens.append(current)
                current = ""
            close = path.find("]" if char == "[" else "}", i)
            if close < 0:
                raise InvalidInput(f"index path {path!r}: {char!r} is never closed")
            tokens.append(path[i : close + 1])
            i = close + 1
            continue
        if char == ".":
            if current:
                tokens.append(current)
            current = ""
        else:
            current += char
        i += 1
    if current:
        tokens.append(current)
    return tokens


def _walk(value: Any, tokens: list[str]) -> list[Any]:
    if not tokens:
        return [value]
    token, rest = tokens[0], tokens[1:]
    if token.startswith("["):
        if not isinstance(value, list):
            return []
        inner = token[1:-1].strip()
        if inner == "*":
            return [found for element in value for found in _walk(element, rest)]
        try:
            position = int(inner)
        except ValueError as error:
            raise InvalidInput(f"index path token {token!r} is neither [*] nor [n]") from error
        if -len(value) <= position < len(value):
            return _walk(value[position], rest)
        return []
    if token.startswith("{"):
        if not isinstance(value, dict):
            return []
        fields = [field.strip() for field in token[1:-1].split(",") if field.strip()]
        return [found for field in fields for found in _walk(value, [*parse_path(field), *rest])]
    if token == "*":
        children = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
        return [found for child in children for found in _walk(child, rest)]
    if isinstance(value, dict) and token in value:
        return _walk(value[token], rest)
    return []


def _text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, bool | int | float):
        return str(part)
    return json.dumps(part, sort_keys=True, ensure_ascii=False)
