"""The local event bus: a durable outbox in SQLite, drained by a worker in the local server.

An event is written to disk before `publish` returns and stays pending until a
consumer acknowledges it, so a server killed between feedback and indexing
indexes the lesson on its next start. Failed deliveries are retried with
backoff; after `max_attempts` an event is parked as dead (the local dead-letter
queue) and can be redriven.

Each subscribed consumer (`subscribe`, as an EventBridge rule with its own
target) gets its own delivery of every event it consumes: its own attempts,
backoff and dead state, drained by its own worker thread, so a slow or failing
consumer never holds up another. An event's own status sums its deliveries up
(pending while one is, dead when one gave up, else done). A bus nobody ever
subscribed to keeps the one-delivery-per-event outbox (`due`/`ack`/`fail`).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.ports.events import DomainEvent, PublishReceipt

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE, detail_type TEXT NOT NULL, source TEXT NOT NULL,
    detail TEXT NOT NULL, resources TEXT NOT NULL, created_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL, last_error TEXT
);
CREATE INDEX IF NOT EXISTS events_due ON events (status, next_attempt_at);
CREATE TABLE IF NOT EXISTS subscriptions (
    consumer TEXT NOT NULL, detail_type TEXT NOT NULL, PRIMARY KEY (consumer, detail_type)
);
CREATE TABLE IF NOT EXISTS deliveries (
    event_id TEXT NOT NULL, consumer TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL, last_error TEXT,
    PRIMARY KEY (event_id, consumer)
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (consumer, status, next_attempt_at);
"""
# An event's status from its deliveries (for an event that has any).
_SETTLE = """
UPDATE events SET
    status = CASE
        WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.event_id AND d.status = 'pending')
            THEN 'pending'
        WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.event_id AND d.status = 'dead')
            THEN 'dead'
        ELSE 'done' END,
    attempts = (SELECT MAX(d.attempts) FROM deliveries d WHERE d.event_id = events.event_id),
    last_error = (SELECT d.consumer || ': ' || d.last_error FROM deliveries d
                  WHERE d.event_id = events.event_id AND d.last_error IS NOT NULL LIMIT 1)
WHERE event_id = ? AND EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.event_id)
"""


@dataclass(frozen=True)
class StoredEvent:
    """An event as the outbox holds it, with its EventBridge envelope."""

    seq: int
    event_id: str
    attempts: int
    envelope: dict[str, Any]


class SqliteEventBus:
    """EventBus with a durable SQLite outbox."""

    def __init__(self, path: Path, *, region: str = "local", account: str = "000000000000",
                 clock: Callable[[], float] = time.time):
        self._db = SqliteDatabase(path, SCHEMA)
        # When events are due: a test moves it on instead of waiting out a retry delay.
        self._clock = clock
        self._region = region
        self._account = account
        # Set by every publish, cleared by the waiting worker: a flag, not a notification, so a publish
        # that lands while the worker is busy delivering is not missed. One per waiting consumer.
        self._published: dict[str | None, threading.Event] = {}
        self._published_lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def publish(self, events: Sequence[DomainEvent]) -> list[PublishReceipt]:
        now = self._clock()
        rows = [
            (
                str(uuid.uuid4()),
                e.detail_type,
                e.source,
                json.dumps(e.detail),
                json.dumps(list(e.resources)),
                now,
                now,
            )
            for e in events
        ]
        with self._db.transaction() as conn:
            conn.executemany(
                "INSERT INTO events (event_id, detail_type, source, detail, resources, created_at, next_attempt_at)"
                " VALUES (?,?,?,?,?,?,?)",
                rows,
            )
            subscribed = conn.execute("SELECT 1 FROM subscriptions LIMIT 1").fetchone() is not None
            if subscribed:
                conn.executemany(
                    "INSERT INTO deliveries (event_id, consumer, next_attempt_at)"
                    " SELECT ?, consumer, ? FROM subscriptions WHERE detail_type = ?",
                    [(r[0], now, r[1]) for r in rows],
                )
                # An event no consumer subscribes to is done at once (EventBridge drops what no rule matches).
                conn.executemany(
                    "UPDATE events SET status='done' WHERE event_id=?"
                    " AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.event_id)",
                    [(r[0],) for r in rows],
                )
        self.wake()
        return [PublishReceipt(event_id=r[0]) for r in rows]

    # The consumer side, used by the local worker.

    def subscribe(self, consumer: str, detail_types: Sequence[str]) -> None:
        """Deliver every event of `detail_types` to `consumer`, on its own, from now on (kept in the file).

        Events still pending that `consumer` has no delivery of yet (published before it subscribed, or
        before this file had subscriptions) get one now.
        """
        with self._db.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO subscriptions (consumer, detail_type) VALUES (?, ?)",
                [(consumer, t) for t in detail_types],
            )
            pending = conn.execute(
                "SELECT event_id, next_attempt_at, attempts FROM events WHERE status='pending'"
                f" AND detail_type IN ({','.join('?' * len(detail_types))})",
                list(detail_types),
            ).fetchall()
            conn.executemany(
                "INSERT OR IGNORE INTO deliveries (event_id, consumer, next_attempt_at, attempts) VALUES (?,?,?,?)",
                [(r["event_id"], consumer, r["next_attempt_at"], r["attempts"]) for r in pending],
            )
        self.wake()

    def wait_for_events(self, timeout: float, consumer: str | None = None) -> None:
        """Block until something was published since `consumer`'s last wait, or `timeout` passes."""
        flag = self._flag(consumer)
        flag.wait(timeout)
        flag.clear()

    def wake(self) -> None:
        """Wake whoever waits in `wait_for_events` (a publish, or a worker that is stopping)."""
        with self._published_lock:
            flags = list(self._published.values())
        for flag in flags:
            flag.set()

    def _flag(self, consumer: str | None) -> threading.Event:
        with self._published_lock:
            flag = self._published.get(consumer)
            if flag is None:
                # Set at first: whatever is pending already gets looked at.
                flag = self._published[consumer] = threading.Event()
                flag.set()
            return flag

    def due_for(self, consumer: str, limit: int = 50) -> list[StoredEvent]:
        """`consumer`'s pending deliveries whose next attempt is due, oldest event first."""
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT e.*, d.attempts AS delivery_attempts FROM deliveries d JOIN events e USING (event_id)"
                " WHERE d.consumer=? AND d.status='pending' AND d.next_attempt_at <= ? ORDER BY e.seq LIMIT ?",
                (consumer, self._clock(), limit),
            ).fetchall()
        return [StoredEvent(r["seq"], r["event_id"], r["delivery_attempts"], self._envelope(r)) for r in rows]

    def next_due_for(self, consumer: str) -> float | None:
        """Seconds until `consumer`'s next pending delivery is due (0 if one is due), None if it has none."""
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT MIN(next_attempt_at) AS t FROM deliveries WHERE consumer=? AND status='pending'", (consumer,)
            ).fetchone()
        return None if row["t"] is None else max(0.0, row["t"] - self._clock())

    def ack_delivery(self, event_id: str, consumer: str) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE deliveries SET status='done', last_error=NULL WHERE event_id=? AND consumer=?",
                (event_id, consumer),
            )
            conn.execute(_SETTLE, (event_id,))

    def fail_delivery(self, event_id: str, consumer: str, error: str, *, retry_in: float | None) -> None:
        """Record `consumer`'s failed delivery: retry after `retry_in` seconds, or park it as dead when None."""
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE deliveries SET attempts=attempts+1, last_error=?,"
                " status=CASE WHEN ? THEN 'dead' ELSE status END, next_attempt_at=?"
                " WHERE event_id=? AND consumer=?",
                (error[:1000], retry_in is None, self._clock() + (retry_in or 0), event_id, consumer),
            )
            conn.execute(_SETTLE, (event_id,))

    def due(self, limit: int = 50) -> list[StoredEvent]:
        """Pending events with an attempt due (of the event, or of one of its deliveries), oldest first."""
        now = self._clock()
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM events e WHERE e.status='pending' AND ("
                " (e.next_attempt_at <= ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id=e.event_id))"
                " OR EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id=e.event_id AND d.status='pending'"
                "            AND d.next_attempt_at <= ?)) ORDER BY e.seq LIMIT ?",
                (now, now, limit),
            ).fetchall()
        return [StoredEvent(r["seq"], r["event_id"], r["attempts"], self._envelope(r)) for r in rows]

    def next_due_in(self) -> float | None:
        """Seconds until the next pending event is due (0 if one is due now), None if none is pending."""
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT MIN(next_attempt_at) AS t FROM events WHERE status='pending'"
            ).fetchone()
        return None if row["t"] is None else max(0.0, row["t"] - self._clock())

    def ack(self, event_id: str) -> None:
        """The event is handled: every delivery of it done."""
        with self._db.transaction() as conn:
            conn.execute("UPDATE events SET status='done', last_error=NULL WHERE event_id=?", (event_id,))
            conn.execute("UPDATE deliveries SET status='done', last_error=NULL WHERE event_id=?", (event_id,))

    def fail(self, event_id: str, error: str, *, retry_in: float | None) -> None:
        """Record a failed delivery of the event (all its pending deliveries): retry after `retry_in`, or dead."""
        with self._db.transaction() as conn:
            if conn.execute("SELECT 1 FROM deliveries WHERE event_id=? LIMIT 1", (event_id,)).fetchone():
                conn.execute(
                    "UPDATE deliveries SET attempts=attempts+1, last_error=?,"
                    " status=CASE WHEN ? THEN 'dead' ELSE status END, next_attempt_at=?"
                    " WHERE event_id=? AND status='pending'",
                    (error[:1000], retry_in is None, self._clock() + (retry_in or 0), event_id),
                )
                conn.execute(_SETTLE, (event_id,))
            elif retry_in is None:
                conn.execute(
                    "UPDATE events SET status='dead', attempts=attempts+1, last_error=? WHERE event_id=?",
                    (error[:1000], event_id),
                )
            else:
                conn.execute(
                    "UPDATE events SET attempts=attempts+1, next_attempt_at=?, last_error=? WHERE event_id=?",
                    (self._clock() + retry_in, error[:1000], event_id),
                )

    def counts(self) -> dict[str, int]:
        with self._db.reading() as conn:
            rows = conn.execute("SELECT status, COUNT(*) AS n FROM events GROUP BY status").fetchall()
        return {r["status"]: r["n"] for r in rows}

    def redrive_dead(self) -> int:
        """Put every dead event back in the queue; returns how many."""
        now = self._clock()
        with self._db.transaction() as conn:
            cur = conn.execute(
                "UPDATE events SET status='pending', attempts=0, next_attempt_at=? WHERE status='dead'", (now,)
            )
            conn.execute(
                "UPDATE deliveries SET status='pending', attempts=0, next_attempt_at=? WHERE status='dead'", (now,)
            )
        self.wake()
        return cur.rowcount

    def forget_user(self, tenant: str, user_id: str) -> int:
        """Delete every event naming this user of this tenant, delivered or not, with its deliveries.

        The local outbox keeps events after delivery (as an event archive would); an erase calls this so
        no row of the data folder still names the erased user id. A pending event of the user had nothing
        left to act on. Returns how many events went.
        """
        match = "json_extract(detail, '$.tenant') = ? AND json_extract(detail, '$.userId') = ?"
        with self._db.transaction() as conn:
            conn.execute(
                f"DELETE FROM deliveries WHERE event_id IN (SELECT event_id FROM events WHERE {match})",
                (tenant, user_id),
            )
            return conn.execute(f"DELETE FROM events WHERE {match}", (tenant, user_id)).rowcount

    def _envelope(self, row: Any) -> dict[str, Any]:
        return {
            "version": "0",
            "id": row["event_id"],
            "detail-type": row["detail_type"],
            "source": row["source"],
            "account": self._account,
            "time": datetime.fromtimestamp(row["created_at"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "region": self._region,
            "resources": json.loads(row["resources"]),
            "detail": json.loads(row["detail"]),
        }
