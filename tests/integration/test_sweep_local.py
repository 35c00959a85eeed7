"""The periodic sweep on one machine: pending lessons indexed, expired lessons' vectors and old runs gone.

Real local adapters (SQLite record store and vector index, MiniLM), the handlers through the local
app; only the service's clock is moved forward, as the days would pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.local.server import create_app
from agentmem.ports.vectors import VectorQuery
from agentmem.service.sweep import sweep

from tests.integration.local_client import LocalCaller

AGENT = "auditor"
DAY = 86_400.0


@pytest.fixture
def app(tmp_path: Path, minilm: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AGENTMEM_ENABLED_AGENTS", AGENT)
    monkeypatch.setenv("AGENTMEM_MAX_MEMORY_AGE_DAYS", "30")
    monkeypatch.setenv("AGENTMEM_RETENTION_DAYS", "60")
    built = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    yield built
    built.close()


def lesson(app: Any, text: str) -> tuple[str, str]:
    call = LocalCaller(app)
    run_id = call("POST", f"/v1/agents/{AGENT}/retrieve", {"input": text})[1]["runId"]
    status, receipt = call("POST", f"/v1/agents/{AGENT}/runs/{run_id}/feedback", {"rating": "down", "comment": text})
    assert status == 202
    app.worker.drain()
    return run_id, receipt["memoryId"]


def vectors_of(app: Any, memory_id: str) -> int:
    memory = app.services.memory
    query = memory.embedder.embed(["Audit the brand voice of this text"])[0]
    hits = memory.vectors.search(VectorQuery(memory.tenant, "lesson", AGENT, query, 10))
    return sum(1 for hit in hits if hit.item_id == memory_id)


def test_a_lesson_past_its_age_loses_its_vector_and_runs_past_the_retention_are_removed(app):
    memory = app.services.memory
    old_run, old_lesson = lesson(app, "Audit the brand voice of this text: trail magic.")
    assert vectors_of(app, old_lesson) == 1
    created = memory.store.get_memory(memory.tenant, AGENT, old_lesson).created_at
    original = memory.clock
    try:
        memory.clock = lambda: created + 31 * DAY
        report = sweep(memory)
        assert (report.lessons_expired, report.runs_purged) == (1, 0)
        assert vectors_of(app, old_lesson) == 0
        assert memory.store.get_memory(memory.tenant, AGENT, old_lesson).status == "deleted"
        assert memory.store.get_run(memory.tenant, AGENT, old_run) is not None

        memory.clock = lambda: created + 61 * DAY
        assert sweep(memory).runs_purged == 1
        assert memory.store.get_run(memory.tenant, AGENT, old_run) is None
        assert sweep(memory).as_dict() == {"pendingIndexed": 0, "lessonsExpired": 0, "runsPurged": 0}
    finally:
        memory.clock = original


def test_a_young_lesson_and_its_run_are_left_alone(app):
    memory = app.services.memory
    run_id, memory_id = lesson(app, "Audit the brand voice of this text: summit views.")

    assert sweep(memory).as_dict() == {"pendingIndexed": 0, "lessonsExpired": 0, "runsPurged": 0}
    assert vectors_of(app, memory_id) == 1 and memory.store.get_run(memory.tenant, AGENT, run_id) is not None
