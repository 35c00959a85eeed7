"""The item store on SQLite: one row per (tenant, owner, namespace, key).

An item's expiry is a column: reads given a `now` skip expired rows, and every write deletes the rows
that expired (as DynamoDB's TTL removes them in AWS).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.ports.items import Item, OwnerKind

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    tenant TEXT NOT NULL, owner_kind TEXT NOT NULL, owner_id TEXT NOT NULL,
    namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    created_at REAL NOT NULL, updated_at REAL NOT NULL, expires_at REAL, ttl_minutes REAL,
    PRIMARY KEY (tenant, owner_kind, owner_id, namespace, key)
);
"""
_COLUMNS = "tenant, owner_kind, owner_id, namespace, key, value, created_at, updated_at, expires_at, ttl_minutes"
_ITEM = "tenant=? AND owner_kind=? AND owner_id=? AND namespace=? AND key=?"
_LIVE = " AND (expires_at IS NULL OR expires_at > ?)"
# Labels are joined with the unit separator: no id or LangGraph label carries it, and a prefix of the
# joined text plus a separator is exactly a namespace prefix.
SEP = "\x1f"


def _ns(namespace: Sequence[str]) -> str:
    return SEP.join(namespace)


def _live(now: float | None) -> tuple[str, list[object]]:
    return ("", []) if now is None else (_LIVE, [now])


class SqliteItemStore:
    """ItemStore on a SQLite file."""

    def __init__(self, path: Path):
        self._db = SqliteDatabase(path, SCHEMA)
        with self._db.transaction() as conn:
            # A data folder from before item TTLs: add their columns.
            present = {row["name"] for row in conn.execute("PRAGMA table_info(items)")}
            for column in ("expires_at", "ttl_minutes"):
                if column not in present:
                    conn.execute(f"ALTER TABLE items ADD COLUMN {column} REAL")

    def close(self) -> None:
        self._db.close()

    def put(self, item: Item) -> Item:
        ident = (item.tenant, item.owner_kind, item.owner_id, _ns(item.namespace), item.key)
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM items WHERE expires_at <= ?", (item.updated_at,))  # the writer's now
            row = conn.execute(f"SELECT created_at FROM items WHERE {_ITEM}", ident).fetchone()
            created = row["created_at"] if row else item.created_at
            conn.execute(
                f"INSERT OR REPLACE INTO items ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (*ident, json.dumps(item.value, sort_keys=True), created, item.updated_at, item.expires_at,
                 item.ttl_minutes),
            )
        return Item(item.tenant, item.owner_kind, item.owner_id, item.namespace, item.key, item.value,
                    created, item.updated_at, item.expires_at, item.ttl_minutes)

    def get(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str,
        *, now: float | None = None,
    ) -> Item | None:
        live, args = _live(now)
        with self._db.reading() as conn:
            row = conn.execute(
                f"SELECT * FROM items WHERE {_ITEM}{live}", (tenant, owner_kind, owner_id, _ns(namespace), key, *args)
            ).fetchone()
        return _item(row) if row else None

    def get_many(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, ids: Sequence[tuple[tuple[str, ...], str]],
        *, now: float | None = None,
    ) -> list[Item]:
        found = [self.get(tenant, owner_kind, owner_id, ns, key, now=now) for ns, key in ids]
        return [item for item in found if item is not None]

    def set_expiry(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str, expires_at: float
    ) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE items SET expires_at=? WHERE {_ITEM}",
                (expires_at, tenant, owner_kind, owner_id, _ns(namespace), key),
            )

    def delete(self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(f"DELETE FROM items WHERE {_ITEM}", (tenant, owner_kind, owner_id, _ns(namespace), key))
        return cur.rowcount > 0

    def list_items(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, prefix: Sequence[str], *, limit: int, offset: int,
        now: float | None = None,
    ) -> list[Item]:
        live, live_args = _live(now)
        sql = f"SELECT * FROM items WHERE tenant=? AND owner_kind=? AND owner_id=?{live}"
        args: list[object] = [tenant, owner_kind, owner_id, *live_args]
        if prefix:
            joined = _ns(prefix)
            sql += " AND (namespace=? OR substr(namespace, 1, ?)=?)"
            args += [joined, len(joined) + 1, joined + SEP]
        sql += " ORDER BY updated_at DESC, namespace, key LIMIT ? OFFSET ?"
        args += [limit, offset]
        with self._db.reading() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [_item(row) for row in rows]

    def namespaces(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, *, now: float | None = None
    ) -> list[tuple[str, ...]]:
        live, args = _live(now)
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT DISTINCT namespace FROM items WHERE tenant=? AND owner_kind=? AND owner_id=?{live}"
                " ORDER BY namespace",
                (tenant, owner_kind, owner_id, *args),
            ).fetchall()
        return [tuple(row["namespace"].split(SEP)) if row["namespace"] else () for row in rows]

    def delete_owner(self, tenant: str, owner_kind: OwnerKind, owner_id: str) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM items WHERE tenant=? AND owner_kind=? AND owner_id=?", (tenant, owner_kind, owner_id)
            )
        return cur.rowcount


def _item(row: sqlite3.Row) -> Item:
    namespace = tuple(row["namespace"].split(SEP)) if row["namespace"] else ()
    return Item(row["tenant"], row["owner_kind"], row["owner_id"], namespace, row["key"], json.loads(row["value"]),
                row["created_at"], row["updated_at"], row["expires_at"], row["ttl_minutes"])
