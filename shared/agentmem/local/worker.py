"""The local stand-in for EventBridge's delivery: drains the outbox into the consuming functions.

Each function whose catalog entry consumes a detail-type is subscribed to the outbox and gets its
own delivery of every such event, through its real `lambda_handler`, from its own thread (as each
EventBridge rule target is invoked on its own): a slow consolidation never delays indexing. A
handler that raises is retried with exponential backoff; after `max_attempts` that consumer's
delivery is parked as dead, like an event in the dead-letter queue in AWS.

A sweep (`sweep`, every `sweep_interval` seconds) re-drives what no event will: lessons left
pending longer than a few minutes (an event lost, the embedder down when it came).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from agentmem.adapters.local.event_bus import SqliteEventBus, StoredEvent
from agentmem.backoff import backoff
from agentmem.local.lambda_runtime import invoke

log = logging.getLogger(__name__)

# A lesson pending this long has lost its event (delivery takes well under a second locally).
SWEEP_PENDING_OLDER_THAN_SECONDS = 180.0
SWEEP_INTERVAL_SECONDS = 60.0


def consumers() -> dict[str, tuple[str, ...]]:
    """Every consuming function of the catalog and the detail-types it consumes."""
    from functions.catalog import FUNCTIONS

    return {spec.name: spec.consumes for spec in FUNCTIONS if spec.consumes}


def consumers_of(detail_type: str) -> list[str]:
    return [name for name, types in consumers().items() if detail_type in types]


class EventWorker:
    """Delivers pending events to their consumers, one thread per consumer, or on demand (`drain`)."""

    def __init__(
        self,
        bus: SqliteEventBus,
        *,
        max_attempts: int = 8,
        base_delay: float = 0.5,
        max_delay: float = 60,
        sweep: Callable[[], int] | None = None,
        sweep_interval: float = SWEEP_INTERVAL_SECONDS,
    ):
        self.bus = bus
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.sweep = sweep
        self.sweep_interval = sweep_interval
        self.consumers = consumers()
        for name, detail_types in self.consumers.items():
            bus.subscribe(name, detail_types)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def deliver_to(self, consumer: str, event: StoredEvent) -> bool:
        """Run one consumer on one event; ack its delivery, or schedule a retry (or park it) on failure."""
        detail_type = event.envelope["detail-type"]
        try:
            invoke(consumer, event.envelope)
        except Exception as exc:
            attempts = event.attempts + 1
            retry_in = (
                None if attempts >= self.max_attempts
                else min(self.max_delay, self.base_delay * 2 ** (attempts - 1))
            )
            log.warning("event delivery failed (attempt %d): %s -> %s: %s",
                        attempts, detail_type, consumer, type(exc).__name__)
            self.bus.fail_delivery(event.event_id, consumer, f"{type(exc).__name__}: {exc}", retry_in=retry_in)
            return False
        self.bus.ack_delivery(event.event_id, consumer)
        return True

    def drain(self, timeout: float = 10.0) -> int:
        """Deliver every due delivery, in this thread, until none is due or `timeout` passes; how many succeeded."""
        deadline = time.monotonic() + timeout
        delivered = 0
        while time.monotonic() < deadline:
            due = [(name, event) for name in self.consumers for event in self.bus.due_for(name)]
            if not due:
                break
            for name, event in due:
                delivered += self.deliver_to(name, event)
        return delivered

    def start(self) -> None:
        for name in self.consumers:
            thread = threading.Thread(target=self._run, args=(name,), name=f"agentmem-deliver-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        if self.sweep is not None:
            thread = threading.Thread(target=self._sweep_loop, name="agentmem-sweep", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.bus.wake()
        for thread in self._threads:
            thread.join(timeout)

    def _run(self, consumer: str) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                for event in self.bus.due_for(consumer):
                    if self._stop.is_set():
                        return
                    self.deliver_to(consumer, event)
                wait = self.bus.next_due_for(consumer)
                failures = 0
            except Exception:
                log.exception("event worker of %s failed; retrying", consumer)
                wait = backoff(failures, 0.5, 5.0)
                failures += 1
            if self._stop.is_set():
                break
            if wait is None or wait > 0:
                self.bus.wait_for_events(1.0 if wait is None else min(wait, 1.0), consumer)

    def _sweep_loop(self) -> None:
        assert self.sweep is not None
        while not self._stop.wait(self.sweep_interval):
            try:
                swept = self.sweep()
                if swept:
                    log.info("sweep indexed %d lesson(s) left pending", swept)
            except Exception as exc:
                log.warning("sweep failed (%s); the next one tries again", type(exc).__name__)
