"""The teaching relation answers every pair as the rules do on the whole cosine product, in any order asked."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from agentmem.domain.lessons import build_digest, editor_words
from agentmem.domain.models import Memory
from agentmem.domain.teaching import comparable_terms, disagree, same_teaching, teaching_terms
from agentmem.ports.embedder import vector_bytes
from agentmem.service.teaching_relation import comparable_lessons, lesson_terms, teaching_relation

DIMENSION = 8
COMMENTS = [
    "Do not flag 'trail magic': it is our idiom.",
    "Don't flag 'trail magic', it's our idiom.",
    "Flag 'trail magic' as a cliche.",
    "Keep answers under 120 words.",
    "Answers must stay under 120 words.",
    "Never promise a delivery date.",
]


class NoModel:
    """Every lesson here carries its comment vector: the relation must not ask for one."""

    dimension = DIMENSION
    model_id = "none"

    def embed(self, texts):
        raise AssertionError(f"embedded {len(texts)} texts")


def lessons(seed: int) -> tuple[list[Memory], np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((3, DIMENSION)).astype(np.float32)
    vectors = []
    found = []
    for number in range(40):
        # Near-duplicates of three directions, so that many pairs pass TEACHING_COSINE and the terms decide.
        vector = base[number % 3] + rng.normal(0, 0.4, DIMENSION).astype(np.float32)
        vectors.append(vector)
        comment = COMMENTS[number % len(COMMENTS)]
        found.append(Memory("acme", "agent", f"m{number:02d}", "run", "fb", "up", comment, f"Editor: {comment}",
                            1.0, 1_800_000_000.0 + number, comment_vector=vector_bytes(vector)))
    return found, np.array(vectors, dtype=np.float32)


def test_every_pair_relates_as_the_rules_say_on_the_whole_cosine_product_in_any_order_asked():
    for seed in range(5):
        found, vectors = lessons(seed)
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        cosine = np.einsum("ij,kj->ik", unit, unit)
        terms = [teaching_terms(m.comment or "") for m in found]
        pairs = [(i, j) for i in range(len(found)) for j in range(len(found))]
        np.random.default_rng(seed).shuffle(pairs)
        relation = teaching_relation(NoModel(), found)
        same_seen = 0
        for i, j in pairs:
            a, b = found[i].memory_id, found[j].memory_id
            expected_same = same_teaching(terms[i], terms[j], float(cosine[i, j]))
            assert relation.same(a, b) is expected_same, (a, b)
            assert relation.disagree(a, b) is disagree(terms[i], terms[j], float(cosine[i, j])), (a, b)
            same_seen += expected_same
        assert same_seen > len(found)  # the rule, not only the cosine threshold, was exercised


def test_a_lesson_outside_the_set_relates_to_nothing():
    found, _ = lessons(0)
    relation = teaching_relation(NoModel(), found)
    assert not relation.same("m00", "unknown") and not relation.disagree("unknown", "m00")


class RecordingModel:
    """A deterministic stand-in model (a fake embedder, not the thing under test) that records what it embeds."""

    dimension = DIMENSION
    model_id = "recording"

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts):
        self.embedded.extend(texts)
        rows = [np.random.default_rng(sum(map(ord, t))).standard_normal(DIMENSION) for t in texts]
        return np.array(rows, dtype=np.float32)


def test_only_a_pair_with_comparable_terms_reads_the_comment_vectors():
    found, _ = lessons(0)
    for memory in found:
        memory.comment_vector = None  # indexed before comments were embedded: each would take a model call
    model = RecordingModel()
    relation = teaching_relation(model, found)
    # "Keep answers under 120 words." and "Never promise a delivery date." name other specifics.
    assert not relation.same("m03", "m05") and not relation.disagree("m05", "m03")
    assert model.embedded == []
    relation.same("m00", "m01")  # the same quoted phrase and subject: their embeddings decide
    assert sorted(model.embedded) == sorted({found[0].comment, found[1].comment})


def test_comparable_lessons_are_those_every_pair_compared_finds():
    found, _ = lessons(1)
    alone = "Never put an emoji in a headline."  # no other comment shares its terms
    new = [*found[:7], Memory("acme", "agent", "alone", "run", "fb", "up", alone, f"Editor: {alone}", 1.0, 0.0)]
    others = found[7:]
    got = comparable_lessons(new, others)
    for lesson in new:
        terms = teaching_terms(lesson.comment or "")
        expected = [m.memory_id for m in [*new, *others] if m.memory_id != lesson.memory_id
                    and comparable_terms(terms, teaching_terms(m.comment or ""))]
        assert sorted(m.memory_id for m in got[lesson.memory_id]) == sorted(expected)
    assert any(got.values()) and not all(got.values())  # both kinds of answer were exercised


def test_a_lessons_terms_survive_the_digest_an_erase_rebuilds():
    # The indexer keeps each lesson's terms by memoryId; an erase rewrites the digest from the editor's words.
    comment = "Do not flag 'trail magic':\n  it is our   idiom."
    lesson = Memory("acme", "agent", "m", "run", "fb", "up", comment,
                    build_digest(comment, "FLAG 'trail magic'", "Audit the article", 500), 1.0, 0.0)
    erased = build_digest(editor_words(lesson.digest), None, "", 500)
    assert erased != lesson.digest
    assert lesson_terms(lesson) == lesson_terms(replace(lesson, digest=erased)) is not None
