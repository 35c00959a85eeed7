"""The client's HTTP transport: one request, the whole answer, kept-alive connections per thread and origin.

The standard library's `http.client`, for separate connect and read timeouts and no dependency.
`ConnectFailed` (nothing was sent) and `ExchangeFailed` (no answer came) tell the retry policy
whether a request may be sent again.
"""

from __future__ import annotations

import http.client
import logging
import ssl
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

log = logging.getLogger(__name__)

# An idle keep-alive connection the server already closed fails like this before the server reads anything.
_STALE_CONNECTION = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class ConnectFailed(Exception):
    """Nothing was sent: any request may be retried."""


class ExchangeFailed(Exception):
    """The request may have reached the server, but no answer came back."""


class _Connections(threading.local):
    def __init__(self) -> None:
        self.by_origin: dict[tuple[str, str], http.client.HTTPConnection] = {}


class HttpTransport:
    """Sends one request and reads the whole answer; keeps one open connection per thread and origin."""

    def __init__(self, connect_timeout: float, read_timeout: float, ssl_context: ssl.SSLContext | None = None):
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._ssl_context = ssl_context
        self._local = _Connections()
        self._all: set[http.client.HTTPConnection] = set()
        self._all_lock = threading.Lock()

    def send(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(url)
        origin = (parts.scheme, parts.netloc)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn = self._local.by_origin.get(origin)
        # A connection `close()` shut from another thread would silently reopen without the read timeout.
        if conn is not None and conn.sock is not None:
            try:
                return self._exchange(conn, origin, method, target, headers, body)
            except ExchangeFailed as exc:
                if not isinstance(exc.__cause__, _STALE_CONNECTION):
                    raise
                log.debug("kept-alive connection was closed by the server; reconnecting")
        conn = self._connect(parts.scheme, parts.hostname or "", parts.port)
        self._local.by_origin[origin] = conn
        return self._exchange(conn, origin, method, target, headers, body)

    def _connect(self, scheme: str, host: str, port: int | None) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if scheme == "https":
            context = self._ssl_context or ssl.create_default_context()
            proxy = _https_proxy(host)
            if proxy is not None:
                conn = http.client.HTTPSConnection(
                    proxy.hostname or "", proxy.port or 80, timeout=self.connect_timeout, context=context
                )
                conn.set_tunnel(host, port or 443)
            else:
                conn = http.client.HTTPSConnection(host, port or 443, timeout=self.connect_timeout, context=context)
        elif scheme == "http":
            conn = http.client.HTTPConnection(host, port or 80, timeout=self.connect_timeout)
        else:
            raise ValueError(f"unsupported URL scheme {scheme!r}")
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise ConnectFailed(f"{type(exc).__name__}: {exc}") from exc
        assert conn.sock is not None
        conn.sock.settimeout(self.read_timeout)
        with self._all_lock:
            self._all.add(conn)
        return conn

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        origin: tuple[str, str],
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes,
    ) -> tuple[int, dict[str, str], bytes]:
        try:
            # skip_host/skip_accept_encoding: the Host sent is the one signed, and no header is added behind our back.
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in headers.items():
                conn.putheader(name, value)
            if body or method in {"POST", "PUT", "PATCH"}:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body or None)
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self._drop(conn, origin)
            raise ExchangeFailed(f"{type(exc).__name__}: {exc}") from exc
        if response.will_close:
            self._drop(conn, origin)
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data

    def _drop(self, conn: http.client.HTTPConnection, origin: tuple[str, str]) -> None:
        conn.close()
        with self._all_lock:
            self._all.discard(conn)
        if self._local.by_origin.get(origin) is conn:
            del self._local.by_origin[origin]

    def close(self) -> None:
        with self._all_lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local.by_origin.clear()


def _https_proxy(host: str) -> Any:
    proxy = getproxies().get("https")
    if not proxy or proxy_bypass(host):
        return None
    return urlsplit(proxy if "://" in proxy else f"http://{proxy}")
