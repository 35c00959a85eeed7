"""What masking the items path costs, and what it keeps out of the data folder.

    PYTHONPATH=shared:. .venv/bin/python benchmarks/bench_items_masking.py [--items 30]

On the embedded backends (the local PII detector: structured rules and Presidio over spaCy, loaded
before timing; a hashing embedder), through the real handlers: `--items` times, a PUT of an item whose
namespace, key, object keys and JSON numbers hold values made up for the run (an e-mail, a UK phone, a
Luhn-valid card and a Vietnamese phone as JSON numbers), then a GET of it by its original namespace and
key. Prints p50/p95 in milliseconds and every file of the data folder (WAL included) that holds one of
the raw values (none should). Asserts nothing about time (it depends on the machine and its load).

On a shared 2-core machine (2026-12-01): put p50 29.2 ms (p95 34.1), get p50 15.9 ms (p95 30.3), no
file holding a raw value; the code before issue 20 answered in 0.3 ms (nothing of this value was
masked) and its items.db-wal held 120 of the 150 raw values.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from stats import percentile

from tests.integration.conversations_harness import HandlerCaller, local_services
from tests.integration.privacy_values import files_holding, made_up_person, raw_values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        with local_services(data) as services:
            call = HandlerCaller(services)
            # The detector's pipeline loads on first use: not timed.
            call("PUT", "/v1/users/warm/items", {"namespace": ["m"], "key": "k", "value": {"t": "ana@example.com"}})
            puts: list[float] = []
            gets: list[float] = []
            needles: list[bytes] = []
            for n in range(args.items):
                person = made_up_person(n)
                needles += raw_values(person)
                key = f"{person.email} {person.phone_text}"
                body = {"namespace": ["contacts", person.phone_text], "key": key,
                        "value": {person.email: {"card": person.card, "phone": person.phone}}}
                started = time.perf_counter()
                status, _ = call("PUT", f"/v1/users/u-{n}/items", body)
                puts.append((time.perf_counter() - started) * 1000)
                assert status == 200
                started = time.perf_counter()
                status, _ = call("GET", f"/v1/users/u-{n}/items?namespace={quote('contacts.' + person.phone_text)}"
                                        f"&key={quote(key)}")
                gets.append((time.perf_counter() - started) * 1000)
                assert status == 200
            print(f"put p50 {percentile(puts, 0.5):.1f} ms, p95 {percentile(puts, 0.95):.1f} ms; "
                  f"get p50 {percentile(gets, 0.5):.1f} ms, p95 {percentile(gets, 0.95):.1f} ms ({args.items} items)")
            print(f"files holding one of the {len(needles)} raw values: {files_holding(data, needles) or 'none'}")


if __name__ == "__main__":
    main()
