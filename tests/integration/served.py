"""`agentmem serve`'s HTTP server on a free loopback port, in a thread, for tests that speak real HTTP."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from agentmem.local.server import LocalApp, make_http_server


@contextmanager
def serving(app: LocalApp, host: str = "127.0.0.1") -> Iterator[str]:
    """The base URL of `app` served over HTTP until the block ends."""
    server = make_http_server(app, host, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    # The server's own signal that its startup is done; the bound is only for a server that never starts.
    if not server.wait_started(60):
        server.server_close()
        raise AssertionError("the HTTP server did not start")
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def raw_exchange(port: int, data: bytes, *, read_timeout: float = 5.0, close_after_send: bool = False) -> bytes:
    """Send `data` as is on a new connection and read until the server closes it (or `read_timeout`)."""
    with socket.create_connection(("127.0.0.1", port), timeout=read_timeout) as sock:
        sock.sendall(data)
        if close_after_send:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except TimeoutError:
            pass
        return b"".join(chunks)
