"""Latency of the `mcp` Lambda handler on API Gateway events, warm, on the embedded backends.

    .venv/bin/python benchmarks/bench_mcp.py [--samples 50]

Runs the sample events events/mcp/tools_list.json and events/mcp/tools_call.json (a `retrieve_memory`
call) through `functions.mcp.handler` as `agentmem serve` and Lambda do: Mangum, the SDK's streamable-HTTP
app (stateless, JSON), the tool, and the retrieve handler behind it. The first call of each (building the
server, loading the model) is not counted. Prints p50/p95 in milliseconds; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from agentmem.local.lambda_runtime import invoke
    from agentmem.local.server import create_app

    with tempfile.TemporaryDirectory() as data:
        app = create_app(Path(data), start_worker=False, enabled_agents=["brand-auditor"])
        try:
            for name in ("tools_list", "tools_call"):
                event = json.loads((ROOT / "events" / "mcp" / f"{name}.json").read_text())
                invoke("mcp", event)  # cold: builds the server, loads the model
                times = []
                for _ in range(args.samples):
                    started = time.perf_counter()
                    answer = invoke("mcp", event)
                    times.append((time.perf_counter() - started) * 1000)
                    assert answer["statusCode"] == 200, answer
                times.sort()
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
                print(f"{name:<11} p50 {statistics.median(times):6.1f} ms   p95 {p95:6.1f} ms   ({args.samples} calls)")
        finally:
            app.close()


if __name__ == "__main__":
    main()
