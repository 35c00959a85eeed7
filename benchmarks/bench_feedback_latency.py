"""How long after `POST .../feedback` answers 202 a lesson is retrievable, on the local server.

The contract says: within one second locally. This drives the real HTTP server
(a socket on 127.0.0.1) with the real client and the background worker, and
polls `retrieve` until the new lesson comes back.

Run: .venv/bin/python benchmarks/bench_feedback_latency.py [--n 30]
Prints numbers; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import time

from agentmem.client import MemoryClient
from agentmem.demo.runner import local_service

AGENT = "bench-agent"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=30)
    args = parser.parse_args()
    samples = []
    with local_service([AGENT]) as url:
        client = MemoryClient(url)
        client.retrieve(AGENT, "warm up the model")
        for i in range(args.n):
            text = f"Case {i}: audit the product page of the Ridgeline {i} backpack for hype words."
            run = client.retrieve(AGENT, text)
            client.set_output(AGENT, run.run_id, "FLAG 'revolutionary'")
            receipt = client.feedback(AGENT, run.run_id, "down", f"Case {i}: 'revolutionary' is fine here.")
            start = time.perf_counter()
            while True:
                lessons = client.retrieve(AGENT, text).lessons
                if any(lesson.memory_id == receipt.memory_id for lesson in lessons):
                    break
                if time.perf_counter() - start > 10:
                    raise SystemExit(f"lesson {i} not retrievable after 10 s")
                time.sleep(0.005)
            samples.append(time.perf_counter() - start)
    ms = sorted(s * 1000 for s in samples)
    q = statistics.quantiles(ms, n=20)
    print(f"feedback accepted -> lesson retrievable, n={len(ms)}: "
          f"p50 {statistics.median(ms):.1f} ms  p95 {q[18]:.1f} ms  max {ms[-1]:.1f} ms")


if __name__ == "__main__":
    main()
