"""The item store on SQLite: one row per (tenant, owner, namespace, key)."""

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
    created_at REAL NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (tenant, owner_kind, owner_id, namespace, key)
);
"""
# Labels are joined with the unit separator: no id or LangGraph label carries it, and a prefix of the
# joined text plus a separator is exactly a namespace prefix.
SEP = "\x1f"


def _ns(namespace: Sequence[str]) -> str:
    return SEP.join(namespace)


class SqliteItemStore:
    """ItemStore on a SQLite file."""

    def __init__(self, path: Path):
        self._db = SqliteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def put(self, item: Item) -> Item:
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT created_at FROM items WHERE tenant=? AND owner_kind=? AND owner_id=? AND namespace=? AND key=?",
                (item.tenant, item.owner_kind, item.owner_id, _ns(item.namespace), item.key),
            ).fetchone()
            created = row["created_at"] if row else item.created_at
            conn.execute(
                "INSERT OR REPLACE INTO items VALUES (?,?,?,?,?,?,?,?)",
                (item.tenant, item.owner_kind, item.owner_id, _ns(item.namespace), item.key,
                 json.dumps(item.value, sort_keys=True), created, item.updated_at),
            )
        return Item(item.tenant, item.owner_kind, item.owner_id, item.namespace, item.key, item.value,
                    created, item.updated_at)

    def get(self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> Item | None:
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT * FROM items WHERE tenant=? AND owner_kind=? AND owner_id=? AND namespace=? AND key=?",
                (tenant, owner_kind, owner_id, _ns(namespace), key),
            ).fetchone()
        return _item(row) if row else None

    def get_many(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, ids: Sequence[tuple[tuple[str, ...], str]]
    ) -> list[Item]:
        found = [self.get(tenant, owner_kind, owner_id, ns, key) for ns, key in ids]
        return [item for item in found if item is not None]

    def delete(self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM items WHERE tenant=? AND owner_kind=? AND owner_id=? AND namespace=? AND key=?",
                (tenant, owner_kind, owner_id, _ns(namespace), key),
            )
        return cur.rowcount > 0

    def list_items(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, prefix: Sequence[str], *, limit: int, offset: int
    ) -> list[Item]:
        sql = "SELECT * FROM items WHERE tenant=? AND owner_kind=? AND owner_id=?"
        args: list[object] = [tenant, owner_kind, owner_id]
        if prefix:
            joined = _ns(prefix)
            sql += " AND (namespace=? OR substr(namespace, 1, ?)=?)"
            args += [joined, len(joined) + 1, joined + SEP]
        sql += " ORDER BY updated_at DESC, namespace, key LIMIT ? OFFSET ?"
        args += [limit, offset]
        with self._db.reading() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [_item(row) for row in rows]

    def namespaces(self, tenant: str, owner_kind: OwnerKind, owner_id: str) -> list[tuple[str, ...]]:
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT DISTINCT namespace FROM items WHERE tenant=? AND owner_kind=? AND owner_id=?"
                " ORDER BY namespace",
                (tenant, owner_kind, owner_id),
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
                row["created_at"], row["updated_at"])
