"""What the benchmarks that drive `agentmem serve` share: the real command in a child process on a
fixed loopback port, and a client with one kept-alive connection.

Imported by the scripts beside it (`python benchmarks/<script>.py` puts this folder on sys.path).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

JSON = {"Content-Type": "application/json"}


class Server:
    """`agentmem serve` as a user runs it, on a fixed port so clients can reconnect after a restart."""

    def __init__(self, data_dir: Path, port: int, agents: list[str], environment: dict[str, str] | None = None):
        self.data_dir, self.port, self.agents = data_dir, port, agents
        self.environment = environment or {}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start it and wait until `/v1/health` answers; the seconds that took."""
        started = time.monotonic()
        env = {**os.environ, "AGENTMEM_ENABLED_AGENTS": ",".join(self.agents), "POWERTOOLS_LOG_LEVEL": "ERROR",
               **self.environment}
        command = [str(Path(sys.executable).with_name("agentmem")), "serve", "--port", str(self.port),
                   "--data-dir", str(self.data_dir), "--log-level", "ERROR"]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/v1/health")
                if conn.getresponse().status == 200:
                    conn.close()
                    return time.monotonic() - started
            except OSError:
                time.sleep(0.05)
        raise TimeoutError("agentmem serve did not come up")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)


class Client:
    """One kept-alive connection; a failed exchange drops it (the next request reconnects)."""

    def __init__(self, port: int):
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def send(self, method: str, path: str, body: object = None,
             headers: dict[str, str] | None = None) -> tuple[int, object]:
        data = None if body is None else json.dumps(body).encode()
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            self.conn.request(method, path, body=data, headers={**JSON, **(headers or {})})
            response = self.conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = None
            raise
        return response.status, (json.loads(raw) if raw else None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listing(client: Client, path: str) -> list[dict[str, object]]:
    """Every item of a paginated listing (`path` has a query already)."""
    items: list[dict[str, object]] = []
    cursor = None
    for _ in range(1000):
        status, page = client.send("GET", path + (f"&cursor={cursor}" if cursor else ""))
        assert status == 200 and isinstance(page, dict), (status, page)
        items += page["items"]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    return items
