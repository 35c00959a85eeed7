"""What a lesson's indexing costs by batch size, and what the local worker's batching window gives.

side_by_side.py's method (a run and a feedback per LoCoMo memory through the handlers `agentmem serve`
runs, in-process), after `--window` lessons are indexed (the grouping window full):

- `batches`: chunks of 50 lessons, each drained by the indexer in batches of 1, 2, 4 or 10 (the sizes
  interleaved, three rounds): the indexer's CPU per lesson (`time.process_time`, every thread);
- `beside`: `serve`'s worker thread indexing while the requests come, chunks of 125 lessons with the
  indexer's batching window at each of `--windows` seconds in turn (alternating order, four rounds):
  lessons per second until the last is indexed, the process's CPU per lesson and the mean batch.

Run: .venv/bin/python benchmarks/bench_index_batches.py [--window 500] [--windows 0 0.05]
Prints numbers; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from side_by_side import AGENT, AgentmemWorker, locomo_memories


def batch_sizes(worker: AgentmemWorker, memories: list[str]) -> None:
    import agentmem.local.worker as delivery

    cpu: dict[int, list[float]] = defaultdict(list)
    bus = worker.app.worker.bus
    worker.app.worker.stop()  # the requests first, then this thread delivers in batches of one size
    position = 0
    for _ in range(3):
        for size in (1, 2, 4, 10):
            chunk = memories[position:position + 50]
            position += len(chunk)
            delivery.CONSUMER_BATCH_SIZE = size
            for text in chunk:
                worker.ingested += 1
                run = worker._call("POST", f"/v1/agents/{AGENT}/runs",
                                   {"input": f"LoCoMo memory {worker.ingested}", "output": "noted"})
                worker._call("POST", f"/v1/agents/{AGENT}/runs/{run['runId']}/feedback",
                             {"rating": "up", "comment": text})
            started = time.process_time()
            worker.app.worker.drain(timeout=600)  # due deliveries, in batches of CONSUMER_BATCH_SIZE
            cpu[size].append((time.process_time() - started) / len(chunk) * 1000)
            assert bus.next_due_for("indexer") is None
    for size, values in cpu.items():
        print(f"  batches of {size:>2}: indexing {sum(values) / len(values):.2f} ms CPU per lesson "
              f"({', '.join(f'{v:.2f}' for v in values)})")


def beside(worker: AgentmemWorker, memories: list[str], windows: list[float]) -> None:
    import agentmem.service.memory as memory_service

    sizes: dict[float, list[int]] = defaultdict(list)
    current: list[float] = []
    index_memories = memory_service.MemoryService.index_memories

    def counted(self: Any, lessons: Any) -> list[str]:
        sizes[current[-1]].append(len(lessons))
        return index_memories(self, lessons)

    memory_service.MemoryService.index_memories = counted  # type: ignore[method-assign]
    totals: dict[float, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    position = 0
    for round_number in range(4):
        for window in windows if round_number % 2 == 0 else windows[::-1]:
            worker.app.worker.batching_windows = {"indexer": window}
            current.append(window)
            chunk = memories[position:position + 125]
            position += len(chunk)
            wall, cpu = time.perf_counter(), time.process_time()
            worker.ingest(chunk)
            totals[window][0] += time.perf_counter() - wall
            totals[window][1] += time.process_time() - cpu
            totals[window][2] += len(chunk)
    memory_service.MemoryService.index_memories = index_memories  # type: ignore[method-assign]
    for window, (wall, cpu, count) in totals.items():
        print(f"  batching window {window:.3f} s: {count / wall:.0f} lessons/s, CPU {cpu / count * 1000:.2f} ms per "
              f"lesson, mean batch {sum(sizes[window]) / len(sizes[window]):.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=500, help="lessons indexed before anything is timed")
    parser.add_argument("--windows", type=float, nargs="+", default=[0.0, 0.05])
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("AGENTMEM_EVAL_DIR", Path(__file__).resolve().parents[2]
                                                    / "shared" / "eval")) / "locomo-dev.json")
    args = parser.parse_args()
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    needed = args.window + 600 + 125 * 4 * len(args.windows)
    memories = locomo_memories(args.data, needed)
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores; {args.window} lessons indexed first")
    with tempfile.TemporaryDirectory(prefix="bench-index-batches-") as tmp:
        worker = AgentmemWorker(Path(tmp) / "beside", beside=True)
        worker.ingest(memories[: args.window])
        print("indexing beside the requests:")
        beside(worker, memories[args.window + 600:], args.windows)
        print("the indexer by batch size (requests first, then the indexing):")
        batch_sizes(worker, memories[args.window: args.window + 600])
        worker.app.close()
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
