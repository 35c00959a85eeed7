"""The local event bus: a durable outbox in SQLite, drained by a worker in the local server.

An event is written to disk before `publish` returns and stays pending until a
consumer acknowledges it, so a server killed between feedback and indexing
indexes the lesson on its next start. Failed deliveries are retried with
backoff; after `max_attempts` an event is parked as dead (the local dead-letter
queue) and can be redriven.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Sequence
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

    def __init__(self, path: Path, *, region: str = "local", account: str = "000000000000"):
        self._db = SqliteDatabase(path, SCHEMA)
        self._region = region
        self._account = account
        # Set by every publish, cleared by the waiting worker: a flag, not a notification, so a publish
        # that lands while the worker is busy delivering is not missed.
        self._published = threading.Event()

    def close(self) -> None:
        self._db.close()

    def publish(self, events: Sequence[DomainEvent]) -> list[PublishReceipt]:
        now = time.time()
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
        self._published.set()
        return [PublishReceipt(event_id=r[0]) for r in rows]

    # The consumer side, used by the local worker.

    def wait_for_events(self, timeout: float) -> None:
        """Block until something was published since the last wait, or `timeout` passes."""
        self._published.wait(timeout)
        self._published.clear()

    def wake(self) -> None:
        """Wake whoever waits in `wait_for_events` (a worker that is stopping)."""
        self._published.set()

    def due(self, limit: int = 50) -> list[StoredEvent]:
        """Pending events whose next attempt is due, oldest first."""
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM events WHERE status='pending' AND next_attempt_at <= ? ORDER BY seq LIMIT ?",
                (time.time(), limit),
            ).fetchall()
        return [StoredEvent(r["seq"], r["event_id"], r["attempts"], self._envelope(r)) for r in rows]

    def next_due_in(self) -> float | None:
        """Seconds until the next pending event is due (0 if one is due now), None if none is pending."""
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT MIN(next_attempt_at) AS t FROM events WHERE status='pending'"
            ).fetchone()
        return None if row["t"] is None else max(0.0, row["t"] - time.time())

    def ack(self, event_id: str) -> None:
        with self._db.transaction() as conn:
            conn.execute("UPDATE events SET status='done', last_error=NULL WHERE event_id=?", (event_id,))

    def fail(self, event_id: str, error: str, *, retry_in: float | None) -> None:
        """Record a failed delivery: retry after `retry_in` seconds, or park it as dead when None."""
        with self._db.transaction() as conn:
            if retry_in is None:
                conn.execute(
                    "UPDATE events SET status='dead', attempts=attempts+1, last_error=? WHERE event_id=?",
                    (error[:1000], event_id),
                )
            else:
                conn.execute(
                    "UPDATE events SET attempts=attempts+1, next_attempt_at=?, last_error=? WHERE event_id=?",
                    (time.time() + retry_in, error[:1000], event_id),
                )

    def counts(self) -> dict[str, int]:
        with self._db.reading() as conn:
            rows = conn.execute("SELECT status, COUNT(*) AS n FROM events GROUP BY status").fetchall()
        return {r["status"]: r["n"] for r in rows}

    def redrive_dead(self) -> int:
        """Put every dead event back in the queue; returns how many."""
        with self._db.transaction() as conn:
            cur = conn.execute(
                "UPDATE events SET status='pending', attempts=0, next_attempt_at=? WHERE status='dead'",
                (time.time(),),
            )
        self._published.set()
        return cur.rowcount

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
