"""`agentmem serve` in a child process on a free port, as a user starts it; its base URL.

The server says when it is ready: it prints `agentmem ... listening on http://HOST:PORT` once the socket
is bound and the app is built. A thread reads every line the child prints (so the pipe never fills and
blocks the server's logging) and sets an event at that line, or at the end of the output when the
child exits first; the test waits on that event, never polls.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

# Bounds for a child that never says it is ready or never exits: failures, not waits for work.
START_TIMEOUT = 180.0
STOP_TIMEOUT = 120.0


class ServeProcess:
    """A child process of `agentmem serve`, its stdout and stderr read together, line by line."""

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        self.lines: list[str] = []
        self.url: str | None = None
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            if self.url is None and "listening on " in line:
                self.url = line.split("listening on ")[1].split()[0]
                self._ready.set()
        self._ready.set()  # the child closed its output (it exited) without saying it listens

    def wait_listening(self, timeout: float = START_TIMEOUT) -> str:
        """The base URL once the server prints it; AssertionError (with what it printed) if it never does."""
        self._ready.wait(timeout)
        if self.url is None:
            self.process.kill()
            self.process.wait()
            raise AssertionError("agentmem serve did not start:\n" + self.output())
        return self.url

    def stop(self, timeout: float = STOP_TIMEOUT) -> str:
        """SIGTERM, as a user's Ctrl-C or a supervisor stops it; everything it printed, once it exited."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"agentmem serve did not exit within {timeout} s of SIGTERM") from None
        finally:
            self._reader.join(timeout)
        return self.output()

    def output(self) -> str:
        return "".join(self.lines)


def serve_command(data_dir: Path, executable: Sequence[str] = (sys.executable, "-m", "agentmem.cli")) -> list[str]:
    return [*executable, "serve", "--port", "0", "--data-dir", str(data_dir)]


@contextlib.contextmanager
def agentmem_serve(data_dir: Path, **environment: str) -> Iterator[str]:
    served = ServeProcess(serve_command(data_dir), {**os.environ, **environment})
    try:
        yield served.wait_listening()
    finally:
        served.stop()
