"""Which of an agent's lessons teach the same thing: one relation for the indexer, `retrieve` and the wall."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from agentmem.domain.embedded_text import lesson_embedded_text
from agentmem.domain.lessons import LessonPair, comparison_text, editor_words
from agentmem.domain.models import Memory
from agentmem.domain.teaching import TEACHING_COSINE, TeachingTerms, disagree, same_teaching, teaching_terms
from agentmem.ports.embedder import Embedder

_NEVER: LessonPair = lambda a, b: False  # noqa: E731


@dataclass(frozen=True)
class TeachingRelation:
    """How two of a set of lessons (by memoryId) relate: the same teaching, or a disagreement."""

    same: LessonPair
    disagree: LessonPair


def teaching_relation(embedder: Embedder, lessons: Sequence[Memory]) -> TeachingRelation:
    """How two of `lessons` (by memoryId) relate by their editors' words (domain/teaching.py).

    Only lessons with an editor's words are ever the same teaching. The indexer keeps each lesson's
    comment vector with it; only a lesson without one is embedded here, all such in one call.
    """
    words = {m.memory_id: editor_words(m.digest) for m in lessons}
    commented = [m for m in lessons if words[m.memory_id]]
    if len(commented) < 2:
        return TeachingRelation(_NEVER, _NEVER)
    dimension = embedder.dimension
    # The stored comment vectors decoded in one buffer, not one array each: the indexer decodes its whole
    # 500-lesson window every batch (vector_from_bytes' format: little-endian float32 of `dimension`).
    stored = [i for i, m in enumerate(commented) if m.comment_vector and len(m.comment_vector) == 4 * dimension]
    kept = set(stored)
    missing = [i for i in range(len(commented)) if i not in kept]
    vectors = np.empty((len(commented), dimension), dtype=np.float32)
    if missing:
        vectors[missing] = embedder.embed([lesson_embedded_text(comparison_text(commented[i].digest))
                                          for i in missing])
    if stored:
        blob = b"".join(commented[i].comment_vector or b"" for i in stored)
        vectors[stored] = np.frombuffer(blob, dtype="<f4").reshape(len(stored), dimension)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    cosine = _CosineRows(unit)
    row = {m.memory_id: i for i, m in enumerate(commented)}
    terms: dict[str, TeachingTerms] = {}

    def terms_of(memory_id: str) -> TeachingTerms:
        found = terms.get(memory_id)
        if found is None:
            found = terms[memory_id] = teaching_terms(words[memory_id] or "")
        return found

    def by(rule: Callable[[TeachingTerms, TeachingTerms, float], bool]) -> LessonPair:
        def relation(a: str, b: str) -> bool:
            if a not in row or b not in row:
                return False
            close = cosine(row[a], row[b])
            # Both rules (same_teaching, disagree) hold only above TEACHING_COSINE: below it the terms of
            # the two comments are not even read (the indexer compares a new lesson with ~500 others).
            return close >= TEACHING_COSINE and rule(terms_of(a), terms_of(b), close)

        return relation

    return TeachingRelation(by(same_teaching), by(disagree))


class _CosineRows:
    """The cosines of unit vectors, one row computed when a pair in it is first asked for.

    The indexer asks how each of ~10 new lessons relates to ~500 others: 10 rows, not the whole
    510 x 510 product (most of the 16.8 ms of CPU the relation took per batch; now 1.9). A row is the
    whole product's row bit for bit, and the product is symmetric bit for bit, so the order pairs are
    asked in changes no answer.
    """

    def __init__(self, unit: np.ndarray) -> None:
        self._unit = unit
        self._rows: dict[int, np.ndarray] = {}

    def __call__(self, i: int, j: int) -> float:
        known = self._rows.get(i)
        if known is None:
            other = self._rows.get(j)
            if other is not None:
                return float(other[i])
            # numpy's own loop, not `@`: OpenBLAS's threads spin while they wait, and on 2 busy cores the
            # 40 x 40 product of a retrieve's candidates took 3.8 ms of CPU (14.6 wall) where einsum takes
            # 0.12 (0.45), load 10.
            known = self._rows[i] = np.einsum("ij,kj->ik", self._unit[i : i + 1], self._unit)[0]
        return float(known[j])
