"""A SQLite database file shared safely by the threads of one process (WAL, one writer at a time)."""

from __future__ import annotations

import logging
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)
_open: weakref.WeakSet[SqliteDatabase] = weakref.WeakSet()
_open_lock = threading.Lock()


class SqliteDatabase:
    """One connection per database file, guarded by a lock.

    WAL lets readers in other processes (the CLI next to a running server)
    read while this one writes; `synchronous=NORMAL` is durable across an
    application crash, which is the failure the local mode must survive.
    """

    def __init__(self, path: Path, schema: str):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        # Deleted rows are overwritten with zeros, not left in free pages: an erased user's data is gone
        # from the file itself, and `checkpoint` then takes it out of the write-ahead log.
        self._conn.execute("PRAGMA secure_delete=ON")
        with self._lock:
            # executescript commits on its own; the schema is idempotent (IF NOT EXISTS).
            self._conn.executescript(schema)
        with _open_lock:
            _open.add(self)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed on success, rolled back on any error."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn

    def checkpoint(self) -> bool:
        """Fold the write-ahead log into the file and truncate it to zero bytes; False if a reader blocked it.

        After a delete (secure_delete on), this is what leaves no earlier image of the deleted rows in
        the `-wal` file. A reader in another process holding an old snapshot can keep the log from
        being truncated; the next checkpoint (after the next erase, or on close) finishes it.
        """
        with self._lock:
            busy, _, _ = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            log.warning("WAL checkpoint of %s blocked by a reader; it completes later", self.path.name)
        return not busy

    def close(self) -> None:
        with _open_lock:
            _open.discard(self)
        with self._lock:
            self._conn.close()


def checkpoint_open_databases(folder: Path) -> list[Path]:
    """Checkpoint (TRUNCATE) every database this process has open under `folder`; returns those blocked."""
    folder = folder.resolve()
    with _open_lock:
        databases = [db for db in _open if db.path.resolve().is_relative_to(folder)]
    return [db.path for db in databases if not db.checkpoint()]
