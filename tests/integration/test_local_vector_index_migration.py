"""A data folder from before vector tags: the local index adds the column and keeps every old vector."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.ports.vectors import VectorItem, VectorQuery

OLD_SCHEMA = """
CREATE TABLE vectors (
    tenant TEXT NOT NULL, kind TEXT NOT NULL, owner_id TEXT NOT NULL, item_id TEXT NOT NULL,
    created_at REAL NOT NULL, dimension INTEGER NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (tenant, kind, owner_id, item_id)
);
"""


def test_an_index_from_before_tags_gets_the_column_and_its_vectors_stay_searchable_untagged(tmp_path: Path):
    path = tmp_path / "vectors.db"
    old = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SCHEMA)
        conn.execute(
            "INSERT INTO vectors VALUES (?,?,?,?,?,?,?)", ("acme", "item", "users/u", "old", 1.0, 3, old.tobytes())
        )
    index = LocalVectorIndex(path)
    index.upsert([VectorItem("acme", "item", "users/u", "new", np.array([0.0, 1.0, 0.0]), 2.0, ("t",))])
    everything = VectorQuery("acme", "item", "users/u", np.array([1.0, 1.0, 0.0]), k=10)
    assert sorted(hit.item_id for hit in index.search(everything)) == ["new", "old"]
    tagged = VectorQuery("acme", "item", "users/u", np.array([1.0, 1.0, 0.0]), k=10, tags=("t",))
    assert [hit.item_id for hit in index.search(tagged)] == ["new"]
    index.close()
    reopened = LocalVectorIndex(path)  # tags survive a restart
    assert [hit.item_id for hit in reopened.search(tagged)] == ["new"]
    reopened.close()
