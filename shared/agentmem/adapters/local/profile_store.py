"""The profile store on SQLite: one row per version; the newest row is the current profile."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.domain.errors import Conflict
from agentmem.ports.profiles import ProfileVersion, decode_version_cursor, encode_version_cursor
from agentmem.ports.records import Page

SCHEMA = """
CREATE TABLE IF NOT EXISTS profile_versions (
    tenant TEXT NOT NULL, user_id TEXT NOT NULL, version INTEGER NOT NULL,
    body TEXT NOT NULL, updated_at REAL NOT NULL, turn_count INTEGER NOT NULL,
    schema_version INTEGER NOT NULL, source TEXT NOT NULL, restored_from INTEGER,
    consolidated TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant, user_id, version)
);
"""
COLUMNS = (
    "tenant", "user_id", "version", "body", "updated_at", "turn_count", "schema_version", "source",
    "restored_from", "consolidated",
)


class SqliteProfileStore:
    """ProfileStore on a SQLite file. `save` checks the version inside an immediate transaction."""

    def __init__(self, path: Path):
        self._db = SqliteDatabase(path, SCHEMA)
        with self._db.transaction() as conn:
            # A data folder from before the consolidation watermark: add its column.
            present = {row["name"] for row in conn.execute("PRAGMA table_info(profile_versions)")}
            if "consolidated" not in present:
                conn.execute("ALTER TABLE profile_versions ADD COLUMN consolidated TEXT NOT NULL DEFAULT '{}'")

    def close(self) -> None:
        self._db.close()

    def current(self, tenant: str, user_id: str) -> ProfileVersion | None:
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT * FROM profile_versions WHERE tenant=? AND user_id=? ORDER BY version DESC LIMIT 1",
                (tenant, user_id),
            ).fetchone()
        return _profile(row) if row else None

    def get_version(self, tenant: str, user_id: str, version: int) -> ProfileVersion | None:
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT * FROM profile_versions WHERE tenant=? AND user_id=? AND version=?",
                (tenant, user_id, version),
            ).fetchone()
        return _profile(row) if row else None

    def list_versions(
        self, tenant: str, user_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[ProfileVersion]:
        below = decode_version_cursor(cursor) if cursor else None
        sql = "SELECT * FROM profile_versions WHERE tenant=? AND user_id=?"
        args: list[Any] = [tenant, user_id]
        if below is not None:
            sql += " AND version < ?"
            args.append(below)
        sql += " ORDER BY version DESC LIMIT ?"
        args.append(limit + 1)
        with self._db.reading() as conn:
            rows = conn.execute(sql, args).fetchall()
        items = [_profile(r) for r in rows[:limit]]
        more = len(rows) > limit
        return Page(items, encode_version_cursor(items[-1].version) if more and items else None)

    def save(self, profile: ProfileVersion) -> None:
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT MAX(version) AS v FROM profile_versions WHERE tenant=? AND user_id=?",
                (profile.tenant, profile.user_id),
            ).fetchone()
            current = row["v"] or 0
            if current != profile.version - 1:
                raise Conflict(
                    f"profile of {profile.user_id} is at version {current}, not {profile.version - 1}"
                )
            conn.execute(
                f"INSERT INTO profile_versions ({','.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})",
                (profile.tenant, profile.user_id, profile.version, profile.body, profile.updated_at,
                 profile.turn_count, profile.schema_version, profile.source, profile.restored_from,
                 json.dumps(dict(profile.consolidated), sort_keys=True)),
            )

    def delete_user(self, tenant: str, user_id: str) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM profile_versions WHERE tenant=? AND user_id=?", (tenant, user_id))


def _profile(row: sqlite3.Row) -> ProfileVersion:
    return ProfileVersion(
        tenant=row["tenant"], user_id=row["user_id"], version=row["version"], body=row["body"],
        updated_at=row["updated_at"], turn_count=row["turn_count"], schema_version=row["schema_version"],
        source=row["source"], restored_from=row["restored_from"], consolidated=json.loads(row["consolidated"]),
    )
