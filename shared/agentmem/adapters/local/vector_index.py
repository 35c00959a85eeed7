"""The in-process vector index: exact cosine over float32 vectors, kept in SQLite, cached in memory.

Vectors are grouped by (tenant, kind, owner) and each group is one contiguous
matrix, so a search touches only the caller's own vectors: the filter by
tenant and owner happens before any similarity is computed, and the filters by
age and tags mask rows before the k nearest are chosen. A group of at least
`PRESCAN_ROWS` rows is first scanned in int8 (`int8_scan`), which rules out the
rows that cannot be among the k nearest; the rest are scored exactly, so the
answer is the full exact scan's. Ties are broken by the older row.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agentmem.adapters.local import int8_scan
from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.ports.vectors import VectorHit, VectorItem, VectorKind, VectorQuery

SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    tenant TEXT NOT NULL, kind TEXT NOT NULL, owner_id TEXT NOT NULL, item_id TEXT NOT NULL,
    created_at REAL NOT NULL, dimension INTEGER NOT NULL, vector BLOB NOT NULL, tags TEXT,
    PRIMARY KEY (tenant, kind, owner_id, item_id)
);
"""
_COLUMNS = "tenant, kind, owner_id, item_id, created_at, dimension, vector, tags"
_NO_TAGS: frozenset[str] = frozenset()
# From this many rows the int8 first pass pays for itself: on LoCoMo memories at 1,000 rows both take
# 0.10 ms, at 4,000 the pass 0.19 against 0.32, at 10,000 0.34 against 0.64 (benchmarks/bench_vector_scan.py).
PRESCAN_ROWS = 2048

GroupKey = tuple[str, str, str]


class _Group:
    """One owner's vectors: a growable matrix with a row per item, and free rows left by deletes."""

    def __init__(self, dimension: int):
        self.dimension = dimension
        self.matrix = np.zeros((16, dimension), dtype=np.float32)
        # The rows' int8 codes, for the first pass of a large group's search (int8_scan.Codes).
        self.codes = np.zeros((16, dimension), dtype=np.int8)
        self.step = np.ones(16, dtype=np.float64)
        self.code_norm = np.zeros(16, dtype=np.float64)
        self.code_error = np.zeros(16, dtype=np.float64)
        self.created = np.zeros(16, dtype=np.float64)
        self.alive = np.zeros(16, dtype=bool)
        self.ids: list[str | None] = [None] * 16
        self.tags: list[frozenset[str]] = [_NO_TAGS] * 16
        self.row_of: dict[str, int] = {}
        self.size = 0  # rows in use, alive or not
        # What lets a search skip its masks when every row passes them: the rows removed among those in
        # use (a removed row is never reused), and a lower bound of every row's `created`.
        self.removed = 0
        self.oldest = np.inf

    def put(self, item_id: str, vector: np.ndarray, created_at: float, tags: frozenset[str] = _NO_TAGS) -> None:
        row = self.row_of.get(item_id)
        if row is None:
            if self.size == len(self.ids):
                self._grow()
            row = self.size
            self.size += 1
            self.row_of[item_id] = row
            self.ids[row] = item_id
        self.matrix[row] = vector
        coded = int8_scan.encode(vector)
        self.codes[row], self.step[row] = coded.codes[0], coded.step[0]
        self.code_norm[row], self.code_error[row] = coded.norm[0], coded.error[0]
        self.created[row] = created_at
        self.oldest = min(self.oldest, created_at)
        self.tags[row] = tags
        self.alive[row] = True

    def remove(self, item_id: str) -> None:
        row = self.row_of.pop(item_id, None)
        if row is not None:
            self.alive[row] = False
            self.removed += 1
            self.ids[row] = None
            self.tags[row] = _NO_TAGS

    def _grow(self) -> None:
        capacity = len(self.ids) * 2
        self.matrix = _grown(self.matrix, capacity, self.size)
        self.codes = _grown(self.codes, capacity, self.size)
        self.step = _grown(self.step, capacity, self.size)
        self.code_norm = _grown(self.code_norm, capacity, self.size)
        self.code_error = _grown(self.code_error, capacity, self.size)
        self.created = _grown(self.created, capacity, self.size)
        self.alive = _grown(self.alive, capacity, self.size)
        self.tags.extend([_NO_TAGS] * (capacity - len(self.ids)))
        self.ids.extend([None] * (capacity - len(self.ids)))

    def search(
        self, vector: np.ndarray, k: int, created_after: float | None, tags: tuple[str, ...] = ()
    ) -> list[VectorHit]:
        n = self.size
        if n == 0 or k <= 0:
            return []
        live = self._live(n, created_after, tags)
        k = min(k, n if live is None else int(live.sum()))
        if k == 0:
            return []
        rows: np.ndarray | None
        # numpy's own loop, not `@`: a matrix-vector product of this size goes to OpenBLAS, whose threads
        # spin while they wait and, on 2 busy cores, took 4.7 ms of CPU (21.7 wall) for 10k x 384 where this
        # takes 0.56 (2.6 wall), load 11; the scores agree to 5e-5.
        if n >= PRESCAN_ROWS:
            codes = int8_scan.Codes(self.codes[:n], self.step[:n], self.code_norm[:n], self.code_error[:n])
            rows = int8_scan.candidates(codes, vector, k, live)
            scores = np.einsum("ij,j->i", self.matrix[rows], vector)
        else:
            scores = np.einsum("ij,j->i", self.matrix[:n], vector)
            rows = None if live is None else np.flatnonzero(live)
            if rows is not None:
                scores = scores[rows]
        best = _best(scores, k)
        picked = best if rows is None else rows[best]
        return [VectorHit(self.ids[r], float(scores[b])) for r, b in zip(picked, best, strict=True)]  # type: ignore[arg-type]

    def _live(self, n: int, created_after: float | None, tags: tuple[str, ...]) -> np.ndarray | None:
        """Which of the first `n` rows a search may return; None when all may (nothing removed, none too
        old, no tags asked for), so the search need not mask."""
        if not self.removed and not tags and (created_after is None or self.oldest > created_after):
            return None
        mask = self.alive[:n]
        if created_after is not None:
            mask = mask & (self.created[:n] > created_after)
        if tags:
            wanted = frozenset(tags)
            mask = mask & np.fromiter((wanted <= row for row in self.tags[:n]), dtype=bool, count=n)
        return mask


def _grown(array: np.ndarray, capacity: int, used: int) -> np.ndarray:
    """`array` with `capacity` rows, its first `used` rows kept, the others zero."""
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:used] = array[:used]
    return grown


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """The positions of the `k` best scores (1 <= k <= len(scores)), best first; of equal scores, the
    earlier position first (also where the k-th place is shared)."""
    n = len(scores)
    if k < n:
        kth = np.partition(scores, n - k)[n - k]
        above = np.flatnonzero(scores > kth)
        top = np.concatenate([above, np.flatnonzero(scores == kth)[: k - len(above)]])
    else:
        top = np.arange(n)
    return top[np.lexsort((top, -scores[top]))]


class LocalVectorIndex:
    """VectorIndex on SQLite + numpy. Loads every group into memory on first use."""

    def __init__(self, path: Path):
        self._db = SqliteDatabase(path, SCHEMA)
        self._groups: dict[GroupKey, _Group] = {}
        self._lock = threading.RLock()
        self._loaded = False
        with self._db.transaction() as conn:
            # A data folder from before tags: add their column (its vectors have none).
            if "tags" not in {row["name"] for row in conn.execute("PRAGMA table_info(vectors)")}:
                conn.execute("ALTER TABLE vectors ADD COLUMN tags TEXT")

    def close(self) -> None:
        self._db.close()

    def _load(self) -> None:
        if self._loaded:
            return
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM vectors"
            ).fetchall()
        for r in rows:
            vector = np.frombuffer(r["vector"], dtype=np.float32, count=r["dimension"])
            tags = frozenset(json.loads(r["tags"])) if r["tags"] else _NO_TAGS
            self._group((r["tenant"], r["kind"], r["owner_id"]), r["dimension"]).put(
                r["item_id"], vector, r["created_at"], tags
            )
        self._loaded = True

    def _group(self, key: GroupKey, dimension: int) -> _Group:
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(dimension)
        elif group.dimension != dimension:
            raise ValueError(f"vector dimension {dimension} does not match the index's {group.dimension}")
        return group

    def upsert(self, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        prepared = [(item, _unit(item.vector)) for item in items]
        with self._lock:
            self._load()
            with self._db.transaction() as conn:
                conn.executemany(
                    f"INSERT OR REPLACE INTO vectors ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                    [
                        (i.tenant, i.kind, i.owner_id, i.item_id, i.created_at, len(v), v.tobytes(),
                         json.dumps(sorted(i.tags)) if i.tags else None)
                        for i, v in prepared
                    ],
                )
            for item, vector in prepared:
                self._group((item.tenant, item.kind, item.owner_id), len(vector)).put(
                    item.item_id, vector, item.created_at, frozenset(item.tags)
                )

    def delete(self, tenant: str, kind: VectorKind, owner_id: str, item_ids: Sequence[str]) -> None:
        with self._lock:
            self._load()
            with self._db.transaction() as conn:
                conn.executemany(
                    "DELETE FROM vectors WHERE tenant=? AND kind=? AND owner_id=? AND item_id=?",
                    [(tenant, kind, owner_id, i) for i in item_ids],
                )
            group = self._groups.get((tenant, kind, owner_id))
            if group:
                for item_id in item_ids:
                    group.remove(item_id)

    def delete_owner(self, tenant: str, kind: VectorKind, owner_id: str) -> None:
        with self._lock:
            self._load()
            with self._db.transaction() as conn:
                conn.execute(
                    "DELETE FROM vectors WHERE tenant=? AND kind=? AND owner_id=?", (tenant, kind, owner_id)
                )
            self._groups.pop((tenant, kind, owner_id), None)

    def search(self, query: VectorQuery) -> list[VectorHit]:
        vector = _unit(query.vector)
        with self._lock:
            self._load()
            group = self._groups.get((query.tenant, query.kind, query.owner_id))
            if group is None:
                return []
            if group.dimension != len(vector):
                raise ValueError(
                    f"query dimension {len(vector)} does not match the index's {group.dimension}"
                )
            return group.search(vector, query.k, query.created_after, query.tags)


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v
