"""`agentmem serve` over HTTP: warm `GET /v1/health` and `retrieve`, kept-alive and on new connections.

Starts the real command (`agentmem serve --port 0`) on a temporary data folder, teaches one agent
`--lessons` lessons through the API, then times each request from the client's side (request sent
to answer read), over one kept-alive connection and over a new connection per request. Last, the
same `retrieve` through the Lambda handler alone (in-process, same data), so the HTTP front's own
cost is the difference. The retrieve input is the same every time: its embedding is cached, as in
`bench_retrieve.py`'s "rest" figure.

Run: .venv/bin/python benchmarks/bench_http.py [--repeat 1000] [--lessons 100]
Prints numbers; asserts nothing about time. Loopback only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = "bench-agent"
QUERY = "Audit this outdoor gear article for brand voice issues: hype words, clichés and stacked exclamation marks."
RETRIEVE_PATH = f"/v1/agents/{AGENT}/retrieve"
RETRIEVE_BODY = json.dumps({"input": QUERY}).encode()
JSON = {"Content-Type": "application/json"}


def percentiles(samples: list[float]) -> tuple[float, float, str]:
    ms = sorted(s * 1000 for s in samples)
    q = statistics.quantiles(ms, n=100)
    return q[49], q[94], f"p50 {q[49]:6.2f} ms  p95 {q[94]:6.2f} ms  p99 {q[98]:6.2f} ms  (n={len(ms)})"


def start_server(data_dir: Path) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "AGENTMEM_ENABLED_AGENTS": AGENT, "POWERTOOLS_LOG_LEVEL": "WARNING"}
    command = [str(Path(sys.executable).with_name("agentmem")), "serve", "--port", "0",
               "--data-dir", str(data_dir), "--log-level", "WARNING"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert process.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        found = re.search(r"listening on http://[^:]+:(\d+)", line)
        if found:
            return process, int(found.group(1))
        if not line and process.poll() is not None:
            raise RuntimeError("agentmem serve exited before listening")
    raise TimeoutError("agentmem serve did not start")


def call(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    conn.request(method, path, body=body, headers=JSON if body is not None else {})
    response = conn.getresponse()
    return response.status, response.read()


def teach(port: int, lessons: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    ids = set()
    for n in range(lessons):
        status, out = call(conn, "POST", f"/v1/agents/{AGENT}/runs",
                           json.dumps({"input": f"Audit article {n} for hype words", "output": f"FLAG {n}"}).encode())
        run_id = json.loads(out)["runId"]
        status, out = call(conn, "POST", f"/v1/agents/{AGENT}/runs/{run_id}/feedback",
                           json.dumps({"rating": "down", "comment": f"Lesson {n}: keep our idiom {n}."}).encode())
        assert status == 202, out
        ids.add(json.loads(out)["memoryId"])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, out = call(conn, "GET", f"/v1/agents/{AGENT}/memories?limit=100")
        if all(m["status"] == "indexed" for m in json.loads(out)["items"]):
            break
        time.sleep(0.2)
    conn.close()


def time_kept_alive(port: int, method: str, path: str, body: bytes | None, repeat: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for _ in range(50):
        call(conn, method, path, body)
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        status, _ = call(conn, method, path, body)
        samples.append(time.perf_counter() - started)
        assert status == 200
    conn.close()
    return samples


def time_new_connections(port: int, method: str, path: str, body: bytes | None, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        status, _ = call(conn, method, path, body)
        conn.close()
        samples.append(time.perf_counter() - started)
        assert status == 200
    return samples


def handler_only(data_dir: Path, repeat: int) -> list[float]:
    os.environ.update({"AGENTMEM_ENABLED_AGENTS": AGENT, "POWERTOOLS_LOG_LEVEL": "WARNING",
                       "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"})
    from agentmem.local import apigateway
    from agentmem.local.lambda_runtime import LocalLambdaContext, load_handler
    from agentmem.local.server import create_app

    app = create_app(data_dir, start_worker=False)
    try:
        handler, context = load_handler("retrieve"), LocalLambdaContext("retrieve")
        found = apigateway.match("POST", RETRIEVE_PATH)
        assert found.route is not None

        def event() -> dict[str, object]:
            return apigateway.proxy_event(found.route, found.path_parameters, "POST", RETRIEVE_PATH,  # type: ignore[arg-type]
                                          JSON, RETRIEVE_BODY.decode(), "127.0.0.1")

        for _ in range(50):
            handler(event(), context)
        samples = []
        for _ in range(repeat):
            e = event()
            started = time.perf_counter()
            handler(e, context)
            samples.append(time.perf_counter() - started)
        return samples
    finally:
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1000)
    parser.add_argument("--lessons", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentmem-bench-http-") as tmp:
        data_dir = Path(tmp)
        process, port = start_server(data_dir)
        try:
            teach(port, args.lessons)
            rows = [
                ("GET /v1/health, kept-alive connection",
                 time_kept_alive(port, "GET", "/v1/health", None, args.repeat)),
                ("GET /v1/health, new connection each",
                 time_new_connections(port, "GET", "/v1/health", None, args.repeat)),
                ("POST retrieve, kept-alive connection",
                 time_kept_alive(port, "POST", RETRIEVE_PATH, RETRIEVE_BODY, args.repeat)),
                ("POST retrieve, new connection each",
                 time_new_connections(port, "POST", RETRIEVE_PATH, RETRIEVE_BODY, args.repeat)),
            ]
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
        rows.append(("retrieve through the handler only", handler_only(data_dir, args.repeat)))
    print(f"agentmem serve on loopback, {args.lessons} lessons for {AGENT}")
    p50 = {}
    for label, samples in rows:
        p50[label], _, text = percentiles(samples)
        print(f"  {label:<40} {text}")
    over = p50["POST retrieve, kept-alive connection"] - p50["retrieve through the handler only"]
    print(f"  HTTP front's cost on retrieve (kept-alive p50 - handler p50): {over:.2f} ms")


if __name__ == "__main__":
    main()
