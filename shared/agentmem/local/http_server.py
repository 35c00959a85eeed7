"""The HTTP server under `agentmem serve`: uvicorn, with the contract's error body at the framing layer.

Why uvicorn: the ASGI server the Python ecosystem runs in production (Starlette, FastAPI and the
MCP SDK's own examples), maintained, asyncio-based so a slow client costs a coroutine rather than
a thread, with a configurable backlog, keep-alive timeout and concurrency limit, and TCP_NODELAY
on every connection (the old `http.server` front paid a delayed-ACK stall of ~40 ms on every
kept-alive request). Its h11 parser is strict: a bad or missing Content-Length, a malformed
request line or an oversize header block is refused before any handler runs.

What uvicorn leaves to us, in `ContractH11Protocol`: a framing error is answered in the contract's
JSON body with the status h11 suggests (431 for an oversize header block, 400 otherwise) instead of
a text/plain 400, and a connection that does not deliver a complete request head within
`HEAD_TIMEOUT_SECONDS` (slowloris) is closed.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any

import h11
from uvicorn import Config, Server
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol

from agentmem.local.http_common import error_body

log = logging.getLogger(__name__)

BACKLOG = 2048
KEEP_ALIVE_SECONDS = 5
HEAD_TIMEOUT_SECONDS = 10.0
# h11's buffer for one request head; the ASGI layer answers 414/431 below this, h11 431 above it.
MAX_HEAD_BYTES = 64 * 1024
# Open connections at once before new requests get 503 (each is a coroutine, not a thread).
MAX_CONNECTIONS = 1000


class ContractH11Protocol(H11Protocol):
    """uvicorn's h11 protocol: framing errors in the contract's body, and a deadline for the request head."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._framing_error: h11.RemoteProtocolError | None = None
        self._head_timer: asyncio.TimerHandle | None = None
        next_event = self.conn.next_event

        def next_event_watched() -> Any:
            try:
                event = next_event()
            except h11.RemoteProtocolError as exc:
                self._framing_error = exc
                raise
            if isinstance(event, h11.Request):
                self._cancel_head_timer()
            return event

        self.conn.next_event = next_event_watched  # type: ignore[method-assign]

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_SECONDS, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        # Idle kept-alive connections are closed earlier by uvicorn's keep-alive timer; this one
        # catches a head that trickles in (each byte resets the keep-alive timer, not this one).
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        exc = self._framing_error
        status = exc.error_status_hint if exc is not None and 400 <= exc.error_status_hint < 500 else 400
        code = "headers_too_large" if status == 431 else "bad_request"
        detail = str(exc) if exc is not None and str(exc) else msg
        body = error_body(code, f"the request is not valid HTTP/1.1: {detail}")
        headers = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"content-length", str(len(body)).encode())]
        # h11 is in its ERROR state after a framing error: write the answer ourselves.
        head = b"HTTP/1.1 %d %s\r\n" % (status, STATUS_PHRASES[status]) + b"".join(
            name + b": " + value + b"\r\n" for name, value in headers
        )
        self.transport.write(head + b"\r\n" + body)
        self.transport.close()


class LocalHttpServer:
    """uvicorn serving an ASGI app on a socket bound at construction (so port 0's choice is known at once).

    The interface of the standard library's servers that callers already use: `server_address`,
    `serve_forever()`, `shutdown()` from another thread, `server_close()`.
    """

    def __init__(self, app: Any, host: str, port: int, *, log_level: str = "warning"):
        self.config = Config(
            app,
            http=ContractH11Protocol,
            lifespan="on",
            backlog=BACKLOG,
            timeout_keep_alive=KEEP_ALIVE_SECONDS,
            timeout_graceful_shutdown=5,
            h11_max_incomplete_event_size=MAX_HEAD_BYTES,
            limit_concurrency=MAX_CONNECTIONS,
            log_config=None,
            log_level=log_level,
            access_log=False,
            server_header=False,
            proxy_headers=False,
        )
        self.socket = bind(host, port)
        self.server_address: tuple[str, int] = self.socket.getsockname()[:2]
        self._ready = threading.Event()
        self._server = _SignallingServer(self.config, self._ready)
        self._done = threading.Event()

    def serve_forever(self, poll_interval: float = 0.1) -> None:
        """Serve until `shutdown()` (or SIGINT/SIGTERM when run in the main thread). `poll_interval` is ignored."""
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self._ready.set()  # a start that failed wakes its waiters too (`started` stays False)
            self._done.set()

    def wait_started(self, timeout: float) -> bool:
        """Block until the server has started (the app's startup done, requests answered), at most `timeout`
        seconds; True when it has. For a caller that serves in another thread."""
        self._ready.wait(timeout)
        return self.started

    def shutdown(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._done.wait(timeout)

    def server_close(self) -> None:
        self.socket.close()

    @property
    def started(self) -> bool:
        return bool(self._server.started)


class _SignallingServer(Server):
    """uvicorn's server, setting `ready` once its startup is complete."""

    def __init__(self, config: Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready_event = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self._ready_event.set()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host` (an address or a name) and `port`, with the server's backlog."""
    bind_host = host.strip("[]")
    infos = socket.getaddrinfo(bind_host or None, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP,
                               flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    # proto must say TCP: asyncio sets TCP_NODELAY on accepted connections only when it does, and without
    # it every kept-alive answer waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and bind_host in {"", "::"}:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock
