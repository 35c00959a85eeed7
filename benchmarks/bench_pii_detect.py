"""Latency of PII detection per turn on the texts of a Presidio-format file, for each local detector.

    .venv/bin/python benchmarks/bench_pii_detect.py [--path ../shared/eval/pii-dev.json] [--rounds 2]

Each record's `full_text` is one turn (pii-dev: 750 turns, median 67 characters). For each detector:
the first call (loading the spaCy pipeline, Presidio, the name gazetteer and WordNet's words, once per
process), then every text detected `--rounds` times; prints p50/p95/max per turn in milliseconds and
characters per second, and the CPU time per turn.

- regex:    the structured rules alone (RegexPiiDetector);
- presidio: names, places, nationalities, street addresses, organisations by form, ages, postal codes
            (Presidio over spaCy en_core_web_md, NER only, with the name gazetteer and pattern recognizers);
- local:    both, the local backend's detector (what ConversationService masks with).

Asserts nothing: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.presidio_pii import LocalPiiDetector, PresidioPiiDetector
from agentmem.ports.pii import PiiDetector
from stats import percentile

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "eval" / "pii-dev.json"


def bench(detector: PiiDetector, texts: list[str], rounds: int) -> tuple[float, list[float], float]:
    """First call (ms), wall time of every call (ms), and CPU time per call (ms, ``time.process_time``,
    which the other processes on a shared machine disturb far less than wall time)."""
    start = time.perf_counter()
    detector.detect("warm up: Ana Lopez in Lisbon")
    first = (time.perf_counter() - start) * 1000
    times = []
    cpu_start = time.process_time()
    for _ in range(rounds):
        for text in texts:
            start = time.perf_counter()
            detector.detect(text)
            times.append((time.perf_counter() - start) * 1000)
    cpu = (time.process_time() - cpu_start) * 1000 / max(1, len(times))
    return first, times, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    texts = [record["full_text"] for record in json.loads(args.path.read_text(encoding="utf-8"))]
    characters = sum(len(text) for text in texts)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPU(s), {platform.machine()}; {len(texts)} turns "
          f"(median {statistics.median(len(t) for t in texts):.0f} characters) x {args.rounds} rounds")
    columns = f"{'first call':>11} {'p50':>8} {'p95':>8} {'max':>8} {'cpu/turn':>9} {'chars/s':>10}"
    print(f"{'detector':<10} {columns}   (ms)")
    detectors: dict[str, PiiDetector] = {
        "regex": RegexPiiDetector(), "presidio": PresidioPiiDetector(), "local": LocalPiiDetector(),
    }
    for name, detector in detectors.items():
        first, times, cpu = bench(detector, texts, args.rounds)
        rate = characters * args.rounds / (sum(times) / 1000)
        print(f"{name:<10} {first:>11.1f} {statistics.median(times):>8.2f} {percentile(times, 0.95):>8.2f} "
              f"{max(times):>8.2f} {cpu:>9.2f} {rate:>10.0f}")


if __name__ == "__main__":
    main()
