"""The demo waits for its lessons on their state: as long as the indexer is busy, never on a fixed clock."""

from __future__ import annotations

import threading
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
    released = threading.Event()
    said: list[str] = []

    def say(line: str) -> None:
        # The demo has waited long enough to say so: only now may the indexer run.
        said.append(line)
        released.set()
        busy.release()

    try:
        memory_id = lesson(served, 1)
        with pytest.raises(TimeoutError, match="still pending"):
            wait_until_indexed(served, "auditor", {memory_id}, patience=0.5)
        wait_until_indexed(served, "auditor", {memory_id}, say=say, patience=120)
    finally:
        if not released.is_set():
            busy.release()
    assert [m.status for m in served.iter_memories("auditor") if m.memory_id == memory_id] == ["indexed"]
    assert len(said) == 1 and "still indexing 1 lesson" in said[0]


def test_a_deleted_lesson_ends_the_wait_at_once(served: MemoryClient):
    busy = lambda_runtime._environment("indexer", 0)
    busy.acquire()
    try:
        memory_id = lesson(served, 2)
        served.delete_memory("auditor", memory_id)
        # A wait that ran on would end in TimeoutError ("still pending"), not this.
        with pytest.raises(RuntimeError, match="deleted or gone"):
            wait_until_indexed(served, "auditor", {memory_id}, patience=60)
    finally:
        busy.release()
