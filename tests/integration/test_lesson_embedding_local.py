"""A lesson is embedded with its personal-data tokens read as their kind, and searched the same way.

The indexer, `retrieve` and `agentmem reindex` must render a lesson's texts alike
(`agentmem.domain.embedded_text.lesson_embedded_text`): a lesson indexed one way and searched the other
would lose similarity to every input naming a person.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from agentmem.domain.embedded_text import lesson_embedded_text
from agentmem.domain.lessons import comparison_text
from agentmem.domain.pii import TOKEN_PATTERN
from agentmem.local.server import LocalApp, create_app
from agentmem.ports.embedder import vector_bytes, vector_from_bytes
from agentmem.ports.vectors import VectorItem, VectorQuery
from agentmem.service.maintenance import reindex_lessons

from tests.integration.local_client import LocalCaller

AGENT = "support"
INPUT = "Write a reply to Maria Gonzalez about her refund for order 1182."
COMMENT = "Greet Maria Gonzalez by her first name and say when the refund lands."
# COMMENT in other words: the same anchors (her name's token) and subject words.
PARAPHRASE = "Greet Maria Gonzalez by her first name, and tell her when the refund lands."
UNRELATED = "Quote the order number 1182 in the subject line."


@pytest.fixture
def app(tmp_path: Path, minilm: Any, monkeypatch: pytest.MonkeyPatch) -> LocalApp:
    monkeypatch.setenv("AGENTMEM_ENABLED_AGENTS", AGENT)
    local = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    yield local
    local.close()


def _one_lesson(app: LocalApp, comment: str = COMMENT) -> tuple[str, str]:
    call = LocalCaller(app)
    run_id = call("POST", f"/v1/agents/{AGENT}/runs", {"input": INPUT, "output": "Dear customer, ..."})[1]["runId"]
    receipt = call("POST", f"/v1/agents/{AGENT}/runs/{run_id}/feedback", {"rating": "down", "comment": comment})[1]
    app.worker.drain()
    stored = app.services.memory.store.get_memory(app.services.settings.tenant, AGENT, receipt["memoryId"])
    assert stored is not None and stored.status == "indexed"
    return stored.memory_id, stored.digest


def _similarity(app: LocalApp, memory_id: str, vector: np.ndarray) -> float:
    tenant = app.services.settings.tenant
    hits = app.services.memory.vectors.search(VectorQuery(tenant, "lesson", AGENT, vector, 5))
    return next(hit.similarity for hit in hits if hit.item_id == memory_id)


def _rendered_vectors(minilm: Any, digest: str) -> tuple[np.ndarray, np.ndarray]:
    # The indexer's own call: the digest and the comparison text in one batch.
    both = minilm.embed([lesson_embedded_text(digest), lesson_embedded_text(comparison_text(digest))])
    return both[0], both[1]


def _comment_vector(app: LocalApp, memory_id: str) -> bytes | None:
    stored = app.services.memory.store.get_memory(app.services.settings.tenant, AGENT, memory_id)
    assert stored is not None
    return stored.comment_vector


def test_the_indexer_embeds_the_digest_and_the_comment_with_tokens_read_as_kinds(app: LocalApp, minilm: Any) -> None:
    memory_id, digest = _one_lesson(app)
    _one_lesson(app, PARAPHRASE)  # a comment the first can be compared with: both comments are embedded
    assert TOKEN_PATTERN.search(digest), "the name should have been masked into a token"
    vector, comment_vector = _rendered_vectors(minilm, digest)
    assert _similarity(app, memory_id, vector) == pytest.approx(1.0, abs=1e-5)
    stored = app.services.memory.store.get_memory(app.services.settings.tenant, AGENT, memory_id)
    assert stored is not None and stored.comment_vector is not None
    np.testing.assert_allclose(vector_from_bytes(stored.comment_vector, minilm.dimension), comment_vector, atol=1e-6)
    # The tokens as stored (15 word pieces each) would give another vector.
    assert _similarity(app, memory_id, minilm.embed([digest])[0]) < 0.99


def test_a_comment_is_embedded_once_a_lesson_it_can_be_compared_with_is_indexed(app: LocalApp) -> None:
    first, _ = _one_lesson(app)
    unrelated, _ = _one_lesson(app, UNRELATED)
    # No lesson could be the same teaching as either, or disagree with it: no comment embedded.
    assert _comment_vector(app, first) is None and _comment_vector(app, unrelated) is None
    paraphrase, _ = _one_lesson(app, PARAPHRASE)
    # The paraphrase's terms are comparable to the first's: both comments are embedded and kept.
    assert _comment_vector(app, first) is not None and _comment_vector(app, paraphrase) is not None
    assert _comment_vector(app, unrelated) is None
    lessons = {m.memory_id: m for m in app.services.memory.newest_lessons(AGENT)}
    assert lessons[paraphrase].group_id == first and lessons[unrelated].group_id == unrelated


def test_reindex_replaces_vectors_of_the_old_rendering_with_the_new(app: LocalApp, minilm: Any) -> None:
    memory_id, digest = _one_lesson(app)
    memory, tenant = app.services.memory, app.services.settings.tenant
    # A lesson as an older version indexed it: the digest and comment embedded with their tokens as stored.
    old_vector, old_comment = minilm.embed([digest, comparison_text(digest)])
    stored = memory.store.get_memory(tenant, AGENT, memory_id)
    assert stored is not None
    memory.vectors.upsert([VectorItem(tenant, "lesson", AGENT, memory_id, old_vector, stored.created_at)])
    memory.store.update_memory(tenant, AGENT, memory_id, comment_vector=vector_bytes(old_comment))

    assert reindex_lessons(memory).indexed == 1

    vector, comment_vector = _rendered_vectors(minilm, digest)
    assert _similarity(app, memory_id, vector) == pytest.approx(1.0, abs=1e-5)
    again = memory.store.get_memory(tenant, AGENT, memory_id)
    assert again is not None and again.comment_vector is not None and again.status == "indexed"
    np.testing.assert_allclose(vector_from_bytes(again.comment_vector, minilm.dimension), comment_vector, atol=1e-6)


def test_retrieve_searches_lessons_with_its_input_rendered_as_the_lessons_are(app: LocalApp, minilm: Any) -> None:
    memory_id, _ = _one_lesson(app)
    answer = LocalCaller(app)("POST", f"/v1/agents/{AGENT}/retrieve", {"input": INPUT, "topK": 5})[1]
    found = {lesson["memoryId"]: lesson["similarity"] for lesson in answer["lessons"]}
    # The run stored the input as masked: that text, rendered, is what was searched with.
    masked_input = app.services.memory.get_run(AGENT, answer["runId"]).input
    assert TOKEN_PATTERN.search(masked_input)
    expected = _similarity(app, memory_id, minilm.embed([lesson_embedded_text(masked_input)])[0])
    assert found[memory_id] == pytest.approx(expected, abs=1e-5)
    assert found[memory_id] != pytest.approx(_similarity(app, memory_id, minilm.embed([masked_input])[0]), abs=1e-3)
