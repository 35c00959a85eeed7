"""How well the lesson rule (domain/teaching.py) tells paraphrases from distinct teachings, on fixtures.

Two fixtures, both written for agentmem and shipped in the repository:
- tests/fixtures/lesson_pairs.json: labelled pairs of editor comments, in halves A (the rule was tuned
  on it) and B (only confirms it): paraphrases, the same template about another subject, and the same
  subject with the opposite advice;
- scripts/data/duplicate_lessons.json: 36 lessons in 12 topics, written earlier for the old cosine
  threshold and never used to tune this rule: two lessons of a topic are a paraphrase, two of
  different topics are distinct.
Each comment is embedded by the embedder given (MiniLM in the product), exactly as the indexer does;
`masked_pairs` masks them first, as the product stores them (scripts/measure_lesson_grouping.py --masked).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agentmem.domain.embedded_text import lesson_embedded_text
from agentmem.domain.teaching import disagree, same_teaching, teaching_terms
from agentmem.ports.embedder import Embedder

ROOT = Path(__file__).resolve().parents[3]
PAIRS = ROOT / "tests" / "fixtures" / "lesson_pairs.json"
TOPICS = ROOT / "scripts" / "data" / "duplicate_lessons.json"


@dataclass(frozen=True)
class Pair:
    source: str  # "pairs A", "pairs B", "topics"
    kind: str  # paraphrase, template, opposite, distinct
    a: str
    b: str


@dataclass(frozen=True)
class Row:
    source: str
    kind: str
    pairs: int
    merged: int  # judged the same teaching (one bullet)
    conflicts: int  # judged a disagreement (the newer overrules the older when ratings differ)


def load_pairs(pairs_file: Path = PAIRS, topics_file: Path = TOPICS) -> list[Pair]:
    """Every labelled pair of both fixtures."""
    found = [Pair(f"pairs {p['half']}", p["kind"], p["a"], p["b"]) for p in json.loads(pairs_file.read_text())["pairs"]]
    topics = json.loads(topics_file.read_text())["topics"]
    comments = [(t["topic"], lesson["comment"]) for t in topics for lesson in t["lessons"]]
    for (topic_a, a), (topic_b, b) in itertools.combinations(comments, 2):
        found.append(Pair("topics", "paraphrase" if topic_a == topic_b else "distinct", a, b))
    return found


def measure(
    embedder: Embedder, pairs: Sequence[Pair], render: Callable[[str], str] = lesson_embedded_text
) -> list[Row]:
    """Merged and conflicting pairs by fixture and kind; each comment embedded as `render` gives it (the
    indexer's rendering: personal-data tokens read as their kind)."""
    texts = sorted({p.a for p in pairs} | {p.b for p in pairs})
    vectors = np.asarray(embedder.embed([render(t) for t in texts]), dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    row = {t: i for i, t in enumerate(texts)}
    terms = {t: teaching_terms(t) for t in texts}
    counts: dict[tuple[str, str], list[int]] = {}
    for p in pairs:
        cosine = float(vectors[row[p.a]] @ vectors[row[p.b]])
        tally = counts.setdefault((p.source, p.kind), [0, 0, 0])
        tally[0] += 1
        tally[1] += same_teaching(terms[p.a], terms[p.b], cosine)
        tally[2] += disagree(terms[p.a], terms[p.b], cosine)
    return [Row(source, kind, *tally) for (source, kind), tally in sorted(counts.items())]


def table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table."""
    lines = ["| fixture | kind | pairs | merged (one bullet) | judged to disagree |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.source} | {r.kind} | {r.pairs} | {r.merged} ({100 * r.merged / r.pairs:.0f}%) | "
                     f"{r.conflicts} ({100 * r.conflicts / r.pairs:.0f}%) |")
    return "\n".join(lines)


def masked_pairs(pairs: Sequence[Pair], mask: Callable[[list[str]], list[str]]) -> list[Pair]:
    """The same pairs with each comment masked by `mask` (texts in, masked texts out, in order)."""
    texts = sorted({p.a for p in pairs} | {p.b for p in pairs})
    masked = dict(zip(texts, mask(texts), strict=True))
    return [Pair(p.source, p.kind, masked[p.a], masked[p.b]) for p in pairs]
