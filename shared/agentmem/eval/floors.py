"""Floors for the evaluations: the figures a change may not fall below (`make eval`, `.ci/run`).

A floor is given on the command line, `--min-recall-at 10=74` (LoCoMo, recall in percent as the
table prints it) or `--min-recall PERSON=0.88` / `--min-precision PERSON=0.85` (PII, fractions as
its table prints them); the command prints its table, then exits non-zero naming every figure
below its floor. A type or k the result does not have counts as below: a floor on a figure that
was not measured would pass unseen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def parse_floor(text: str, *, key_is_int: bool = False) -> tuple[str, float]:
    """`"10=74"` -> `("10", 74.0)`, `"PERSON=0.88"` -> `("PERSON", 0.88)`; ValueError when malformed."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"expected NAME=VALUE, got {text!r}")
    if key_is_int and not key.isdigit():
        raise ValueError(f"expected K=PERCENT with a whole number K, got {text!r}")
    try:
        floor = float(value)
    except ValueError:
        raise ValueError(f"not a number after '=': {text!r}") from None
    return key, floor


def locomo_shortfalls(result: Mapping[str, Any], floors: Mapping[int, float]) -> list[str]:
    """Each overall recall@k (in percent) below its floor, as `R@10 73.2 < 74`."""
    below = []
    for k, floor in sorted(floors.items()):
        value = result.get("overall", {}).get(str(k))
        if value is None:
            below.append(f"R@{k} not measured < {floor:g}")
        elif round(value * 100, 9) < floor:  # 0.734 * 100 is 73.39999999999999, not under a floor of 73.4
            below.append(f"R@{k} {value * 100:.1f} < {floor:g}")
    return below


def pii_shortfalls(
    result: Mapping[str, Any], min_precision: Mapping[str, float], min_recall: Mapping[str, float]
) -> list[str]:
    """Each type's precision or recall below its floor, as `PERSON recall 0.871 < 0.88`; `overall` pools all."""
    below = []
    for measure, floors in (("precision", min_precision), ("recall", min_recall)):
        for entity_type, floor in sorted(floors.items()):
            scores = result["overall"] if entity_type == "overall" else result["by_type"].get(entity_type, {})
            value = scores.get(measure)
            if value is None:
                below.append(f"{entity_type} {measure} not measured < {floor:g}")
            elif value < floor:
                below.append(f"{entity_type} {measure} {value:.3f} < {floor:g}")
    return below
