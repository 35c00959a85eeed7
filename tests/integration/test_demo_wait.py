"""The demo waits for its lessons on their state: as long as the indexer is busy, never on a fixed clock."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from agentmem.client import MemoryClient
from agentmem.demo.runner import wait_until_indexed
from agentmem.local import lambda_runtime
from agentmem.local.server import create_app

from tests.integration.served import serving


@pytest.fixture
def served(tmp_path: Path, minilm: Any) -> Any:
    app = create_app(tmp_path, ports={"embedder": minilm}, enabled_agents=["auditor"])
    try:
        with serving(app) as url:
            yield MemoryClient(url)
    finally:
        app.close()


def lesson(client: MemoryClient, n: int) -> str:
    run = client.retrieve("auditor", f"Audit the Ridgeline {n} page for hype words.")
    receipt = client.feedback("auditor", run.run_id, "down", f"Case {n}: 'Ridgeline' is our product name.")
    return str(receipt.memory_id)


def test_a_slow_indexer_is_waited_for_as_long_as_its_lessons_are_pending(served: MemoryClient):
    busy = lambda_runtime._environment("indexer", 0)
    busy.acquire()  # the indexer's environment is taken: the lesson stays pending until it is released
    releaser = threading.Timer(6.0, busy.release)
    said: list[str] = []
    try:
        memory_id = lesson(served, 1)
        with pytest.raises(TimeoutError, match="still pending"):
            wait_until_indexed(served, "auditor", {memory_id}, patience=0.5)
        releaser.start()
        waited = wait_until_indexed(served, "auditor", {memory_id}, say=said.append, patience=120)
    finally:
        if not releaser.is_alive() and not releaser.finished.is_set():
            busy.release()  # the timer never started
        releaser.join()
    assert waited >= 5
    assert [m.status for m in served.iter_memories("auditor") if m.memory_id == memory_id] == ["indexed"]
    assert len(said) == 1 and "still indexing 1 lesson" in said[0]


def test_a_deleted_lesson_ends_the_wait_at_once(served: MemoryClient):
    busy = lambda_runtime._environment("indexer", 0)
    busy.acquire()
    try:
        memory_id = lesson(served, 2)
        served.delete_memory("auditor", memory_id)
        started = time.monotonic()
        with pytest.raises(RuntimeError, match="deleted or gone"):
            wait_until_indexed(served, "auditor", {memory_id}, patience=60)
        assert time.monotonic() - started < 5
    finally:
        busy.release()
