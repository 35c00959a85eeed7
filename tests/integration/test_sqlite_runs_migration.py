"""Data folders written by older versions: opening one adds the verdict column (filled from its feedback),
the masked marker (0: its runs may hold raw text, so their digests are masked again) and the comment vectors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentmem.adapters.local.sqlite_store import SqliteRecordStore

# The runs table as it was before verdicts (the feedback and memories tables are unchanged).
OLD_RUNS = """
CREATE TABLE runs (
    tenant TEXT NOT NULL, agent_id TEXT NOT NULL, run_id TEXT NOT NULL,
    input TEXT NOT NULL, output TEXT, user_id TEXT, thread_id TEXT,
    injected TEXT NOT NULL DEFAULT '[]', feedback_ids TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL,
    PRIMARY KEY (tenant, agent_id, run_id)
);
CREATE TABLE feedback (
    tenant TEXT NOT NULL, agent_id TEXT NOT NULL, feedback_id TEXT NOT NULL,
    run_id TEXT NOT NULL, rating TEXT NOT NULL, comment TEXT, memory_id TEXT NOT NULL,
    idempotency_key TEXT, request_hash TEXT, created_at REAL NOT NULL,
    PRIMARY KEY (tenant, agent_id, feedback_id)
);
"""


def test_old_runs_get_the_verdict_of_their_newest_feedback(tmp_path: Path) -> None:
    path = tmp_path / "records.db"
    conn = sqlite3.connect(path)
    conn.executescript(OLD_RUNS)
    conn.executemany(
        "INSERT INTO runs (tenant, agent_id, run_id, input, feedback_ids, created_at) VALUES (?,?,?,?,?,?)",
        [("acme", "a", "run-1", "in 1", '["fb-1","fb-2"]', 1.0), ("acme", "a", "run-2", "in 2", "[]", 2.0)],
    )
    conn.executemany(
        "INSERT INTO feedback (tenant, agent_id, feedback_id, run_id, rating, memory_id, created_at)"
        " VALUES (?,?,?,?,?,?,?)",
        [("acme", "a", "fb-1", "run-1", "up", "m-1", 5.0), ("acme", "a", "fb-2", "run-1", "down", "m-2", 6.0)],
    )
    conn.commit()
    conn.close()

    store = SqliteRecordStore(path)
    try:
        assert store.get_run("acme", "a", "run-1").verdict == "down"
        assert store.get_run("acme", "a", "run-2").masked is False
        assert [r.run_id for r in store.list_runs("acme", "a", limit=10, verdict="none").items] == ["run-2"]
        assert [r.run_id for r in store.list_runs("acme", "a", limit=10, verdict="down").items] == ["run-1"]
    finally:
        store.close()
    # Opening it again changes nothing.
    again = SqliteRecordStore(path)
    assert again.get_run("acme", "a", "run-1").verdict == "down"
    again.close()


def test_old_lessons_get_an_empty_comment_vector_column(tmp_path: Path) -> None:
    path = tmp_path / "records.db"
    conn = sqlite3.connect(path)
    conn.executescript(OLD_RUNS + """
CREATE TABLE memories (
    tenant TEXT NOT NULL, agent_id TEXT NOT NULL, memory_id TEXT NOT NULL,
    run_id TEXT NOT NULL, feedback_id TEXT NOT NULL, rating TEXT NOT NULL, comment TEXT,
    digest TEXT NOT NULL, importance REAL NOT NULL, status TEXT NOT NULL,
    injected_count INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, updated_at REAL,
    PRIMARY KEY (tenant, agent_id, memory_id)
);
""")
    conn.execute("INSERT INTO memories (tenant, agent_id, memory_id, run_id, feedback_id, rating, digest, importance,"
                 " status, created_at) VALUES ('acme', 'a', 'm-1', 'run-1', 'fb-1', 'down', 'Editor: no', 1.0,"
                 " 'indexed', 5.0)")
    conn.commit()
    conn.close()

    store = SqliteRecordStore(path)
    try:
        assert store.get_memory("acme", "a", "m-1").comment_vector is None
        vector = b"\x00\x00\x80\x3f" * 384
        assert store.update_memory("acme", "a", "m-1", comment_vector=vector).comment_vector == vector
    finally:
        store.close()
