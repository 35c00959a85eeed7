"""The PII vault on SQLite: token counters and encrypted originals (the data keys are in `keys.db`).

Nothing in this file is ever plaintext personal data: values are AES-GCM ciphertexts and their
lookup keys are keyed fingerprints; the data keys that decrypt them live in the key store's own file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.ports.vault import VaultEntry

# secure_delete overwrites deleted rows with zeros: an erased user's ciphertexts do not linger in free pages.
SCHEMA = """
PRAGMA secure_delete = ON;
CREATE TABLE IF NOT EXISTS token_counters (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, thread_id TEXT NOT NULL, last_counter INTEGER NOT NULL,
    PRIMARY KEY (tenant, user_id, thread_id)
);
CREATE TABLE IF NOT EXISTS vault_entries (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, token TEXT NOT NULL, thread_id TEXT NOT NULL,
    entity_type TEXT NOT NULL, fingerprint TEXT NOT NULL, ciphertext BLOB NOT NULL,
    key_version INTEGER NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (tenant, user_id, token),
    UNIQUE (tenant, user_id, thread_id, fingerprint)
);
"""
# SQLite caps the number of bound parameters of one statement; stay well below.
_IN_CHUNK = 500


class SqliteVaultStore:
    """VaultStore on a SQLite file (WAL)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = SqliteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    # Tokens and entries

    def tokens_for_fingerprints(
        self, tenant: str, user_id: str, thread_id: str, fingerprints: Sequence[str]
    ) -> dict[str, str]:
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(fingerprints))
        with self._db.reading() as conn:
            for start in range(0, len(unique), _IN_CHUNK):
                chunk = unique[start : start + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    "SELECT fingerprint, token FROM vault_entries WHERE tenant=? AND user_id=? AND thread_id=?"
                    f" AND fingerprint IN ({marks})",
                    (tenant, user_id, thread_id, *chunk),
                ).fetchall()
                found.update({row["fingerprint"]: row["token"] for row in rows})
        return found

    def allocate_counters(self, tenant: str, user_id: str, thread_id: str, count: int) -> list[int]:
        if count <= 0:
            return []
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO token_counters (tenant, user_id, thread_id, last_counter) VALUES (?,?,?,?)"
                " ON CONFLICT (tenant, user_id, thread_id) DO UPDATE SET last_counter = last_counter + ?",
                (tenant, user_id, thread_id, count, count),
            )
            last = conn.execute(
                "SELECT last_counter FROM token_counters WHERE tenant=? AND user_id=? AND thread_id=?",
                (tenant, user_id, thread_id),
            ).fetchone()["last_counter"]
        return list(range(last - count + 1, last + 1))

    def last_counter(self, tenant: str, user_id: str, thread_id: str) -> int:
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT last_counter FROM token_counters WHERE tenant=? AND user_id=? AND thread_id=?",
                (tenant, user_id, thread_id),
            ).fetchone()
        return int(row["last_counter"]) if row else 0

    def value_index(self, tenant: str, user_id: str, thread_id: str) -> dict[str, str]:
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT fingerprint, token FROM vault_entries WHERE tenant=? AND user_id=? AND thread_id=?",
                (tenant, user_id, thread_id),
            ).fetchall()
        return {row["fingerprint"]: row["token"] for row in rows}

    def add_entry(self, entry: VaultEntry) -> str:
        with self._db.transaction() as conn:
            try:
                conn.execute(
                    "INSERT INTO vault_entries (tenant, user_id, token, thread_id, entity_type, fingerprint,"
                    " ciphertext, key_version, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                    (entry.tenant, entry.user_id, entry.token, entry.thread_id, entry.entity_type,
                     entry.fingerprint, entry.ciphertext, entry.key_version, entry.created_at),
                )
                return entry.token
            except sqlite3.IntegrityError:
                row = conn.execute(
                    "SELECT token FROM vault_entries WHERE tenant=? AND user_id=? AND thread_id=?"
                    " AND fingerprint=?",
                    (entry.tenant, entry.user_id, entry.thread_id, entry.fingerprint),
                ).fetchone()
                if row is None:  # the token itself collided: a counter was handed out twice
                    raise
                return str(row["token"])

    def get_entries(self, tenant: str, user_id: str, tokens: Sequence[str]) -> list[VaultEntry]:
        unique = list(dict.fromkeys(tokens))
        entries: list[VaultEntry] = []
        with self._db.reading() as conn:
            for start in range(0, len(unique), _IN_CHUNK):
                chunk = unique[start : start + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT * FROM vault_entries WHERE tenant=? AND user_id=? AND token IN ({marks})",
                    (tenant, user_id, *chunk),
                ).fetchall()
                entries.extend(_entry(row) for row in rows)
        return entries

    def delete_user(self, tenant: str, user_id: str) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM vault_entries WHERE tenant=? AND user_id=?", (tenant, user_id))
            conn.execute("DELETE FROM token_counters WHERE tenant=? AND user_id=?", (tenant, user_id))
        self._db.checkpoint()


def _entry(row: Any) -> VaultEntry:
    return VaultEntry(
        tenant=row["tenant"], user_id=row["user_id"], thread_id=row["thread_id"], token=row["token"],
        entity_type=row["entity_type"], fingerprint=row["fingerprint"], ciphertext=bytes(row["ciphertext"]),
        key_version=int(row["key_version"]), created_at=float(row["created_at"]),
    )
