"""CPU per lesson on the local backend: what one feedback costs from its request to its lesson indexed.

Through the very handlers `agentmem serve` runs (in-process, no HTTP, no other load from this script):
records `--lessons` runs, then times, in CPU seconds of this process (`time.process_time`, so time
another process takes from the machine is not counted):

- the feedback handler (`POST .../feedback`: validation, PII masking of the comment, the records, the
  outbox), one request at a time;
- the indexer (the event worker's delivery: SQS-shaped batches of up to 10, the digests embedded by
  MiniLM in one call per batch, the vectors written, the lessons marked indexed);
- one `retrieve` per lesson that sees it for the first time (its comment is embedded once, to compare
  near-duplicates).

The sum says how many cores a steady feedback rate needs: rate x CPU per lesson. `bench_feedback_latency.py`
measures the same work over HTTP, with its clients and pollers on the same machine.

Run: .venv/bin/python benchmarks/bench_lesson_cpu.py [--lessons 200]
Prints numbers; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from bench_feedback_latency import case_text

AGENT = "bench-agent"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    from agentmem.local.server import create_app

    with tempfile.TemporaryDirectory(prefix="agentmem-lesson-cpu-") as tmp:
        app = create_app(Path(tmp), start_worker=False, enabled_agents=[AGENT])
        headers = {"content-type": "application/json", "host": "127.0.0.1"}

        def call(method: str, path: str, body: object) -> dict[str, object]:
            status, _, answer = app.handle(method, path, headers, json.dumps(body).encode(), "127.0.0.1")
            assert status in (200, 201, 202), (status, answer)
            return json.loads(answer)  # type: ignore[no-any-return]

        try:
            rng = random.Random(7)
            cases = [case_text(rng, n) for n in range(args.lessons)]
            runs = [str(call("POST", f"/v1/agents/{AGENT}/runs", {"input": text, "output": f"FLAG '{text.split()[5]}'"})
                        ["runId"]) for text, _ in cases]
            call("POST", f"/v1/agents/{AGENT}/retrieve", {"input": "warm up the model"})

            started = time.process_time()
            for run_id, (_, comment) in zip(runs, cases, strict=True):
                call("POST", f"/v1/agents/{AGENT}/runs/{run_id}/feedback", {"rating": "down", "comment": comment})
            feedback = (time.process_time() - started) / args.lessons

            started = time.process_time()
            indexed = app.worker.drain(timeout=600)
            indexing = (time.process_time() - started) / args.lessons

            started = time.process_time()
            for text, _ in cases:
                call("POST", f"/v1/agents/{AGENT}/retrieve", {"input": text, "topK": 10})
            retrieve = (time.process_time() - started) / args.lessons
        finally:
            app.close()
    total = feedback + indexing
    cores = os.cpu_count() or 1
    print(f"{args.lessons} lessons ({indexed} deliveries), CPU per lesson in this process "
          f"(load average {os.getloadavg()[0]:.2f}, {cores} cores):")
    print(f"  feedback handler {feedback * 1000:.1f} ms; indexer {indexing * 1000:.1f} ms (batches of up to 10); "
          f"feedback to indexed {total * 1000:.1f} ms")
    print(f"  a first retrieve of each lesson's run input {retrieve * 1000:.1f} ms (masking, query embedding, "
          f"the comments compared, the run recorded)")
    for rate in (10, 20, 30, 50):
        print(f"  at {rate} feedbacks/s: {rate * total:.2f} cores for feedback and indexing alone "
              f"({rate * (total + retrieve):.2f} with one such retrieve per lesson)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
