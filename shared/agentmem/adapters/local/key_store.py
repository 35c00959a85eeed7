"""Users' wrapped data keys on SQLite, in a file of their own (`keys.db`), apart from every other record.

Why a file of its own: a backup or copy of the data folder's other files taken before an erase,
put next to this file as it is after the erase, decrypts nothing of the erased user. Their wrapped
data key was only ever here, and erasing deletes it with `secure_delete` on (the row's bytes are
overwritten, not left in a free page) and then folds and truncates the write-ahead log, so neither
the file nor its `-wal` keeps the key. The key file (`vault.key`) that unwraps the keys is beside it.
Back both up apart from the data, with a retention as short as the erase guarantee you promise
(a backup of *this* file from before the erase still holds the key).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vault import WrappedDataKey

KEY_STORE_DB = "keys.db"
SCHEMA = """
PRAGMA secure_delete = ON;
CREATE TABLE IF NOT EXISTS data_keys (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, version INTEGER NOT NULL,
    wrapped BLOB NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (tenant, user_id, version)
);
"""


class SqliteKeyStore:
    """KeyStore on a SQLite file (WAL, secure_delete)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._db = SqliteDatabase(path, SCHEMA)
        except sqlite3.Error as exc:
            raise BackendUnavailable("keys", f"key store {path.name} unreadable: {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def get_data_key(self, tenant: str, user_id: str) -> WrappedDataKey | None:
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT * FROM data_keys WHERE tenant=? AND user_id=? ORDER BY version DESC LIMIT 1",
                (tenant, user_id),
            ).fetchone()
        return _data_key(row) if row else None

    def add_data_key(self, key: WrappedDataKey) -> WrappedDataKey:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO data_keys (tenant, user_id, version, wrapped, created_at)"
                " VALUES (?,?,?,?,?)",
                (key.tenant, key.user_id, key.version, key.wrapped, key.created_at),
            )
            row = conn.execute(
                "SELECT * FROM data_keys WHERE tenant=? AND user_id=? AND version=?",
                (key.tenant, key.user_id, key.version),
            ).fetchone()
        return _data_key(row)

    def replace_wrapped_key(self, tenant: str, user_id: str, version: int, old: bytes, new: bytes) -> bool:
        with self._db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE data_keys SET wrapped=? WHERE tenant=? AND user_id=? AND version=? AND wrapped=?",
                (new, tenant, user_id, version, old),
            )
        if cursor.rowcount == 1:
            self._checkpoint()  # the old wrapped form is no longer kept in the WAL either
        return cursor.rowcount == 1

    def iter_data_keys(self, tenant: str, user_id: str | None = None) -> Iterator[WrappedDataKey]:
        sql, args = "SELECT * FROM data_keys WHERE tenant=?", [tenant]
        if user_id is not None:
            sql, args = sql + " AND user_id=?", [tenant, user_id]
        with self._db.reading() as conn:
            rows = conn.execute(sql + " ORDER BY user_id, version", args).fetchall()
        return iter([_data_key(row) for row in rows])

    def destroy_data_keys(self, tenant: str, user_id: str) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM data_keys WHERE tenant=? AND user_id=?", (tenant, user_id))
        self._checkpoint()

    def import_legacy_keys(self, legacy_vault: Path) -> int:
        """Move data keys from a vault file written before the key store had its own file; returns how many.

        The keys are copied here, then deleted there (secure_delete, checkpoint), so after this the
        vault file holds no key. A vault without the old table is left alone.
        """
        if not legacy_vault.exists():
            return 0
        legacy = SqliteDatabase(legacy_vault, "PRAGMA secure_delete = ON;")
        try:
            with legacy.reading() as conn:
                if not conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='data_keys'").fetchone():
                    return 0
                rows = conn.execute("SELECT * FROM data_keys").fetchall()
            for row in rows:
                self.add_data_key(_data_key(row))
            with legacy.transaction() as conn:
                conn.execute("DELETE FROM data_keys")
                conn.execute("DROP TABLE data_keys")
            legacy.checkpoint()
            with legacy.reading() as conn:
                conn.execute("VACUUM")
            legacy.checkpoint()
            return len(rows)
        finally:
            legacy.close()

    def _checkpoint(self) -> None:
        # The WAL still holds earlier images of the page with the key: fold it in and truncate it.
        self._db.checkpoint()


def _data_key(row: Any) -> WrappedDataKey:
    return WrappedDataKey(
        tenant=row["tenant"], user_id=row["user_id"], version=int(row["version"]),
        wrapped=bytes(row["wrapped"]), created_at=float(row["created_at"]),
    )
