"""The fact store on SQLite: facts of every user of the tenant in one table of the data folder."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.domain.facts import Fact
from agentmem.ports.facts import decode_fact_cursor, encode_fact_cursor
from agentmem.ports.records import Page

SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, fact_id TEXT NOT NULL,
    text TEXT NOT NULL, subject TEXT NOT NULL, thread_id TEXT NOT NULL, source_seqs TEXT NOT NULL,
    created_at REAL NOT NULL, valid_from REAL NOT NULL, valid_to REAL,
    status TEXT NOT NULL, superseded_by TEXT,
    PRIMARY KEY (tenant, user_id, fact_id)
);
CREATE INDEX IF NOT EXISTS facts_newest ON facts (tenant, user_id, created_at DESC, fact_id DESC);
"""


class SqliteFactStore:
    """FactStore on a SQLite file."""

    def __init__(self, path: Path):
        self._db = SqliteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def add(self, fact: Fact, supersedes: Sequence[str] = ()) -> bool:
        with self._db.transaction() as conn:
            try:
                conn.execute(
                    "INSERT INTO facts VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (fact.tenant, fact.user_id, fact.fact_id, fact.text, fact.subject, fact.thread_id,
                     json.dumps(fact.source_seqs), fact.created_at, fact.valid_from, fact.valid_to,
                     fact.status, fact.superseded_by),
                )
            except sqlite3.IntegrityError:
                return False
            conn.executemany(
                "UPDATE facts SET status='superseded', valid_to=?, superseded_by=?"
                " WHERE tenant=? AND user_id=? AND fact_id=? AND status='active'",
                [(fact.valid_from, fact.fact_id, fact.tenant, fact.user_id, old) for old in supersedes
                 if old != fact.fact_id],
            )
        return True

    def get(self, tenant: str, user_id: str, fact_id: str) -> Fact | None:
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT * FROM facts WHERE tenant=? AND user_id=? AND fact_id=?", (tenant, user_id, fact_id)
            ).fetchone()
        return _fact(row) if row else None

    def get_many(self, tenant: str, user_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        if not fact_ids:
            return []
        marks = ",".join("?" * len(fact_ids))
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT * FROM facts WHERE tenant=? AND user_id=? AND fact_id IN ({marks})",
                (tenant, user_id, *fact_ids),
            ).fetchall()
        return [_fact(r) for r in rows]

    def list_facts(
        self,
        tenant: str,
        user_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        include_superseded: bool = False,
    ) -> Page[Fact]:
        after = decode_fact_cursor(cursor) if cursor else None
        sql = "SELECT * FROM facts WHERE tenant=? AND user_id=?"
        args: list[Any] = [tenant, user_id]
        if not include_superseded:
            sql += " AND status='active'"
        if after:
            sql += " AND (created_at < ? OR (created_at = ? AND fact_id < ?))"
            args += [after[0], after[0], after[1]]
        sql += " ORDER BY created_at DESC, fact_id DESC LIMIT ?"
        args.append(limit + 1)
        with self._db.reading() as conn:
            rows = conn.execute(sql, args).fetchall()
        items = [_fact(r) for r in rows[:limit]]
        more = len(rows) > limit
        last = items[-1] if items else None
        return Page(items, encode_fact_cursor(last.created_at, last.fact_id) if more and last else None)

    def subjects(self, tenant: str, user_id: str) -> list[str]:
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT DISTINCT subject FROM facts WHERE tenant=? AND user_id=? AND status='active'"
                " ORDER BY subject",
                (tenant, user_id),
            ).fetchall()
        return [r["subject"] for r in rows]

    def set_text(self, tenant: str, user_id: str, fact_id: str, text: str) -> Fact | None:
        with self._db.transaction() as conn:
            row = conn.execute(
                "UPDATE facts SET text=? WHERE tenant=? AND user_id=? AND fact_id=? RETURNING *",
                (text, tenant, user_id, fact_id),
            ).fetchone()
        return _fact(row) if row else None

    def delete(self, tenant: str, user_id: str, fact_id: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM facts WHERE tenant=? AND user_id=? AND fact_id=?", (tenant, user_id, fact_id)
            )
        return cur.rowcount > 0

    def delete_user(self, tenant: str, user_id: str) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute("DELETE FROM facts WHERE tenant=? AND user_id=?", (tenant, user_id))
        return cur.rowcount


def _fact(row: sqlite3.Row) -> Fact:
    return Fact(
        tenant=row["tenant"], user_id=row["user_id"], fact_id=row["fact_id"], text=row["text"],
        subject=row["subject"], thread_id=row["thread_id"], source_seqs=json.loads(row["source_seqs"]),
        created_at=row["created_at"], valid_from=row["valid_from"], valid_to=row["valid_to"],
        status=row["status"], superseded_by=row["superseded_by"],
    )
