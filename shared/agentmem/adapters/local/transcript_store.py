"""Transcripts on SQLite: append-only turns keyed by tenant, user, thread and sequence number.

An append with an Idempotency-Key writes the key (with the seqs it stored) in the same transaction
as the turns, so a request that crashed after its turns were written is answered, when sent again,
with those turns: nothing is appended twice, whatever happened to the request's idempotency record.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.ports.records import Page
from agentmem.ports.transcripts import (
    APPEND_KEY_SECONDS,
    AppendKey,
    NewTurn,
    StoredTurn,
    ThreadSummary,
    UserSummary,
    decode_thread_cursor,
    decode_turn_cursor,
    decode_user_cursor,
    encode_thread_cursor,
    encode_turn_cursor,
    encode_user_cursor,
    key_conflict,
)

# The primary key is the index every query walks: by thread, in seq order, either direction.
SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, thread_id TEXT NOT NULL, seq INTEGER NOT NULL,
    role TEXT NOT NULL, content TEXT NOT NULL, tokens INTEGER NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (tenant, user_id, thread_id, seq)
) WITHOUT ROWID;
-- A keyed append's key and the seqs it stored, written in the append's own transaction: a retry's answer.
CREATE TABLE IF NOT EXISTS keyed_appends (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, thread_id TEXT NOT NULL, append_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (tenant, user_id, thread_id, append_key)
) WITHOUT ROWID;
-- The Idempotency-Key of each keyed append, by the seq of its last turn: found again when the turns go.
CREATE TABLE IF NOT EXISTS append_keys (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, thread_id TEXT NOT NULL, to_seq INTEGER NOT NULL,
    idempotency_key TEXT NOT NULL,
    PRIMARY KEY (tenant, user_id, thread_id, to_seq, idempotency_key)
) WITHOUT ROWID;
-- The tenant's users (GET /v1/users): a row from a user's first turn until the user is erased.
CREATE TABLE IF NOT EXISTS users (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (tenant, user_id)
) WITHOUT ROWID;
-- A data folder from before the users table: its users come from their turns, once (the condition is
-- checked before any turn is read, so an opened folder with users costs nothing here).
INSERT OR IGNORE INTO users (tenant, user_id, created_at)
    SELECT tenant, user_id, MIN(created_at) FROM turns WHERE NOT EXISTS (SELECT 1 FROM users)
    GROUP BY tenant, user_id;
"""


class SqliteTranscriptStore:
    """TranscriptStore on a SQLite file (WAL); one write transaction per append."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = SqliteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def append(
        self, tenant: str, user_id: str, thread_id: str, turns: Sequence[NewTurn], created_at: float,
        *, key: AppendKey | None = None,
    ) -> list[StoredTurn]:
        if not turns:
            return []
        # BEGIN IMMEDIATE takes the write lock first, so the last seq (and the key) read here cannot go stale.
        with self._db.transaction() as conn:
            if key is not None:
                earlier = conn.execute(
                    "SELECT fingerprint, first_seq, last_seq FROM keyed_appends"
                    " WHERE tenant=? AND user_id=? AND thread_id=? AND append_key=? AND created_at > ?",
                    (tenant, user_id, thread_id, key.key, created_at - APPEND_KEY_SECONDS),
                ).fetchone()
                if earlier is not None:
                    if earlier["fingerprint"] != key.fingerprint:
                        raise key_conflict()
                    rows = conn.execute(
                        "SELECT * FROM turns WHERE tenant=? AND user_id=? AND thread_id=? AND seq BETWEEN ? AND ?"
                        " ORDER BY seq",
                        (tenant, user_id, thread_id, earlier["first_seq"], earlier["last_seq"]),
                    ).fetchall()
                    return [_turn(row) for row in rows]
            last = conn.execute(
                "SELECT MAX(seq) FROM turns WHERE tenant=? AND user_id=? AND thread_id=?",
                (tenant, user_id, thread_id),
            ).fetchone()[0]
            first = (last or 0) + 1
            stored = [
                StoredTurn(tenant, user_id, thread_id, first + i, t.role, t.content, t.tokens, created_at)
                for i, t in enumerate(turns)
            ]
            conn.executemany(
                "INSERT INTO turns (tenant, user_id, thread_id, seq, role, content, tokens, created_at)"
                " VALUES (?,?,?,?,?,?,?,?)",
                [(t.tenant, t.user_id, t.thread_id, t.seq, t.role, t.content, t.tokens, t.created_at)
                 for t in stored],
            )
            conn.execute(
                "INSERT OR IGNORE INTO users (tenant, user_id, created_at) VALUES (?,?,?)",
                (tenant, user_id, created_at),
            )
            if key is not None:
                # REPLACE: a key older than APPEND_KEY_SECONDS answers no more and is taken over.
                conn.execute(
                    "INSERT OR REPLACE INTO keyed_appends"
                    " (tenant, user_id, thread_id, append_key, fingerprint, first_seq, last_seq, created_at)"
                    " VALUES (?,?,?,?,?,?,?,?)",
                    (tenant, user_id, thread_id, key.key, key.fingerprint, stored[0].seq, stored[-1].seq, created_at),
                )
        return stored

    def list_turns(
        self, tenant: str, user_id: str, thread_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[StoredTurn]:
        after = decode_turn_cursor(cursor, tenant, user_id, thread_id) if cursor else 0
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM turns WHERE tenant=? AND user_id=? AND thread_id=? AND seq > ?"
                " ORDER BY seq LIMIT ?",
                (tenant, user_id, thread_id, after, limit + 1),
            ).fetchall()
        page = [_turn(row) for row in rows[:limit]]
        more = len(rows) > limit
        next_cursor = encode_turn_cursor(tenant, user_id, thread_id, page[-1].seq) if more and page else None
        return Page(page, next_cursor)

    def newest_turns(self, tenant: str, user_id: str, thread_id: str, limit: int) -> list[StoredTurn]:
        if limit <= 0:
            return []
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM turns WHERE tenant=? AND user_id=? AND thread_id=? ORDER BY seq DESC LIMIT ?",
                (tenant, user_id, thread_id, limit),
            ).fetchall()
        return [_turn(row) for row in reversed(rows)]

    def get_turns(self, tenant: str, user_id: str, keys: Sequence[tuple[str, int]]) -> list[StoredTurn]:
        if not keys:
            return []
        found: dict[tuple[str, int], StoredTurn] = {}
        with self._db.reading() as conn:
            for thread_id, seq in dict.fromkeys(keys):
                row = conn.execute(
                    "SELECT * FROM turns WHERE tenant=? AND user_id=? AND thread_id=? AND seq=?",
                    (tenant, user_id, thread_id, seq),
                ).fetchone()
                if row is not None:
                    found[(thread_id, seq)] = _turn(row)
        return [found[key] for key in keys if key in found]

    def thread_exists(self, tenant: str, user_id: str, thread_id: str) -> bool:
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT 1 FROM turns WHERE tenant=? AND user_id=? AND thread_id=? LIMIT 1",
                (tenant, user_id, thread_id),
            ).fetchone()
        return row is not None

    def delete_user(self, tenant: str, user_id: str) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM turns WHERE tenant=? AND user_id=?", (tenant, user_id))
            conn.execute("DELETE FROM append_keys WHERE tenant=? AND user_id=?", (tenant, user_id))
            conn.execute("DELETE FROM keyed_appends WHERE tenant=? AND user_id=?", (tenant, user_id))
            conn.execute("DELETE FROM users WHERE tenant=? AND user_id=?", (tenant, user_id))

    def has_threads(self, tenant: str, user_id: str) -> bool:
        with self._db.reading() as conn:
            row = conn.execute("SELECT 1 FROM turns WHERE tenant=? AND user_id=? LIMIT 1", (tenant, user_id)).fetchone()
        return row is not None

    def truncate(self, tenant: str, user_id: str, thread_id: str, from_seq: int) -> list[StoredTurn]:
        # One write transaction: an append waits for it, then continues after the turns kept.
        thread = (tenant, user_id, thread_id, from_seq)
        with self._db.transaction() as conn:
            rows = conn.execute(
                "SELECT * FROM turns WHERE tenant=? AND user_id=? AND thread_id=? AND seq >= ? ORDER BY seq", thread
            ).fetchall()
            conn.execute("DELETE FROM turns WHERE tenant=? AND user_id=? AND thread_id=? AND seq >= ?", thread)
            conn.execute("DELETE FROM append_keys WHERE tenant=? AND user_id=? AND thread_id=? AND to_seq >= ?", thread)
            # A keyed append whose turns go answers for them no more: sent again, it appends again.
            conn.execute("DELETE FROM keyed_appends WHERE tenant=? AND user_id=? AND thread_id=? AND last_seq >= ?",
                         thread)
        return [_turn(row) for row in rows]

    def list_users(
        self, tenant: str, *, limit: int, cursor: str | None = None, prefix: str = ""
    ) -> Page[UserSummary]:
        after = decode_user_cursor(cursor, tenant, prefix) if cursor else ""
        with self._db.reading() as conn:
            # substr, not LIKE: "_" is a wildcard of LIKE and a character of user ids.
            rows = conn.execute(
                "SELECT user_id, created_at FROM users WHERE tenant=? AND user_id > ? AND substr(user_id, 1, ?) = ?"
                " ORDER BY user_id LIMIT ?",
                (tenant, after, len(prefix), prefix, limit + 1),
            ).fetchall()
        page = [UserSummary(row["user_id"], float(row["created_at"])) for row in rows[:limit]]
        more = len(rows) > limit
        return Page(page, encode_user_cursor(tenant, prefix, page[-1].user_id) if more and page else None)

    def list_threads(
        self, tenant: str, user_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[ThreadSummary]:
        after = decode_thread_cursor(cursor, tenant, user_id) if cursor else None
        sql = (
            "SELECT thread_id, MAX(seq) AS last_seq, MAX(created_at) AS last_at FROM turns"
            " WHERE tenant=? AND user_id=? GROUP BY thread_id"
        )
        args: list[Any] = [tenant, user_id]
        if after is not None:
            sql += " HAVING MAX(created_at) < ? OR (MAX(created_at) = ? AND thread_id < ?)"
            args += [after[0], after[0], after[1]]
        sql += " ORDER BY last_at DESC, thread_id DESC LIMIT ?"
        args.append(limit + 1)
        with self._db.reading() as conn:
            rows = conn.execute(sql, args).fetchall()
        page = [ThreadSummary(row["thread_id"], int(row["last_seq"]), float(row["last_at"])) for row in rows[:limit]]
        more = len(rows) > limit
        return Page(page, encode_thread_cursor(tenant, user_id, page[-1]) if more and page else None)

    def remember_append_key(self, tenant: str, user_id: str, thread_id: str, to_seq: int, key: str) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO append_keys (tenant, user_id, thread_id, to_seq, idempotency_key)"
                " VALUES (?,?,?,?,?)", (tenant, user_id, thread_id, to_seq, key),
            )

    def append_keys(self, tenant: str, user_id: str, thread_id: str, from_seq: int) -> list[str]:
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT idempotency_key FROM append_keys WHERE tenant=? AND user_id=? AND thread_id=? AND to_seq >= ?"
                " ORDER BY to_seq", (tenant, user_id, thread_id, from_seq),
            ).fetchall()
        return list(dict.fromkeys(row[0] for row in rows))

    def user_append_keys(self, tenant: str, user_id: str) -> list[tuple[str, str]]:
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT thread_id, idempotency_key FROM append_keys WHERE tenant=? AND user_id=?"
                " ORDER BY thread_id, to_seq", (tenant, user_id),
            ).fetchall()
        return list(dict.fromkeys((row[0], row[1]) for row in rows))


def _turn(row: Any) -> StoredTurn:
    return StoredTurn(
        tenant=row["tenant"], user_id=row["user_id"], thread_id=row["thread_id"], seq=int(row["seq"]),
        role=row["role"], content=row["content"], tokens=int(row["tokens"]), created_at=float(row["created_at"]),
    )
