"""Append and pack latency of conversation memory on the embedded backends, by thread length.

    .venv/bin/python benchmarks/bench_conversations.py [--sizes 100,1000,10000] [--samples 200] [--budget 2000]
                                                       [--detector local|regex]

For each size a fresh data folder gets one thread of that many turns (bulk-loaded, already masked),
then `--samples` times:

- append:      ConversationService.append_turns of one plain turn: PII detection, token counting
               and the SQLite write;
- append+PII:  the same with an e-mail or a phone number in the turn, so masking, the vault
               (fingerprint lookup, counter, AES-GCM, entry) and the cached data key are on the path;
- pack:        what retrieve does for the history: read the newest turns of the thread with their
               stored counts (UserMemoryService.for_retrieve) and pack_context into the budget with a
               lessons message.

`--detector` is the PII detector on the append path: `local` (the local backend's default: structured
rules and Presidio over spaCy, loaded before timing) or `regex` (the structured rules alone).
Prints p50/p95 in milliseconds; asserts nothing (timings depend on the machine and its load).
If packing read the whole thread, its time would grow a hundredfold from 100 to 10,000 turns.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentmem.adapters.local.key_file import LocalKeyFile
from agentmem.adapters.local.key_store import SqliteKeyStore
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
from agentmem.adapters.local.vault_store import SqliteVaultStore
from agentmem.domain.packing import pack_context
from agentmem.ports.pii import PiiDetector
from agentmem.ports.transcripts import NewTurn
from agentmem.service.conversations import ConversationService, TurnInput
from agentmem.service.user_memory import history_limit
from agentmem.tokens import get_token_counter
from stats import percentile

SENTENCES = [
    "Could you move the release review to Thursday afternoon?",
    "The checkout latency doubled after yesterday's cache change, so we rolled it back.",
    "Please draft a short reply to the vendor about the delayed shipment.",
    "Summarise the three options we discussed for the data migration.",
]
PERSONAL = ["You can reach me at jane.doe{n}@example.com.", "Call me on +44 20 7946 {n:04d} after five."]
LESSONS = [f"Lesson {n}: keep headlines active." for n in range(5)]
BULK_BATCH = 500


def measure(action: Callable[[int], object], samples: int) -> list[float]:
    times = []
    for n in range(samples):
        start = time.perf_counter()
        action(n)
        times.append((time.perf_counter() - start) * 1000)
    return times


def bench_size(size: int, samples: int, budget: int, detector: PiiDetector) -> dict[str, list[float]]:
    counter = get_token_counter()
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder)
        conversations = ConversationService(
            tenant="bench", transcripts=SqliteTranscriptStore(data / "transcripts.db"),
            vault=SqliteVaultStore(data / "vault.db"), key_store=SqliteKeyStore(data / "keys.db"),
            keys=LocalKeyFile(data / "vault.key"),
            detector=detector, counter=counter,
        )
        try:
            bulk = [SENTENCES[n % len(SENTENCES)] for n in range(size)]
            for start in range(0, size, BULK_BATCH):
                conversations.transcripts.append(
                    "bench", "alice", "t1",
                    [NewTurn(("user", "assistant")[(start + i) % 2], text, counter.count(text))
                     for i, text in enumerate(bulk[start : start + BULK_BATCH])],
                    time.time(),
                )

            def append(n: int) -> object:
                return conversations.append_turns("alice", "t1", [TurnInput("user", SENTENCES[n % len(SENTENCES)])])

            def append_personal(n: int) -> object:
                text = SENTENCES[n % len(SENTENCES)] + " " + PERSONAL[n % 2].format(n=n)
                return conversations.append_turns("alice", "t1", [TurnInput("user", text)])

            def pack(_: int) -> object:
                # What UserMemoryService.for_retrieve reads for the history.
                history = conversations.recent_history("alice", "t1", history_limit(budget))
                return pack_context(budget=budget, lessons=LESSONS, profile=None, facts=[],
                                    history=history, counter=counter)

            pack(0)  # warm the page cache and the key cache as a live thread would have them
            timings = {
                "append": measure(append, samples),
                "append+PII": measure(append_personal, samples),
                "pack": measure(pack, samples),
            }
        finally:
            conversations.close()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--detector", choices=("local", "regex"), default="local")
    args = parser.parse_args()
    detector: PiiDetector = LocalPiiDetector() if args.detector == "local" else RegexPiiDetector()
    detector.detect("warm up: Ana Lopez in Lisbon")  # the spaCy pipeline loads once per process
    print(f"python {platform.python_version()}, {os.cpu_count()} CPU(s), {platform.machine()}; "
          f"{args.samples} samples per cell, token budget {args.budget}, detector {args.detector}")
    columns = ("append", "append+PII", "pack")
    print(f"{'turns':>8} | " + " | ".join(f"{name + ' p50':>14} {name + ' p95':>14}" for name in columns) + "   (ms)")
    for size in (int(s) for s in args.sizes.split(",")):
        timings = bench_size(size, args.samples, args.budget, detector)
        cells = (f"{statistics.median(timings[n]):>14.2f} {percentile(timings[n], 0.95):>14.2f}" for n in columns)
        print(f"{size:>8} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
