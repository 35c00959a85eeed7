"""What consistent masking adds to masking a text: the look-up of the subject's known values.

    .venv/bin/python benchmarks/bench_consistent_masking.py [--path ../shared/eval/pii-dev.json] [--values 200]

A subject's vault is filled with `--values` names (each masked once, so each has its entry), then every
text of the file (pii-dev: 750 turns, median 67 characters) is masked as that subject, with the
structured rules as the detector so the detector's own time stays out of the way. Printed, per text in
milliseconds: `mask_text` whole (the detector, the key-store and counter reads, the look-up, the
vault round trip for new values, the replacement) and the known-value look-up alone
(`ConversationService._known_values_in`: the counter read, runs of 1-4 words, their fingerprints,
the index look-up), and the look-up of a long text (a 2,000-character turn). Local backend: SQLite
vault and key store, the local key file.

Asserts nothing: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
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
from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
from agentmem.adapters.local.vault_store import SqliteVaultStore
from agentmem.domain.pii import PiiSpan
from agentmem.service.conversations import ConversationService
from stats import percentile

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "eval" / "pii-dev.json"


class WholeTextIsAName:
    """Seeds the vault: the whole text is one PERSON value."""

    def detect(self, text: str) -> list[PiiSpan]:
        return [PiiSpan("PERSON", 0, len(text), text)]


def timed(call: Callable[[str], object], texts: list[str]) -> list[float]:
    times = []
    for text in texts:
        start = time.perf_counter()
        call(text)
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--values", type=int, default=200)
    args = parser.parse_args()
    texts = [record["full_text"] for record in json.loads(args.path.read_text(encoding="utf-8"))]
    long_text = " ".join(texts)[:2000]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        parts = {
            "transcripts": SqliteTranscriptStore(root / "transcripts.db"), "vault": SqliteVaultStore(root / "vault.db"),
            "key_store": SqliteKeyStore(root / "keys.db"), "keys": LocalKeyFile(root / "vault.key"),
        }
        seeder = ConversationService(tenant="bench", detector=WholeTextIsAName(), **parts)
        for n in range(args.values):
            seeder.mask_text("user-with-values", f"Person{n} Surname{n}")
        seeder.mask_text("user-with-values", "Caroline")
        service = ConversationService(tenant="bench", detector=RegexPiiDetector(), **parts)
        service.mask_text("user-with-values", "warm up: Caroline")
        print(f"python {platform.python_version()}, {os.cpu_count()} CPU(s); {len(texts)} texts (median "
              f"{statistics.median(len(t) for t in texts):.0f} characters); the vault holds {args.values + 1} values")
        print(f"{'what':<34} {'p50':>8} {'p95':>8} {'max':>8}   (ms)")
        subject = "user-with-values"
        key = service._data_key(subject, create=False)
        assert key is not None

        def look_up(text: str) -> object:
            return service._known_values_in(subject, key, [text])

        rows = [
            ("mask_text (structured rules)", timed(lambda text: service.mask_text(subject, text), texts)),
            ("known-value look-up", timed(look_up, texts)),
            ("known-value look-up, 2,000 chars", timed(look_up, [long_text] * 50)),
        ]
        for what, times in rows:
            print(f"{what:<34} {statistics.median(times):>8.3f} {percentile(times, 0.95):>8.3f} {max(times):>8.3f}")
        for part in parts.values():
            close = getattr(part, "close", None)
            if close:
                close()


if __name__ == "__main__":
    main()
