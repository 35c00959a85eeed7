"""The local vector index's search with and without the int8 first pass, on LoCoMo memories.

Embeds the first N memories side_by_side.py uses (its LoCoMo turns, MiniLM) into a LocalVectorIndex
per size, then asks side_by_side's 200 questions (embedded the same way) for the `k` nearest, once with
the first pass (the index as shipped) and once with every group scanned exactly in float32
(`PRESCAN_ROWS` raised above the size). It prints the p50 / p95 time of `search` for both, how many rows
the first pass leaves to score exactly, and in how many of the questions the two answers (ids and
order) are the same.

Run: .venv/bin/python benchmarks/bench_vector_scan.py [--sizes 1000 2000 4000 10000 20000] [--k 40]
Prints numbers; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import side_by_side
from agentmem.adapters.local import vector_index
from agentmem.adapters.local.int8_scan import candidates, encode
from agentmem.adapters.local.minilm import MiniLMEmbedder
from agentmem.ports.vectors import VectorItem, VectorQuery


def timed_answers(index: vector_index.LocalVectorIndex, queries: np.ndarray, k: int) -> tuple[list[float], list]:
    times, answers = [], []
    for q in queries:
        started = time.perf_counter()
        hits = index.search(VectorQuery("bench", "lesson", "agent", q, k))
        times.append(time.perf_counter() - started)
        answers.append([h.item_id for h in hits])
    return times, answers


def ms(values: list[float], q: int) -> float:
    return float(np.percentile(values, q)) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 10_000, 20_000])
    parser.add_argument("--k", type=int, default=40, help="what retrieve asks for at topK 5 (5 x 8)")
    parser.add_argument("--data", type=Path, default=side_by_side.ROOT.parent / "shared" / "eval" / "locomo-dev.json")
    args = parser.parse_args()
    embedder = MiniLMEmbedder(cache_size=0)
    memories = side_by_side.locomo_memories(args.data, max(args.sizes))
    vectors = embedder.embed(memories).astype(np.float32)
    queries = embedder.embed(side_by_side.locomo_questions(args.data, 200)).astype(np.float32)
    print(f"search of the {args.k} nearest for 200 LoCoMo questions; MiniLM vectors of LoCoMo memories\n")
    print("| rows | int8 first pass, then exact: p50 / p95 | exact float32 scan: p50 / p95 | rows scored exactly "
          "(median) | same answer |")
    print("|---|---|---|---|---|")
    shipped = vector_index.PRESCAN_ROWS
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="vector-scan-") as tmp:
            index = vector_index.LocalVectorIndex(Path(tmp) / "vectors.db")
            index.upsert([VectorItem("bench", "lesson", "agent", f"m{i}", vectors[i], 1.0) for i in range(size)])
            timed_answers(index, queries[:20], args.k)  # warm
            vector_index.PRESCAN_ROWS = 0
            first, first_answers = timed_answers(index, queries, args.k)
            vector_index.PRESCAN_ROWS = size + 1
            exact, exact_answers = timed_answers(index, queries, args.k)
            vector_index.PRESCAN_ROWS = shipped
            codes = encode(vectors[:size] / np.linalg.norm(vectors[:size], axis=1, keepdims=True))
            kept = statistics.median(len(candidates(codes, q / np.linalg.norm(q), args.k)) for q in queries)
            same = sum(a == b for a, b in zip(first_answers, exact_answers, strict=True))
            print(f"| {size:,} | {ms(first, 50):.3f} / {ms(first, 95):.3f} ms | {ms(exact, 50):.3f} / "
                  f"{ms(exact, 95):.3f} ms | {kept:.0f} | {same} of {len(queries)} |", flush=True)
            index.close()
    print(f"\nshipped: the first pass from {shipped:,} rows (vector_index.PRESCAN_ROWS)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
