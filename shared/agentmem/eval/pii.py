"""Span-level precision and recall of a PII detector on Presidio-format records.

A record is ``{"full_text": str, "spans": [{"entity_type", "start_position", "end_position",
...}]}`` with exclusive end positions, as in presidio-research's synthetic data set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem.ports.pii import PiiDetector

# presidio-research labels whole URLs (``https://www.example.be/``) DOMAIN_NAME and cities and
# countries GPE; detectors name them URL and LOCATION (Presidio maps spaCy's GPE to LOCATION too),
# so gold DOMAIN_NAME spans are scored as URL and GPE as LOCATION.
PRESIDIO_GOLD_ALIASES: Mapping[str, str] = {"DOMAIN_NAME": "URL", "GPE": "LOCATION"}

STRUCTURED_TYPES: tuple[str, ...] = (
    "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "US_SSN", "IBAN_CODE", "IP_ADDRESS", "URL",
)


@dataclass(frozen=True)
class Target:
    """A type's acceptance line: at least this precision and this recall."""

    precision: float
    recall: float

    def met(self, scores: Mapping[str, Any]) -> bool:
        precision, recall = scores["precision"], scores["recall"]
        return precision is not None and recall is not None and precision >= self.precision and recall >= self.recall

    def __str__(self) -> str:
        return f"P>={self.precision:.2f} R>={self.recall:.2f}"


# agentmem's targets: names recall 0.85 at precision 0.80; structured identifiers 0.95 / 0.99.
TARGETS: Mapping[str, Target] = {
    "PERSON": Target(precision=0.80, recall=0.85),
    **{entity_type: Target(precision=0.95, recall=0.99) for entity_type in STRUCTURED_TYPES},
}


def load_records(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON list of Presidio-format records from ``path``."""
    with open(path, encoding="utf-8") as handle:
        records = json.load(handle)
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON list of records")
    return records


def _overlaps(start: int, end: int, other_start: int, other_end: int) -> bool:
    return start < other_end and other_start < end


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def evaluate_detector(
    detector: PiiDetector,
    records: Iterable[Mapping[str, Any]],
    gold_type_aliases: Mapping[str, str] = PRESIDIO_GOLD_ALIASES,
) -> dict[str, Any]:
    """Per-entity-type span-level precision, recall and support of ``detector`` on ``records``.

    Matching, done within each record and each entity type separately:

    - a predicted span of type T is a true positive when it overlaps (shares at least one
      character with) some gold span of type T in the same record; otherwise it is a false
      positive, including when it overlaps only gold spans of other types;
    - a gold span of type T is recalled when at least one predicted span of type T overlaps it.

    So one long prediction covering two gold spans recalls both and counts once for
    precision, and two predictions inside one gold span are both true positives. Boundaries
    need not match exactly. Gold types are first renamed with ``gold_type_aliases`` (by default
    DOMAIN_NAME is scored as URL).

    Returns ``{"by_type": {T: {"precision": p, "recall": r, "support": n}}, "overall": {...}}``
    covering every type that appears in the gold data or the predictions, so a type the
    detector never predicts still reports its recall (0.0). ``support`` is the number of gold
    spans; a ratio with a zero denominator is ``None`` (precision of a type never predicted,
    recall of a type absent from the gold data). ``overall`` pools all types (micro average).
    """
    gold_count: dict[str, int] = {}
    recalled: dict[str, int] = {}
    predicted_count: dict[str, int] = {}
    correct: dict[str, int] = {}

    for record in records:
        text = record["full_text"]
        gold = [
            (
                gold_type_aliases.get(span["entity_type"], span["entity_type"]),
                int(span["start_position"]),
                int(span["end_position"]),
            )
            for span in record.get("spans") or []
        ]
        predicted = detector.detect(text)
        for entity_type, start, end in gold:
            gold_count[entity_type] = gold_count.get(entity_type, 0) + 1
            if any(
                span.entity_type == entity_type and _overlaps(start, end, span.start, span.end) for span in predicted
            ):
                recalled[entity_type] = recalled.get(entity_type, 0) + 1
        for span in predicted:
            predicted_count[span.entity_type] = predicted_count.get(span.entity_type, 0) + 1
            if any(
                entity_type == span.entity_type and _overlaps(start, end, span.start, span.end)
                for entity_type, start, end in gold
            ):
                correct[span.entity_type] = correct.get(span.entity_type, 0) + 1

    by_type = {
        entity_type: {
            "precision": _ratio(correct.get(entity_type, 0), predicted_count.get(entity_type, 0)),
            "recall": _ratio(recalled.get(entity_type, 0), gold_count.get(entity_type, 0)),
            "support": gold_count.get(entity_type, 0),
        }
        for entity_type in sorted(set(gold_count) | set(predicted_count))
    }
    overall = {
        "precision": _ratio(sum(correct.values()), sum(predicted_count.values())),
        "recall": _ratio(sum(recalled.values()), sum(gold_count.values())),
        "support": sum(gold_count.values()),
    }
    return {"by_type": by_type, "overall": overall}


def split_records(records: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """Two halves of a file by record index: A holds the even-numbered records, B the odd ones."""
    return list(records[0::2]), list(records[1::2])


def format_table(result: Mapping[str, Any], targets: Mapping[str, Target] | None = None) -> str:
    """A plain-text table of :func:`evaluate_detector`'s result, one row per entity type.

    With ``targets``, a last column says for each type that has one whether it is ``met`` or
    ``MISSED`` (followed by the target itself).
    """

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    header = f"{'entity type':<20} {'precision':>9} {'recall':>7} {'support':>7}"
    rows = [header + ("  target" if targets else "")]
    for entity_type, scores in result["by_type"].items():
        row = f"{entity_type:<20} {cell(scores['precision']):>9} {cell(scores['recall']):>7} {scores['support']:>7}"
        target = (targets or {}).get(entity_type)
        if target is not None:
            row += f"  {'met' if target.met(scores) else 'MISSED'} ({target})"
        rows.append(row)
    if "overall" in result:
        overall = result["overall"]
        rows.append(
            f"{'overall (micro)':<20} {cell(overall['precision']):>9} {cell(overall['recall']):>7} "
            f"{overall['support']:>7}"
        )
    return "\n".join(rows)
