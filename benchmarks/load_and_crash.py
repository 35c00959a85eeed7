"""`agentmem serve` under load, killed with SIGKILL twice: throughput, latency, errors, and nothing lost or doubled.

16 clients (threads, one kept-alive connection each) run for `--seconds` against the real command on
a loopback port: `retrieve`, `POST /runs`, feedback whose Idempotency-Keys are shared between clients
(each key always with the same run and body, so every answer to a key must name the same memory), and
turn appends (each with its own key; after a connection failure the same append is sent again with
the same key until it is acknowledged). At 1/3 and 2/3 of the run the server is killed with SIGKILL
and started again on the same data folder and port. A probe submits a fresh lesson every
`--probe-every` seconds and polls `retrieve` until it is served: feedback-to-retrievable under load.

Afterwards, against the restarted server: every acknowledged run exists; every feedback key's
answers name one memory, listed exactly once; every acknowledged turn is in its thread exactly once.

Run: .venv/bin/python benchmarks/load_and_crash.py [--seconds 60] [--clients 16]
Prints numbers and the checks; exits 1 when a check fails. Loopback only; every loop is bounded.
"""

from __future__ import annotations

import argparse
import http.client
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from serve_child import Client, Server, free_port, listing

AGENT = "load-agent"
PROBE_AGENT = "probe-agent"
SHARED_KEYS = 64


@dataclass
class Results:
    lock: threading.Lock = field(default_factory=threading.Lock)
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter[str] = field(default_factory=Counter)
    runs: list[str] = field(default_factory=list)
    feedback_answers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    turns: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    probe: list[float] = field(default_factory=list)
    probe_lost: int = 0

    def record(self, route: str, status: int | str, seconds: float) -> None:
        with self.lock:
            self.statuses[f"{route} {status}"] += 1
            if isinstance(status, int) and status < 500:
                self.latency[route].append(seconds)


def worker(number: int, port: int, stop_at: float, runs: list[str], results: Results) -> None:
    rng = random.Random(number)
    client = Client(port)
    appended = 0
    while time.monotonic() < stop_at:
        kind = rng.choices(["retrieve", "runs", "feedback", "turns"], weights=[4, 2, 2, 2])[0]
        started = time.perf_counter()
        try:
            if kind == "retrieve":
                status, _ = client.send("POST", f"/v1/agents/{AGENT}/retrieve",
                                        {"input": f"Audit article {rng.randrange(1000)} for hype words"})
            elif kind == "runs":
                status, answer = client.send("POST", f"/v1/agents/{AGENT}/runs",
                                             {"input": f"client {number} input", "output": "ok"})
                if status == 201 and isinstance(answer, dict):
                    with results.lock:
                        results.runs.append(str(answer["runId"]))
            elif kind == "feedback":
                key = rng.randrange(SHARED_KEYS)
                status, answer = client.send(
                    "POST", f"/v1/agents/{AGENT}/runs/{runs[key]}/feedback",
                    {"rating": "down", "comment": f"Shared lesson {key}: keep our idiom."},
                    {"Idempotency-Key": f"shared-{key}"})
                if status == 202 and isinstance(answer, dict):
                    with results.lock:
                        results.feedback_answers[f"shared-{key}"].add(str(answer["memoryId"]))
            else:
                appended += 1
                status = append_until_acknowledged(client, number, appended, stop_at + 60, results, started)
                continue
        except (OSError, http.client.HTTPException):
            results.record(kind, "no answer", time.perf_counter() - started)
            time.sleep(0.05)
            continue
        results.record(kind, status, time.perf_counter() - started)


def append_until_acknowledged(client: Client, number: int, serial: int, give_up_at: float,
                              results: Results, started: float) -> int:
    """One append, sent again with the same key after a failure, until it is acknowledged (bounded)."""
    content = f"client {number} turn {serial}"
    thread = f"/v1/users/load-user-{number}/threads/t/turns"
    status = 0
    while time.monotonic() < give_up_at:
        try:
            status, _ = client.send("POST", thread, {"turns": [{"role": "user", "content": content}]},
                                    {"Idempotency-Key": f"append-{number}-{serial}"})
        except (OSError, http.client.HTTPException):
            results.record("turns", "no answer", time.perf_counter() - started)
            time.sleep(0.1)
            continue
        results.record("turns", status, time.perf_counter() - started)
        if status == 201:
            with results.lock:
                results.turns[f"load-user-{number}"].append(content)
            return status
        if status not in {409, 503}:
            return status
        time.sleep(0.2)
    return status


def probe(port: int, stop_at: float, every: float, results: Results) -> None:
    """A fresh lesson every `every` seconds; how long until `retrieve` serves it."""
    client = Client(port)
    n = 0
    while time.monotonic() < stop_at:
        n += 1
        text = f"Probe {n}: audit the zorblax-{n} paragraph for brand voice."
        try:
            status, run = client.send("POST", f"/v1/agents/{PROBE_AGENT}/retrieve", {"input": text})
            if status != 200 or not isinstance(run, dict):
                time.sleep(every)
                continue
            status, receipt = client.send("POST", f"/v1/agents/{PROBE_AGENT}/runs/{run['runId']}/feedback",
                                          {"rating": "down", "comment": f"zorblax-{n} is our product name."})
            if status != 202 or not isinstance(receipt, dict):
                time.sleep(every)
                continue
        except (OSError, http.client.HTTPException):
            time.sleep(every)
            continue
        accepted = time.monotonic()
        served = False
        while time.monotonic() - accepted < 30:
            try:
                _, answer = client.send("POST", f"/v1/agents/{PROBE_AGENT}/retrieve", {"input": text})
            except (OSError, http.client.HTTPException):
                time.sleep(0.05)
                continue
            if isinstance(answer, dict) and receipt["memoryId"] in [x["memoryId"] for x in answer["lessons"]]:
                results.probe.append(time.monotonic() - accepted)
                served = True
                break
            time.sleep(0.02)
        if not served:
            results.probe_lost += 1
        time.sleep(max(0.0, every - (time.monotonic() - accepted)))


def check(port: int, results: Results) -> list[str]:
    client = Client(port)
    problems = []
    missing_runs = [r for r in results.runs if client.send("GET", f"/v1/agents/{AGENT}/runs/{r}")[0] != 200]
    if missing_runs:
        problems.append(f"{len(missing_runs)} acknowledged run(s) missing")
    memories = Counter(str(m["memoryId"]) for m in listing(client, f"/v1/agents/{AGENT}/memories?limit=100"))
    for key, answers in results.feedback_answers.items():
        if len(answers) != 1:
            problems.append(f"key {key} answered with {len(answers)} different memories")
        for memory_id in answers:
            if memories[memory_id] != 1:
                problems.append(f"memory {memory_id} of {key} listed {memories[memory_id]} times")
    for user, contents in results.turns.items():
        stored = Counter(str(t["content"]) for t in listing(client, f"/v1/users/{user}/threads/t/turns?limit=200"))
        for content in contents:
            if stored[content] != 1:
                problems.append(f"{user}: acknowledged turn {content!r} stored {stored[content]} times")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--probe-every", type=float, default=1.0)
    args = parser.parse_args()
    results = Results()
    with tempfile.TemporaryDirectory(prefix="agentmem-load-") as tmp:
        server = Server(Path(tmp), free_port(), [AGENT, PROBE_AGENT])
        try:
            first_start = server.start()
            setup = Client(server.port)
            runs = []
            for key in range(SHARED_KEYS):
                status, answer = setup.send("POST", f"/v1/agents/{AGENT}/runs",
                                            {"input": f"shared {key}", "output": "o"})
                assert status == 201 and isinstance(answer, dict)
                runs.append(str(answer["runId"]))
            started = time.monotonic()
            stop_at = started + args.seconds
            threads = [threading.Thread(target=worker, args=(n, server.port, stop_at, runs, results))
                       for n in range(args.clients)]
            threads.append(threading.Thread(target=probe, args=(server.port, stop_at, args.probe_every, results)))
            for thread in threads:
                thread.start()
            restarts = []
            for fraction in (1 / 3, 2 / 3):
                time.sleep(max(0.0, started + args.seconds * fraction - time.monotonic()))
                server.kill()
                restarts.append(server.start())
            for thread in threads:
                thread.join(args.seconds + 120)
            elapsed = time.monotonic() - started
            problems = check(server.port, results)
        finally:
            server.stop()
    answered = sum(len(v) for v in results.latency.values())
    print(f"{args.clients} clients for {args.seconds:.0f} s, SIGKILL twice (first start {first_start:.1f} s; "
          f"back up after {', '.join(f'{r:.1f} s' for r in restarts)})")
    print(f"throughput: {answered / elapsed:.0f} answered requests/s ({answered} in {elapsed:.0f} s)")
    for route, samples in sorted(results.latency.items()):
        ms = sorted(s * 1000 for s in samples)
        q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else [ms[0]] * 99
        print(f"  {route:<9} n={len(ms):>6}  {len(ms) / elapsed:6.1f}/s  "
              f"p50 {q[49]:7.2f} ms  p95 {q[94]:7.2f} ms  p99 {q[98]:7.2f} ms")
    print("answers by route and status:")
    for name, count in sorted(results.statuses.items()):
        print(f"  {name:<24} {count}")
    if results.probe:
        probe_ms = sorted(results.probe)
        p95 = statistics.quantiles(probe_ms, n=20, method="inclusive")[18] if len(probe_ms) > 1 else probe_ms[0]
        print(f"feedback-to-retrievable under load: p50 {statistics.median(probe_ms):.2f} s, p95 {p95:.2f} s, "
              f"max {probe_ms[-1]:.2f} s (n={len(probe_ms)}; not served within 30 s: {results.probe_lost})")
    print(f"acknowledged: {len(results.runs)} runs, {len(results.feedback_answers)} feedback keys, "
          f"{sum(len(v) for v in results.turns.values())} turn appends")
    if problems:
        print(f"CHECK FAILED ({len(problems)}):")
        for problem in problems[:50]:
            print(f"  {problem}")
        return 1
    print("check: every acknowledged write is there exactly once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
