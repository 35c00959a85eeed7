"""The local stand-in for EventBridge's delivery: drains the outbox into the consuming functions.

Each event goes to every function whose catalog entry consumes its
detail-type, through that function's real `lambda_handler`. A handler that
raises is retried with exponential backoff; after `max_attempts` the event is
parked as dead, like an event in the dead-letter queue in AWS.
"""

from __future__ import annotations

import logging
import threading
import time

from agentmem.adapters.local.event_bus import SqliteEventBus, StoredEvent
from agentmem.local.lambda_runtime import invoke

log = logging.getLogger(__name__)


def consumers_of(detail_type: str) -> list[str]:
    from functions.catalog import FUNCTIONS

    return [spec.name for spec in FUNCTIONS if detail_type in spec.consumes]


class EventWorker:
    """Delivers pending events to their consumers, in a background thread or on demand."""

    def __init__(
        self, bus: SqliteEventBus, *, max_attempts: int = 8, base_delay: float = 0.5, max_delay: float = 60
    ):
        self.bus = bus
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def deliver(self, event: StoredEvent) -> bool:
        """Run the event's consumers; ack it on success, schedule a retry (or park it) on failure."""
        detail_type = event.envelope["detail-type"]
        try:
            for function in consumers_of(detail_type):
                invoke(function, event.envelope)
        except Exception as exc:
            attempts = event.attempts + 1
            retry_in = (
                None
                if attempts >= self.max_attempts
                else min(self.max_delay, self.base_delay * 2 ** (attempts - 1))
            )
            log.warning(
                "event delivery failed (attempt %d): %s: %s", attempts, detail_type, type(exc).__name__
            )
            self.bus.fail(event.event_id, f"{type(exc).__name__}: {exc}", retry_in=retry_in)
            return False
        self.bus.ack(event.event_id)
        return True

    def drain(self, timeout: float = 10.0) -> int:
        """Deliver due events until none is due or `timeout` passes; returns how many were delivered."""
        deadline = time.monotonic() + timeout
        delivered = 0
        while time.monotonic() < deadline:
            due = self.bus.due()
            if not due:
                break
            for event in due:
                delivered += self.deliver(event)
        return delivered

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agentmem-event-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.bus.wake()
        if self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.drain(timeout=5.0)
                wait = self.bus.next_due_in()
            except Exception:
                log.exception("event worker loop failed; retrying")
                wait = 1.0
            if self._stop.is_set():
                break
            self.bus.wait_for_events(1.0 if wait is None else min(max(wait, 0.01), 1.0))
