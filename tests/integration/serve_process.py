"""`agentmem serve` in a child process on a free port, as a user starts it; its base URL."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def agentmem_serve(data_dir: Path, **environment: str) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmem.cli", "serve", "--port", "0", "--data-dir", str(data_dir)],
        stderr=subprocess.PIPE, text=True, env={**os.environ, **environment},
    )
    deadline = time.monotonic() + 60
    url = None
    while url is None and time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line and process.poll() is not None:
            break
        if "listening on " in line:
            url = line.split("listening on ")[1].split()[0]
    if url is None:
        process.kill()
        raise AssertionError("agentmem serve did not start")
    try:
        yield url
    finally:
        process.terminate()
        process.wait(10)
