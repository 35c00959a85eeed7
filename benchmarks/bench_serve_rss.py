"""Resident memory of `agentmem serve` with the detector loaded, after one turn with personal data and one retrieve.

Starts the real command in a child process (`serve_child.Server`, a fresh data folder), appends one turn
holding a name, a street address and a phone number, asks one `retrieve` for that user, waits until the
event worker has nothing left to deliver (the turn's recall indexing), then reads the server's `VmRSS`
and `VmHWM` from /proc. Repeats `--repeat` times, each with a new server, and prints every reading.

Run: .venv/bin/python benchmarks/bench_serve_rss.py [--repeat 3]
Prints numbers; asserts nothing about memory.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from serve_child import Client, Server, free_port

AGENT = "bench-agent"
TURN = ("Hi, I'm Maria Gonzalez. Please send the parcel to 42 Elm Street, Springfield, "
        "or call me on +1 415 555 0134.")


def resident_mib(pid: int) -> dict[str, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) / 1024 for name in ("VmRSS", "VmHWM")}


def pending_events(outbox: Path) -> int:
    with sqlite3.connect(f"file:{outbox}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0])


def one_server() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="agentmem-rss-") as tmp:
        server = Server(Path(tmp) / "data", free_port(), [AGENT])
        server.start()
        try:
            client = Client(server.port)
            status, _ = client.send("POST", "/v1/users/u-rss/threads/t-1/turns",
                                    {"turns": [{"role": "user", "content": TURN}]})
            assert status == 201, status
            status, _ = client.send("POST", f"/v1/agents/{AGENT}/retrieve",
                                    {"input": "Where should the parcel go?", "userId": "u-rss"})
            assert status == 200, status
            # The turn's indexing runs on the event worker: read memory once the outbox has nothing pending.
            while pending_events(Path(tmp) / "data" / "events.db"):
                time.sleep(0.05)
            assert server.process is not None
            return resident_mib(server.process.pid)
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    readings = [one_server() for _ in range(args.repeat)]
    for number, reading in enumerate(readings, 1):
        print(f"server {number}: VmRSS {reading['VmRSS']:.0f} MiB, VmHWM {reading['VmHWM']:.0f} MiB")
    print(f"median VmRSS {statistics.median(r['VmRSS'] for r in readings):.0f} MiB "
          f"(load average {os.getloadavg()[0]:.2f}, {time.strftime('%H:%M UTC', time.gmtime())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
