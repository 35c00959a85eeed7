"""The local worker: each consumer gets its own delivery, so one that is slow or failing holds up no other,
and the sweep indexes lessons whose event was lost."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agentmem.adapters.local.event_bus import SqliteEventBus
from agentmem.local import lambda_runtime
from agentmem.local.server import create_app
from agentmem.local.worker import EventWorker
from agentmem.ports.events import DomainEvent

from functions.catalog import CONSUMER_BATCH_SIZE
from tests.integration.indexer_watch import GIVE_UP_SECONDS, after_indexing, watch_indexer
from tests.integration.local_client import LocalCaller

AUDIT = "Audit this outdoor gear article for brand voice: our trail magic moments make every hike special."
COMMENT = "'Trail magic' is our brand's own idiom, used on purpose. Do not flag it."


def feedback(call: LocalCaller) -> str:
    status, run = call("POST", "/v1/agents/auditor/retrieve", {"input": AUDIT})
    assert status == 200
    status, receipt = call("POST", f"/v1/agents/auditor/runs/{run['runId']}/feedback",
                           {"rating": "down", "comment": COMMENT})
    assert status == 202
    return str(receipt["memoryId"])


def lesson_status(call: LocalCaller, memory_id: str) -> str | None:
    items = call("GET", "/v1/agents/auditor/memories?limit=100")[1]["items"]
    return next((m.get("status") for m in items if m["memoryId"] == memory_id), None)


def retrievable(call: LocalCaller, memory_id: str) -> bool:
    lessons = call("POST", "/v1/agents/auditor/retrieve", {"input": AUDIT})[1]["lessons"]
    return memory_id in [lesson["memoryId"] for lesson in lessons]


def test_a_consolidation_that_hangs_does_not_delay_indexing(tmp_path: Path, minilm: Any, monkeypatch):
    consolidating = threading.Event()  # the consolidate delivery has begun (and waits for its environment)
    load_handler = lambda_runtime.load_handler

    def observed(function_name: str, environment: int = 0) -> Any:
        if function_name == "consolidate":
            consolidating.set()
        return load_handler(function_name, environment)

    monkeypatch.setattr(lambda_runtime, "load_handler", observed)
    indexed = watch_indexer(monkeypatch)  # wraps `observed`
    app = create_app(tmp_path, ports={"embedder": minilm}, enabled_agents=["auditor"])
    call = LocalCaller(app)
    # The consolidate function's execution environment is busy (held here) for as long as the test runs.
    busy = lambda_runtime._environment("consolidate", 0)
    busy.acquire()
    try:
        status, _ = call("POST", "/v1/users/u1/threads/t1/turns",
                         {"turns": [{"role": "user", "content": "I prefer metric units."}]})
        assert status == 201
        assert consolidating.wait(GIVE_UP_SECONDS)
        assert app.worker.bus.next_due_for("consolidate") == 0.0
        memory_id = feedback(call)
        # Held for good: with one delivery for all consumers the indexer would never run again.
        # Checked after each indexer invocation (the turns' indexing may come first).
        after_indexing(indexed, lambda: retrievable(call, memory_id))
    finally:
        busy.release()
        app.close()


def test_a_failing_consumer_parks_only_its_own_delivery(tmp_path: Path):
    bus = SqliteEventBus(tmp_path / "events.db")
    bus.subscribe("fast", ["Thing"])
    bus.subscribe("broken", ["Thing"])
    (receipt,) = bus.publish([DomainEvent("Thing", {"n": 1})])
    event_id = receipt.event_id or ""
    bus.ack_delivery(event_id, "fast")
    bus.fail_delivery(event_id, "broken", "RuntimeError: boom", retry_in=None)
    assert bus.due_for("fast") == [] and bus.due_for("broken") == []
    assert bus.counts() == {"dead": 1}
    assert bus.redrive_dead() == 1
    assert [e.event_id for e in bus.due_for("broken")] == [event_id] and bus.due_for("fast") == []
    bus.ack_delivery(event_id, "broken")
    assert bus.counts() == {"done": 1}
    bus.close()


def test_events_published_before_anyone_subscribed_are_delivered_after(tmp_path: Path):
    bus = SqliteEventBus(tmp_path / "events.db")
    (receipt,) = bus.publish([DomainEvent("Thing", {"n": 1})])
    assert [e.event_id for e in bus.due()] == [receipt.event_id]
    bus.subscribe("late", ["Thing"])
    assert [e.event_id for e in bus.due_for("late")] == [receipt.event_id]
    (unmatched,) = bus.publish([DomainEvent("Other", {})])
    assert unmatched.event_id not in [e.event_id for e in bus.due()]  # nobody consumes it: done at once
    bus.close()


def test_the_sweep_indexes_a_lesson_whose_event_was_lost(tmp_path: Path, minilm: Any):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, enabled_agents=["auditor"])
    call = LocalCaller(app)
    try:
        memory_id = feedback(call)
        bus = app.worker.bus
        for event in bus.due():
            bus.ack(event.event_id)  # the event is lost: nothing will deliver it
        assert lesson_status(call, memory_id) == "pending"
        swept = threading.Event()

        def sweep() -> int:
            count = app.services.memory.index_pending(older_than_seconds=0)
            if count:
                swept.set()
            return count

        sweeper = EventWorker(bus, sweep=sweep, sweep_interval=0.1)
        sweeper.start()
        try:
            assert swept.wait(GIVE_UP_SECONDS), "the sweep never indexed the lesson"
        finally:
            sweeper.stop()
        assert lesson_status(call, memory_id) == "indexed" and retrievable(call, memory_id)
    finally:
        app.close()


class Clock:
    """The bus's time, moved on by the test."""

    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        return self.now


class CountingEmbedder:
    """The real model, counting the calls and texts it is given."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        self.calls: list[int] = []

    def embed(self, texts: Any) -> Any:
        self.calls.append(len(texts))
        return self.inner.embed(texts)


def test_the_lessons_due_at_once_reach_the_indexer_as_one_batch_embedded_in_one_call(tmp_path: Path, minilm: Any):
    embedder = CountingEmbedder(minilm)
    app = create_app(tmp_path, start_worker=False, ports={"embedder": embedder}, enabled_agents=["auditor"])
    call = LocalCaller(app)
    try:
        memory_ids = []
        for n in range(6):
            status, run = call("POST", "/v1/agents/auditor/runs", {"input": f"{AUDIT} ({n})", "output": "FLAG"})
            status, receipt = call("POST", f"/v1/agents/auditor/runs/{run['runId']}/feedback",
                                   {"rating": "down", "comment": f"{COMMENT} Case {n}."})
            assert status == 202
            memory_ids.append(receipt["memoryId"])
        embedder.calls.clear()
        assert app.worker.drain() == 6
        # One call: each lesson's digest; no comment, since no two are comparable (each names its case number).
        assert embedder.calls == [6]
        assert {lesson_status(call, m) for m in memory_ids} == {"indexed"}
    finally:
        app.close()


def test_a_record_that_fails_in_a_batch_is_retried_alone_and_the_rest_are_acknowledged(tmp_path: Path, minilm: Any):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, enabled_agents=["auditor"])
    call = LocalCaller(app)
    try:
        good = feedback(call)
        # An event the indexer cannot parse (no memoryId), due in the same batch as the good one.
        app.worker.bus.publish([DomainEvent("FeedbackSubmitted", {"tenant": app.settings.tenant})])
        assert app.worker.drain(timeout=2) == 1
        assert lesson_status(call, good) == "indexed"
        assert [e.event_id for e in app.worker.bus.due_for("indexer")] == []  # backing off
        assert app.worker.bus.next_due_for("indexer") is not None  # ... and still pending, alone
        assert app.worker.bus.counts() == {"done": 1, "pending": 1}
    finally:
        app.close()


def test_a_batch_whose_embedder_is_down_comes_back_whole_and_is_indexed_when_it_is_up(tmp_path: Path, minilm: Any):
    from agentmem.domain.errors import BackendUnavailable

    class Flaky(CountingEmbedder):
        down = True

        def embed(self, texts: Any) -> Any:
            if self.down:
                raise BackendUnavailable("embedder", "model server unreachable")
            return super().embed(texts)

    embedder = Flaky(minilm)
    clock = Clock()
    bus = SqliteEventBus(tmp_path / "events.db", clock=clock)
    app = create_app(tmp_path, start_worker=False, ports={"embedder": embedder, "bus": bus},
                     enabled_agents=["auditor"])
    app.worker.base_delay = 0.2  # the first retry is due 0.2 s (of the bus's clock) after the failure
    call = LocalCaller(app)
    try:
        lessons = []
        for n in range(3):
            _, run = call("POST", "/v1/agents/auditor/runs", {"input": f"{AUDIT} {n}", "output": "FLAG"})
            lessons.append(call("POST", f"/v1/agents/auditor/runs/{run['runId']}/feedback",
                                {"rating": "down", "comment": f"{COMMENT} {n}"})[1]["memoryId"])
        assert app.worker.drain(timeout=0.1) == 0
        assert {lesson_status(call, m) for m in lessons} == {"pending"}
        assert app.worker.bus.counts() == {"pending": 3}
        embedder.down = False
        clock.now += 0.25
        assert app.worker.drain() == 3
        assert embedder.calls == [3]  # one call: each digest (their comments name different numbers)
        assert {lesson_status(call, m) for m in lessons} == {"indexed"}
    finally:
        app.close()


def _lesson_event(number: int) -> DomainEvent:
    return DomainEvent("FeedbackSubmitted", {"tenant": "local", "agentId": "auditor", "memoryId": f"mem_{number}"})


def test_the_indexers_thread_waits_for_a_full_batch_and_goes_as_soon_as_one_is_due(tmp_path: Path):
    bus = SqliteEventBus(tmp_path / "events.db")
    worker = EventWorker(bus, batching_windows={"indexer": 600.0})  # a window no test outlasts
    bus.publish([_lesson_event(0)])
    gathered: list[int] = []
    waiting = threading.Thread(target=lambda: gathered.append(worker.gather("indexer")))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()  # one lesson due, the window open: it waits for more
    bus.publish([_lesson_event(n) for n in range(1, CONSUMER_BATCH_SIZE)])
    waiting.join(GIVE_UP_SECONDS)
    assert not waiting.is_alive() and gathered == [CONSUMER_BATCH_SIZE]  # woken by the publish, not the window
    bus.close()


def test_a_consumer_without_a_batching_window_or_with_nothing_due_does_not_wait(tmp_path: Path):
    bus = SqliteEventBus(tmp_path / "events.db")
    worker = EventWorker(bus, batching_windows={"indexer": 600.0})
    assert worker.gather("indexer") == 0  # nothing due: the thread's own wait on the bus follows
    bus.publish([_lesson_event(0)])
    assert EventWorker(bus, batching_windows={}).gather("indexer") == 1
    bus.close()
