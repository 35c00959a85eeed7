"""Which item values a search filter keeps: LangGraph's store filter, JSONB-like.

A filter maps top-level fields to a value the field must equal (nested objects compare field by
field, lists element by element) or to operators: `{"$gt": 3}`; `$eq $ne $gt $gte $lt $lte`.
"""

from __future__ import annotations

from typing import Any

from agentmem.domain.errors import InvalidInput

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def matches(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    return all(_compare(value.get(name), wanted) for name, wanted in (filter or {}).items())


def _compare(have: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_apply(have, op, operand) for op, operand in wanted.items())
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return (
            isinstance(have, list) and len(have) == len(wanted)
            and all(_compare(h, w) for h, w in zip(have, wanted, strict=True))
        )
    return bool(have == wanted)


def _apply(have: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(have == operand)
    if op == "$ne":
        return bool(have != operand)
    if op not in OPERATORS:
        raise InvalidInput(f"unknown filter operator {op!r}; known: {', '.join(OPERATORS)}")
    try:
        left, right = float(have), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[op]
