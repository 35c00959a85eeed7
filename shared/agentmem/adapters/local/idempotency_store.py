"""powertools' idempotency records in SQLite, so the same `idempotent_function` runs locally and in Lambda.

`SqliteIdempotencyStore` is a powertools `BasePersistenceLayer`: powertools
hashes the key, validates the payload and decides what a record's status
means; this class only stores records, with the same conditional write the
DynamoDB layer uses (`attribute_not_exists OR expired OR in-progress past its
Lambda deadline`), done in one `BEGIN IMMEDIATE` transaction so two threads
or two processes on the same file cannot both win. Expired records are purged
on write, as DynamoDB's TTL removes them in AWS.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import STATUS_CONSTANTS, DataRecord

from agentmem.adapters.local.sqlite_base import SqliteDatabase

IDEMPOTENCY_DB = "idempotency.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency_records (
    idempotency_key TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    expiry INTEGER NOT NULL,
    in_progress_expiry INTEGER,
    response_data TEXT NOT NULL DEFAULT '',
    payload_hash TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS idempotency_records_expiry ON idempotency_records (expiry);
"""
_COLUMNS = "idempotency_key, status, expiry, in_progress_expiry, response_data, payload_hash"


class SqliteIdempotencyStore(BasePersistenceLayer):
    """powertools' idempotency persistence layer on a SQLite file (WAL, one writer at a time)."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self._db = SqliteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def _get_record(self, idempotency_key: str) -> DataRecord:
        with self._db.reading() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM idempotency_records WHERE idempotency_key = ?", (idempotency_key,)
            ).fetchone()
        if row is None:
            raise IdempotencyItemNotFoundError
        return _to_record(row)

    def _put_record(self, data_record: DataRecord) -> None:
        now = time.time()
        now_seconds, now_millis = int(now), int(now * 1000)
        with self._db.transaction() as conn:
            # What DynamoDB's TTL does in AWS (and the layer's `#expiry < :now`): an expired record no longer counts.
            conn.execute("DELETE FROM idempotency_records WHERE expiry < ?", (now_seconds,))
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM idempotency_records WHERE idempotency_key = ?",
                (data_record.idempotency_key,),
            ).fetchone()
            if row is not None and not _in_progress_past_deadline(row, now_millis):
                existing = _to_record(row)
                # As the DynamoDB layer does with the item its failed condition returns:
                # a key reused with another payload is a validation error, not "in progress".
                # (Written out rather than calling the base class's private `_validate_payload`.)
                if self.payload_validation_enabled and existing.payload_hash != data_record.payload_hash:
                    raise IdempotencyValidationError("Payload does not match stored record for this event key")
                raise IdempotencyItemAlreadyExistsError(old_data_record=existing)
            conn.execute(
                f"INSERT OR REPLACE INTO idempotency_records ({_COLUMNS}) VALUES (?, ?, ?, ?, '', ?)",
                (
                    data_record.idempotency_key,
                    data_record.status,
                    data_record.expiry_timestamp,
                    data_record.in_progress_expiry_timestamp,
                    data_record.payload_hash or "",
                ),
            )

    def _update_record(self, data_record: DataRecord) -> None:
        # An upsert, like DynamoDB's UpdateItem: the in-progress row may have been purged meanwhile.
        # The payload hash is rewritten only when validation is on, as the DynamoDB layer does.
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO idempotency_records ({_COLUMNS}) VALUES (?, ?, ?, NULL, ?, ?)"
                " ON CONFLICT (idempotency_key) DO UPDATE SET status = excluded.status,"
                " expiry = excluded.expiry, response_data = excluded.response_data,"
                " payload_hash = CASE WHEN ? THEN excluded.payload_hash ELSE payload_hash END",
                (
                    data_record.idempotency_key,
                    data_record.status,
                    data_record.expiry_timestamp,
                    data_record.response_data,
                    data_record.payload_hash or "",
                    self.payload_validation_enabled,
                ),
            )

    def _delete_record(self, data_record: DataRecord) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "DELETE FROM idempotency_records WHERE idempotency_key = ?", (data_record.idempotency_key,)
            )


def _in_progress_past_deadline(row: sqlite3.Row, now_millis: int) -> bool:
    """An in-progress record whose Lambda ran out of time: the DynamoDB layer's condition lets it be replaced."""
    deadline = row["in_progress_expiry"]
    return bool(row["status"] == STATUS_CONSTANTS["INPROGRESS"] and deadline is not None and deadline < now_millis)


def _to_record(row: sqlite3.Row) -> DataRecord:
    return DataRecord(
        idempotency_key=row["idempotency_key"],
        status=row["status"],
        expiry_timestamp=row["expiry"],
        in_progress_expiry_timestamp=row["in_progress_expiry"],
        response_data=row["response_data"],
        payload_hash=row["payload_hash"],
    )
