"""The int8 first pass of the local vector index: its bound holds, it never drops a row the exact scan
keeps, and a large group's search answers exactly as a full float32 scan does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from agentmem.adapters.local import int8_scan
from agentmem.adapters.local.vector_index import PRESCAN_ROWS, LocalVectorIndex
from agentmem.ports.vectors import VectorItem, VectorQuery

DIMENSION = 384


def clustered(rng: np.random.Generator, n: int, *, clusters: int = 12, spread: float = 0.35) -> np.ndarray:
    """Unit rows around a few centres, as sentence embeddings are, with some rows repeated exactly."""
    centres = rng.standard_normal((clusters, DIMENSION))
    rows = centres[rng.integers(0, clusters, n)] + spread * rng.standard_normal((n, DIMENSION))
    repeats = rng.integers(0, n, n // 10)
    rows[repeats] = rows[rng.integers(0, n, len(repeats))]
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def query_near(rng: np.random.Generator, rows: np.ndarray) -> np.ndarray:
    q = rows[rng.integers(0, len(rows))] + 0.5 * rng.standard_normal(DIMENSION).astype(np.float32)
    return (q / np.linalg.norm(q)).astype(np.float32)


@pytest.mark.parametrize("seed", range(6))
def test_the_estimate_is_within_its_bound_of_the_exact_score(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = clustered(rng, 2000)
    stored = int8_scan.encode(rows)
    for _ in range(10):
        q = query_near(rng, rows)
        coded = int8_scan.encode(q)
        estimate = (stored.codes.astype(np.int64) @ coded.codes[0].astype(np.int64)) * stored.step * coded.step[0]
        bound = stored.norm * coded.error[0] + stored.error * np.linalg.norm(q)
        exact = rows.astype(np.float64) @ q.astype(np.float64)
        assert np.all(np.abs(exact - estimate) <= bound + 1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_no_row_left_out_could_be_among_the_k_best(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    rows = clustered(rng, 3000)
    stored = int8_scan.encode(rows)
    for _ in range(10):
        q = query_near(rng, rows)
        k = int(rng.integers(1, 120))
        live = rng.random(len(rows)) < 0.7 if rng.random() < 0.5 else None
        kept = int8_scan.candidates(stored, q, k, live)
        exact = np.einsum("ij,j->i", rows, q)
        allowed = np.ones(len(rows), bool) if live is None else live
        assert np.all(allowed[kept]), "a row the mask excludes was kept"
        kth = np.sort(exact[allowed])[::-1][min(k, int(allowed.sum())) - 1]
        dropped = np.setdiff1d(np.flatnonzero(allowed), kept)
        assert np.all(exact[dropped] < kth)
        # and the pass does its work: most rows are never read in float32
        assert len(kept) < len(rows) / 4


def test_rows_tied_at_the_kth_place_are_all_kept() -> None:
    rng = np.random.default_rng(7)
    row = clustered(rng, 1)[0]
    rows = np.vstack([np.tile(row, (50, 1)), clustered(rng, 500)])
    kept = int8_scan.candidates(int8_scan.encode(rows), row, 3)
    assert set(range(50)) <= set(kept.tolist())


def test_no_live_row_gives_no_candidate() -> None:
    rows = clustered(np.random.default_rng(3), 100)
    assert len(int8_scan.candidates(int8_scan.encode(rows), rows[0], 5, np.zeros(100, bool))) == 0


def brute_force(rows: np.ndarray, q: np.ndarray, k: int, allowed: np.ndarray) -> list[int]:
    """The k best allowed rows by exact float32 score, ties to the earlier row."""
    scores = np.einsum("ij,j->i", rows, q)
    order = sorted(np.flatnonzero(allowed).tolist(), key=lambda r: (-scores[r], r))
    return order[:k]


def test_a_large_group_answers_as_the_full_exact_scan(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    n = PRESCAN_ROWS + 1500
    rows = clustered(rng, n)
    created = 1_750_000_000.0 + np.arange(n, dtype=np.float64)
    index = LocalVectorIndex(tmp_path / "vectors.db")
    index.upsert([
        VectorItem("acme", "lesson", "agent", f"m{i}", rows[i], float(created[i]),
                   tags=("even",) if i % 2 == 0 else ())
        for i in range(n)
    ])
    removed = rng.choice(n, 300, replace=False)
    index.delete("acme", "lesson", "agent", [f"m{i}" for i in removed])
    alive = np.ones(n, bool)
    alive[removed] = False
    even = np.arange(n) % 2 == 0
    for case in range(12):
        q = query_near(rng, rows)
        k = int(rng.integers(1, 100))
        after = float(created[int(rng.integers(0, n // 2))]) if case % 3 == 1 else None
        tags = ("even",) if case % 3 == 2 else ()
        allowed = alive & (created > after if after is not None else True) & (even if tags else True)
        hits = index.search(VectorQuery("acme", "lesson", "agent", q, k, created_after=after, tags=tags))
        assert [h.item_id for h in hits] == [f"m{r}" for r in brute_force(rows, q, k, allowed)]
        exact = np.einsum("ij,j->i", rows, q)
        assert [h.similarity for h in hits] == pytest.approx([float(exact[int(h.item_id[1:])]) for h in hits])
    index.close()


def test_a_group_reloaded_from_disk_keeps_its_codes(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    n = PRESCAN_ROWS + 10
    rows = clustered(rng, n)
    index = LocalVectorIndex(tmp_path / "vectors.db")
    index.upsert([VectorItem("acme", "lesson", "agent", f"m{i}", rows[i], 1.0) for i in range(n)])
    index.close()
    reopened = LocalVectorIndex(tmp_path / "vectors.db")
    q = query_near(rng, rows)
    hits = reopened.search(VectorQuery("acme", "lesson", "agent", q, 20))
    assert [h.item_id for h in hits] == [f"m{r}" for r in brute_force(rows, q, 20, np.ones(n, bool))]
    reopened.close()
