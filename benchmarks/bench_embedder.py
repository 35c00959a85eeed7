"""Latency of the local all-MiniLM-L6-v2 embedder: one query, batches, and a cache hit.

    .venv/bin/python benchmarks/bench_embedder.py [--runs 300] [--batch-sizes 8,32] [--threads 1] [--float32]

Prints p50/p95/p99 in milliseconds, the load average before and after, and the process's resident
memory after loading; asserts nothing (timings depend on the machine and its load).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from agentmem.adapters.local.minilm import MiniLMEmbedder, default_model_dir
from tokenizers import Tokenizer

_WORDS = [
    "the",
    "release",
    "agent",
    "rolled",
    "back",
    "yesterday's",
    "checkout",
    "deploy",
    "because",
    "p99",
    "latency",
    "doubled",
    "after",
    "the",
    "cache",
    "change",
    "so",
    "next",
    "time",
    "it",
    "should",
    "compare",
    "the",
    "canary",
    "dashboards",
    "before",
    "promoting",
    "any",
    "build",
    "to",
    "production",
    "and",
    "page",
    "the",
    "owning",
    "team",
]


def _text_of_tokens(tokenizer: Tokenizer, tokens: int, offset: int = 0) -> str:
    """A sentence whose encoding (with [CLS] and [SEP]) is as close to `tokens` word pieces as words allow."""
    words: list[str] = []
    for position in range(10 * tokens):
        candidate = [*words, _WORDS[(position + offset) % len(_WORDS)]]
        if len(tokenizer.encode(" ".join(candidate)).ids) > tokens:
            break
        words = candidate
    return " ".join(words)


def _load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


def _resident_mib() -> float:
    status = Path("/proc/self/status")
    if not status.exists():
        return float("nan")
    line = next(line for line in status.read_text().splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def _percentiles(samples_s: list[float]) -> str:
    p50, p95, p99 = np.percentile(np.array(samples_s) * 1e3, [50, 95, 99])
    return (
        f"p50 {p50:8.3f} ms   p95 {p95:8.3f} ms   p99 {p99:8.3f} ms   mean {statistics.fmean(samples_s) * 1e3:8.3f} ms"
    )


def _time(call: Callable[[], object], runs: int, warmup: int) -> list[float]:
    """Wall seconds per call; also prints the mean CPU seconds of this process per call.

    On a busy machine the wall time is mostly waiting for a core; the CPU time is the work itself.
    """
    for _ in range(warmup):
        call()
    samples = []
    cpu_start = time.process_time()
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    print(f"  (CPU of this process: {(time.process_time() - cpu_start) / runs * 1e3:.3f} ms per call)")
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=300, help="timed calls per case")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=30, help="word pieces in the single-query input")
    parser.add_argument("--batch-sizes", default="8,32", help="comma-separated batch sizes to time")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads (default: 1)")
    parser.add_argument("--float32", action="store_true", help="the float32 graph instead of the int8 model")
    args = parser.parse_args()

    import onnxruntime

    print(f"python {platform.python_version()}, numpy {np.__version__}, onnxruntime {onnxruntime.__version__}, "
          f"cpus {os.cpu_count()}; load average {_load_average()}")

    tokenizer = Tokenizer.from_file(str(default_model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    query = _text_of_tokens(tokenizer, args.tokens)
    print(f"query ({len(tokenizer.encode(query).ids)} word pieces): {query!r}")

    settings = {"threads": args.threads, "quantized": not args.float32}
    print(f"MiniLMEmbedder({', '.join(f'{key}={value}' for key, value in settings.items())})")
    uncached = MiniLMEmbedder(cache_size=0, **settings)  # type: ignore[arg-type]
    resident_before = _resident_mib()
    start = time.perf_counter()
    uncached.embed([query])
    print(f"first call (loads the model; builds it if not cached): {(time.perf_counter() - start) * 1e3:.0f} ms, "
          f"resident memory {resident_before:.0f} -> {_resident_mib():.0f} MiB")

    print(
        f"single query, cache off      {_percentiles(_time(lambda: uncached.embed([query]), args.runs, args.warmup))}"
    )

    for batch_size in (int(size) for size in args.batch_sizes.split(",") if size):
        batch = [_text_of_tokens(tokenizer, args.tokens, offset) for offset in range(batch_size)]
        runs = max(10, args.runs // batch_size)
        samples = _time(lambda batch=batch: uncached.embed(batch), runs, max(2, args.warmup // batch_size))
        per_text_ms = statistics.median(samples) * 1e3 / batch_size
        print(f"batch of {batch_size:<3d} cache off     {_percentiles(samples)}   ({per_text_ms:.3f} ms/text at p50)")

    cached = MiniLMEmbedder(**settings)  # type: ignore[arg-type]
    cached.embed([query])
    print(f"single query, cache hit      {_percentiles(_time(lambda: cached.embed([query]), args.runs, args.warmup))}")
    print(f"load average {_load_average()}")


if __name__ == "__main__":
    main()
