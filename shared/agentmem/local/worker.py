"""The local stand-in for EventBridge's delivery: drains the outbox into the consuming functions.

Each function whose catalog entry consumes a detail-type is subscribed to the outbox and gets its
own delivery of every such event, through its real `lambda_handler`, from its own thread (as each
consumer has its own SQS queue in AWS): a slow consolidation never delays indexing. As SQS's event
source mapping does, the worker hands a consumer what is due in batches of up to
`CONSUMER_BATCH_SIZE` SQS records and reads `batchItemFailures` back: at a steady feedback rate
the indexer embeds the lessons that arrived during its last batch together, so a lesson costs a
fraction of a forward pass of its own. It waits on the bus (woken by every publish), never on a
timer. A record that fails is retried with exponential backoff; after `max_attempts` that
consumer's delivery is parked as dead, like a message in the dead-letter queue in AWS.

The indexer's thread waits up to `BATCHING_WINDOW_SECONDS` after a lesson becomes due for more to join
its batch (as SQS's `MaximumBatchingWindowInSeconds` does, which counts whole seconds): a batch pays
once for reading the grouping window and for a forward pass, about 5 ms of CPU, so a lesson indexed in a
batch of 1 cost 10.2 ms and in a batch of 10 4.2 (docs/speed.md). `drain` never waits.

A sweep (`sweep`, every `sweep_interval` seconds) re-drives what no event will: lessons left
pending longer than a few minutes (an event lost, the embedder down when it came).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from agentmem.adapters.local.event_bus import SqliteEventBus, StoredEvent
from agentmem.backoff import backoff
from agentmem.local.lambda_runtime import invoke
from functions.catalog import CONSUMER_BATCH_SIZE

log = logging.getLogger(__name__)

# A lesson pending this long has lost its event (delivery takes well under a second locally).
SWEEP_PENDING_OLDER_THAN_SECONDS = 180.0
SWEEP_INTERVAL_SECONDS = 60.0
# How long a consumer's thread waits for a fuller batch once fewer than CONSUMER_BATCH_SIZE are due.
# Indexing beside side_by_side.py's requests, its batches grew from 1.0 lessons to 6.5 (0.025-0.1 s gave 4-10,
# all within noise of each other in lessons/s); a lesson waits at most this long.
BATCHING_WINDOW_SECONDS = {"indexer": 0.05}


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
        batching_windows: dict[str, float] | None = None,
    ):
        self.bus = bus
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.sweep = sweep
        self.sweep_interval = sweep_interval
        self.batching_windows = BATCHING_WINDOW_SECONDS if batching_windows is None else batching_windows
        self.consumers = consumers()
        for name, detail_types in self.consumers.items():
            bus.subscribe(name, detail_types)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def deliver(self, consumer: str, events: Sequence[StoredEvent]) -> int:
        """Run one consumer on a batch of its events; ack each that succeeded, retry (or park) each that
        failed; how many succeeded."""
        try:
            answer = invoke(consumer, sqs_batch(consumer, events))
            reported = {str(f["itemIdentifier"]) for f in (answer or {}).get("batchItemFailures", [])}
            failed = [event for event in events if event.event_id in reported]
            error = "the consumer reported it failed (batchItemFailures; its log names the error)"
        except Exception as exc:  # the whole invocation failed: every record comes back, as in SQS
            failed, error = list(events), f"{type(exc).__name__}: {exc}"
        for event in failed:
            attempts = event.attempts + 1
            retry_in = (
                None if attempts >= self.max_attempts
                else min(self.max_delay, self.base_delay * 2 ** (attempts - 1))
            )
            log.warning("event delivery failed (attempt %d): %s -> %s: %s",
                        attempts, event.envelope["detail-type"], consumer, error.split(":", 1)[0])
            self.bus.fail_delivery(event.event_id, consumer, error, retry_in=retry_in)
        failed_ids = {event.event_id for event in failed}
        for event in events:
            if event.event_id not in failed_ids:
                self.bus.ack_delivery(event.event_id, consumer)
        return len(events) - len(failed)

    def deliver_due(self, consumer: str) -> int:
        """Deliver what is due for `consumer` now, batch by batch; how many succeeded."""
        delivered = 0
        due = self.bus.due_for(consumer, limit=CONSUMER_BATCH_SIZE * 5)
        for start in range(0, len(due), CONSUMER_BATCH_SIZE):
            if self._stop.is_set():
                break
            delivered += self.deliver(consumer, due[start : start + CONSUMER_BATCH_SIZE])
        return delivered

    def gather(self, consumer: str) -> int:
        """Wait, up to `consumer`'s batching window, until a full batch is due or the window passes; how
        many are due. Returns at once when none or a full batch is due, or for a consumer without a window."""
        window = self.batching_windows.get(consumer, 0.0)
        deadline = time.monotonic() + window
        while True:
            due = len(self.bus.due_for(consumer, limit=CONSUMER_BATCH_SIZE))
            left = deadline - time.monotonic()
            if due == 0 or due >= CONSUMER_BATCH_SIZE or left <= 0 or self._stop.is_set():
                return due
            self.bus.wait_for_events(left, consumer)  # woken by every publish

    def drain(self, timeout: float = 10.0) -> int:
        """Deliver every due delivery, in this thread, until none is due or `timeout` passes; how many succeeded."""
        deadline = time.monotonic() + timeout
        delivered = 0
        while time.monotonic() < deadline:
            due = {name: self.bus.due_for(name, limit=CONSUMER_BATCH_SIZE) for name in self.consumers}
            if not any(due.values()):
                break
            for name, events in due.items():
                if events:
                    delivered += self.deliver(name, events)
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
                self.gather(consumer)
                self.deliver_due(consumer)
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


def sqs_batch(consumer: str, events: Sequence[StoredEvent]) -> dict[str, Any]:
    """`events` as the consumer's SQS event source mapping hands them over: one record per event, the
    EventBridge event as its body (what the bus rule's SQS target sends), `messageId` the event id."""
    now = str(int(time.time() * 1000))
    records = []
    for event in events:
        body = json.dumps(event.envelope)
        records.append({
            "messageId": event.event_id,
            "receiptHandle": event.event_id,
            "body": body,
            "attributes": {"ApproximateReceiveCount": str(event.attempts + 1), "SentTimestamp": now,
                           "SenderId": "agentmem-local", "ApproximateFirstReceiveTimestamp": now},
            "messageAttributes": {},
            "md5OfBody": hashlib.md5(body.encode(), usedforsecurity=False).hexdigest(),
            "eventSource": "aws:sqs",
            "eventSourceARN": f"arn:aws:sqs:local:{event.envelope.get('account', '000000000000')}:{consumer}",
            "awsRegion": str(event.envelope.get("region", "local")),
        })
    return {"Records": records}
