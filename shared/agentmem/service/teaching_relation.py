"""Which of an agent's lessons teach the same thing: one relation for the indexer, `retrieve` and the wall.

Two comments can be the same teaching, or disagree, only when their terms are comparable (the same
anchors, one's subject words inside the other's: `domain.teaching.comparable_terms`); their embeddings
are compared only then. Most pairs of lessons fail the terms, so most comments are never embedded for
comparison: the indexer embeds a lesson's comment only when an indexed lesson of its window (or of its
batch) has comparable terms (`comparable_lessons`), and keeps the vector with both lessons.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from agentmem.domain.embedded_text import lesson_embedded_text
from agentmem.domain.lessons import LessonPair, comparison_text, editor_words
from agentmem.domain.models import Memory
from agentmem.domain.teaching import TeachingTerms, comparable_terms, disagree, same_teaching, teaching_terms
from agentmem.ports.embedder import Embedder

_NEVER: LessonPair = lambda a, b: False  # noqa: E731


@dataclass(frozen=True)
class TeachingRelation:
    """How two of a set of lessons (by memoryId) relate: the same teaching, or a disagreement."""

    same: LessonPair
    disagree: LessonPair


def teaching_relation(embedder: Embedder, lessons: Sequence[Memory]) -> TeachingRelation:
    """How two of `lessons` (by memoryId) relate by their editors' words (domain/teaching.py).

    Only lessons with an editor's words are ever the same teaching. The terms of two comments are
    compared first; only a pair whose terms are comparable reads the two comment vectors: the one kept
    with each lesson, or, for a lesson without one, its comment embedded when first needed.
    """
    words = {m.memory_id: editor_words(m.digest) for m in lessons}
    commented = {m.memory_id: m for m in lessons if words[m.memory_id]}
    if len(commented) < 2:
        return TeachingRelation(_NEVER, _NEVER)
    vectors = _UnitCommentVectors(embedder, commented)
    terms: dict[str, TeachingTerms] = {}

    def terms_of(memory_id: str) -> TeachingTerms:
        found = terms.get(memory_id)
        if found is None:
            found = terms[memory_id] = teaching_terms(words[memory_id] or "")
        return found

    def by(rule: Callable[[TeachingTerms, TeachingTerms, float], bool]) -> LessonPair:
        def relation(a: str, b: str) -> bool:
            if a not in commented or b not in commented:
                return False
            terms_a, terms_b = terms_of(a), terms_of(b)
            # Both rules (same_teaching, disagree) need comparable terms: without them no vector is read
            # (the indexer compares a new lesson with ~500 others, nearly all of them on the terms alone).
            if not comparable_terms(terms_a, terms_b):
                return False
            return rule(terms_a, terms_b, vectors.cosine(a, b))

        return relation

    return TeachingRelation(by(same_teaching), by(disagree))


def lesson_terms(memory: Memory) -> TeachingTerms | None:
    """The terms of a lesson's editor's words (`teaching_terms`), None for a lesson without any."""
    words = editor_words(memory.digest)
    return teaching_terms(words) if words else None


def comparable_lessons(
    new: Sequence[Memory], others: Sequence[Memory],
    terms_of: Callable[[Memory], TeachingTerms | None] = lesson_terms,
) -> dict[str, list[Memory]]:
    """For each of `new` (by memoryId): the lessons of `others` and of `new` whose editors' words have
    terms comparable to its own (`comparable_terms`), the only ones it can ever be related to.

    `others` are looked up by their anchors, so a new lesson is compared with the few that name the
    same specifics, not with every lesson of the window. `terms_of` gives a lesson's terms (a caller
    may keep them: a lesson's editor's words never change).
    """
    by_anchors: dict[frozenset[str], list[tuple[Memory, TeachingTerms]]] = {}
    terms_of_new: dict[str, TeachingTerms] = {}
    for position, memory in enumerate([*new, *others]):
        terms = terms_of(memory)
        if terms is None:
            continue
        if position < len(new):
            terms_of_new[memory.memory_id] = terms
        by_anchors.setdefault(terms.anchors, []).append((memory, terms))
    found: dict[str, list[Memory]] = {m.memory_id: [] for m in new}
    for memory_id, terms in terms_of_new.items():
        found[memory_id] = [other for other, other_terms in by_anchors[terms.anchors]
                            if other.memory_id != memory_id and comparable_terms(terms, other_terms)]
    return found


class _UnitCommentVectors:
    """Each lesson's comment vector at unit length, read when first asked: decoded from the bytes kept
    with the lesson (vector_from_bytes' format: little-endian float32), else its comment embedded."""

    def __init__(self, embedder: Embedder, lessons: dict[str, Memory]) -> None:
        self._embedder = embedder
        self._lessons = lessons
        self._unit: dict[str, np.ndarray] = {}

    def cosine(self, a: str, b: str) -> float:
        return float(np.einsum("i,i->", self._vector(a), self._vector(b)))

    def _vector(self, memory_id: str) -> np.ndarray:
        found = self._unit.get(memory_id)
        if found is not None:
            return found
        memory = self._lessons[memory_id]
        dimension = self._embedder.dimension
        if memory.comment_vector and len(memory.comment_vector) == 4 * dimension:
            vector = np.frombuffer(memory.comment_vector, dtype="<f4").astype(np.float32)
        else:
            vector = self._embedder.embed([lesson_embedded_text(comparison_text(memory.digest))])[0]
        norm = np.linalg.norm(vector)
        found = self._unit[memory_id] = vector / (norm if norm else 1.0)
        return found
