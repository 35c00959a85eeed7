"""`retrieve` over `agentmem serve`, each question a cache miss, on the kept LoCoMo folders.

bench_retrieve_parts.py and side_by_side.py time `retrieve` in-process (the handler `agentmem serve`
runs). This starts the real command on a copy of `--data-dir/<size>` (the folder bench_retrieve_parts.py
ingests: side_by_side's memories as lessons) and sends side_by_side's 200 distinct LoCoMo questions once
each (topK 5) over one kept-alive HTTP connection, timed from the client's side (request sent to answer
read): masking, the query embedding (a different text each time, so never from the cache), the search,
packing and the HTTP front. One warm-up request first, with a question not among the 200.

Run: .venv/bin/python benchmarks/bench_serve_retrieve.py --data-dir /tmp/speed-parts [--sizes 1000 10000]
Prints numbers; asserts nothing about time. Loopback only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_http
import bench_retrieve_parts
import side_by_side


def serve_and_ask(folder: Path, questions: list[str]) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="serve-retrieve-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(folder, data)
        process, port = bench_http.start_server(data)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            path = f"/v1/agents/{side_by_side.AGENT}/retrieve"
            status, _ = bench_http.call(conn, "POST", path, json.dumps({"input": "Where did Ana Lopez move?"}).encode())
            if status != 200:
                raise RuntimeError(f"warm-up retrieve answered {status}")
            latencies = []
            for question in questions:
                body = json.dumps({"input": question, "topK": side_by_side.TOP_K}).encode()
                started = time.perf_counter()
                status, _ = bench_http.call(conn, "POST", path, body)
                latencies.append(time.perf_counter() - started)
                if status != 200:
                    raise RuntimeError(f"retrieve answered {status}")
            conn.close()
            return latencies
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="where the ingested folders are kept")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--questions", type=int, default=200)
    default_data = Path(os.environ.get("AGENTMEM_EVAL_DIR", side_by_side.ROOT.parent / "shared" / "eval"))
    parser.add_argument("--data", type=Path, default=default_data / "locomo-dev.json")
    args = parser.parse_args()
    questions = side_by_side.locomo_questions(args.data, args.questions)
    print(f"retrieve over agentmem serve, {len(questions)} LoCoMo questions, topK {side_by_side.TOP_K}, each a "
          "cache miss, one kept-alive connection\n")
    print("| lessons | p50 / p95 | load |")
    print("|---|---|---|")
    for size in args.sizes:
        folder = bench_retrieve_parts.kept_folder(args.data_dir, size, args.data)
        before = os.getloadavg()[0]
        latencies = sorted(s * 1000 for s in serve_and_ask(folder, questions))
        q = statistics.quantiles(latencies, n=100)
        print(f"| {size:,} | {q[49]:.2f} / {q[94]:.2f} ms | {before:.1f}-{os.getloadavg()[0]:.1f} "
              f"({time.strftime('%H:%M', time.gmtime())} UTC) |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
