"""The lessons' newest-first listings (the wall, the indexer's grouping window) read an index in order:
no page sorts all of an agent's lessons, in a new data folder or in one written with the older index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentmem.adapters.local.sqlite_store import SqliteRecordStore
from agentmem.domain.models import Feedback, Memory, Run


def store_with_lessons(path: Path, count: int) -> SqliteRecordStore:
    store = SqliteRecordStore(path)
    store.put_run(Run("acme", "a", "run-1", "input", 0.0, masked=True))
    for number in range(count):
        memory_id = f"mem-{number:03d}"
        feedback = Feedback("acme", "a", "run-1", f"fb-{number}", "down", "comment", float(number), memory_id)
        memory = Memory("acme", "a", memory_id, "run-1", f"fb-{number}", "down", "comment", "Editor: comment",
                        1.0, float(number), status="indexed")
        store.add_feedback(feedback, memory)
    return store


def listing_plans(store: SqliteRecordStore) -> list[str]:
    """The query plan of every statement the listings run: the first page, the next, the oldest ones."""
    statements: list[str] = []
    conn: sqlite3.Connection = store._db._conn  # the adapter's own connection, to see what it runs
    conn.set_trace_callback(statements.append)
    try:
        page = store.list_memories("acme", "a", limit=10)
        assert [m.memory_id for m in page.items] == [f"mem-{n:03d}" for n in range(59, 49, -1)]
        second = store.list_memories("acme", "a", limit=10, cursor=page.next_cursor)
        assert second.items[0].memory_id == "mem-049"
        assert [m.memory_id for m in store.list_memories_created_before("acme", "a", 3.0, limit=10)] == [
            "mem-000", "mem-001", "mem-002"]
    finally:
        conn.set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 3
    return [" ".join(str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {s}")) for s in selects]


def test_the_listings_of_a_new_data_folder_never_sort_the_agents_lessons(tmp_path: Path) -> None:
    for plan in listing_plans(store_with_lessons(tmp_path / "records.db", 60)):
        assert "TEMP B-TREE" not in plan and "memories_listing" in plan, plan


def test_a_data_folder_with_the_older_index_gets_the_listing_index_on_opening(tmp_path: Path) -> None:
    path = tmp_path / "records.db"
    store_with_lessons(path, 60)._db.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP INDEX memories_listing")
        conn.execute("CREATE INDEX memories_newest ON memories (tenant, agent_id, status, created_at DESC,"
                     " memory_id DESC)")
    reopened = SqliteRecordStore(path)
    indexes = {row[0] for row in reopened._db._conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "memories_listing" in indexes and "memories_newest" not in indexes
    for plan in listing_plans(reopened):
        assert "TEMP B-TREE" not in plan, plan
