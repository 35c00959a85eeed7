"""Where the CPU of a LoCoMo `retrieve` goes, part by part, on a data folder ingested once and kept.

side_by_side.py ingests its LoCoMo memories afresh on every run (~7 minutes for 10,000 at 23/s); this
benchmark ingests them the same way (a run and a feedback per memory through the handlers `agentmem
serve` runs, then the event worker's indexing) into `--data-dir/<size>` once, and on every later run
copies that folder and asks side_by_side's 200 questions once each through
`POST /v1/agents/{agent}/retrieve` (topK 5, masking and the query embedding included): each question
a cache miss, as there. It prints wall p50 / p95, CPU per retrieve (`time.process_time`, all threads:
on a shared machine less noisy than wall time) and the CPU median of each part, timed by wrapping the
service's own methods:

- mask: `ConversationService._mask_texts` (detection, vault look-ups, replacement), of it detect: the
  detector's `detect`;
- embed: the query embedding; lessons: `RetrievalService._lessons` (vector search, the candidates'
  records, ranking, grouping), of it search and records;
- pack: `pack_context`; record: the run record (`record_run`);
- service: `RetrievalService.retrieve` whole; handler: the whole call through `LocalApp.handle`.

Run: .venv/bin/python benchmarks/bench_retrieve_parts.py --data-dir /tmp/agentmem-bench [--sizes 1000 10000]
Prints numbers; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import side_by_side

PARTS = ("handler", "service", "mask", "detect", "embed", "lessons", "search", "records", "pack", "record")


def kept_folder(data_dir: Path, size: int, data: Path) -> Path:
    """`data_dir/<size>`, ingested with side_by_side's memories on first use."""
    folder = data_dir / str(size)
    if (folder / ".ingested").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    worker = side_by_side.AgentmemWorker(folder)
    memories = side_by_side.locomo_memories(data, size)
    started = time.perf_counter()
    for start in range(0, size, side_by_side.INGEST_CHUNK):
        worker.ingest(memories[start:start + side_by_side.INGEST_CHUNK])
    print(f"  ingested {size:,} memories into {folder} in {time.perf_counter() - started:.0f} s", flush=True)
    worker.app.close()
    (folder / ".ingested").touch()
    return folder


@contextmanager
def timing() -> Iterator[Callable[[Any, str, list[float]], None]]:
    """`timed(owner, name, into)` wraps `owner.name` so that each call's CPU time goes to `into`;
    every wrapped attribute is put back on leaving."""
    restore: list[tuple[Any, str, Any]] = []

    def timed(owner: Any, name: str, into: list[float]) -> None:
        restore.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, _timed(getattr(owner, name), into))

    try:
        yield timed
    finally:
        for owner, name, original in reversed(restore):
            setattr(owner, name, original)


def _timed(original: Callable[..., Any], into: list[float]) -> Callable[..., Any]:

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            into.append(time.process_time() - started)

    return wrapper


class TimedEmbedder:
    """The service's embedder, its calls timed (the service holds it as a field, not a class method)."""

    def __init__(self, inner: Any, into: list[float]) -> None:
        self.inner, self.into = inner, into
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts: Any) -> Any:
        started = time.process_time()
        try:
            return self.inner.embed(texts)
        finally:
            self.into.append(time.process_time() - started)


def measure(folder: Path, questions: list[str]) -> dict[str, Any]:
    import agentmem.service.conversations as conversations
    import agentmem.service.memory as memory
    import agentmem.service.retrieval as retrieval

    with tempfile.TemporaryDirectory(prefix="retrieve-parts-") as tmp, timing() as timed:
        shutil.copytree(folder, Path(tmp) / "data")
        worker = side_by_side.AgentmemWorker(Path(tmp) / "data")  # its first retrieve loads the models
        services = worker.app.services
        cpu: dict[str, list[float]] = {part: [] for part in PARTS}
        timed(type(worker.app), "handle", cpu["handler"])
        timed(retrieval.RetrievalService, "retrieve", cpu["service"])
        timed(conversations.ConversationService, "_mask_texts", cpu["mask"])
        timed(type(services.conversations.detector), "detect", cpu["detect"])
        timed(retrieval.RetrievalService, "_lessons", cpu["lessons"])
        timed(type(services.memory.vectors.inner), "search", cpu["search"])
        timed(type(services.memory.store), "get_memories", cpu["records"])
        timed(retrieval, "pack_context", cpu["pack"])
        timed(memory.MemoryService, "record_run", cpu["record"])
        object.__setattr__(services.memory, "embedder", TimedEmbedder(services.memory.embedder, cpu["embed"]))
        wall: list[float] = []
        listed: list[int] = []
        for question in questions:
            started = time.perf_counter()
            listed.append(worker.query(question))
            wall.append(time.perf_counter() - started)
        worker.app.close()
    return {"wall": wall, "cpu": cpu, "listed": listed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="where the ingested folders are kept")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--questions", type=int, default=200)
    eval_dir = Path(os.environ.get("AGENTMEM_EVAL_DIR", side_by_side.ROOT.parent / "shared" / "eval"))
    parser.add_argument("--data", type=Path, default=eval_dir / "locomo-dev.json")
    args = parser.parse_args()
    questions = side_by_side.locomo_questions(args.data, args.questions)
    print(f"retrieve of {len(questions)} LoCoMo questions, topK {side_by_side.TOP_K}, each a cache miss; "
          f"CPU medians per retrieve in ms\n")
    print("| lessons | wall p50 / p95 | " + " | ".join(PARTS) + " | listed | load |")
    print("|---|---|" + "---|" * len(PARTS) + "---|---|", flush=True)
    for size in args.sizes:
        folder = kept_folder(args.data_dir, size, args.data)
        load = os.getloadavg()[0]
        result = measure(folder, questions)
        wall = statistics.quantiles(result["wall"], n=100)
        parts = " | ".join(f"{statistics.median(result['cpu'][part]) * 1000:.2f}" for part in PARTS)
        print(f"| {size:,} | {wall[49] * 1000:.2f} / {wall[94] * 1000:.2f} ms | {parts} | "
              f"{statistics.mean(result['listed']):.1f} | {load:.1f}-{os.getloadavg()[0]:.1f} "
              f"({time.strftime('%H:%M UTC', time.gmtime())}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

