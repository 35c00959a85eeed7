"""The ASGI application of `agentmem serve`: the contract's HTTP front around the Lambda handlers.

Outermost first:

`create_front` builds it for any request handler: `agentmem wall`'s signing proxy uses the same front.

1. `Guard` (plain ASGI): size limits on the request line and headers (414, 431), the Host
   allowlist (421), the cross-site rule (403), the bearer token (403), an access log line, and
   a contract error body for anything that escaped (500).
2. A Starlette router: the extension mounts (`Extension`: the MCP server at /mcp, static files),
   then everything else to the API.
3. `ApiEndpoint`: reads the body (over `MAX_BODY_BYTES`, 512 KiB -> 413, a deadline -> 408, a disconnect
   -> nothing runs), then hands the request to `LocalApp.handle` in a worker thread. That turns it into an API
   Gateway proxy event for the catalog's function; `lambda_runtime.invoke` runs one invocation
   per function at a time, as Lambda does.

Starlette because it is the ASGI toolkit the MCP SDK itself is built on (its streamable-HTTP
app mounts as is) and brings `StaticFiles`; the router is the one place other parts plug in.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentmem.api.limits import MAX_BODY_BYTES, too_large_message
from agentmem.local.http_common import Response as Answer
from agentmem.local.http_common import bearer_token_ok, error_body
from agentmem.local.security import HostPolicy, cross_site_reason

if TYPE_CHECKING:
    from agentmem.local.server import LocalApp

log = logging.getLogger(__name__)
# Not under a name starting "agentmem": powertools owns those (and filters them from the root handler); it
# would stamp each access line with the Lambda context of whichever handler ran last.
access_log = logging.getLogger("local_server.access")


_PAGE_PREFIXES = frozenset({"wall", "mcp", "static"})


def logged_path(method: str, path: str) -> str:
    """What the access log says of a path: its route template (`/v1/users/{userId}`), never the ids in it."""
    from agentmem.local import apigateway

    first = path.split("/")[1]
    if first in _PAGE_PREFIXES:
        # Pages, the widget script and the MCP endpoint carry no ids, but the rest of their path is
        # the caller's text: it is not logged (a decoded `%0A` would forge a log line).
        return f"/{first}" if path.rstrip("/") == f"/{first}" else f"/{first}/*"
    found = apigateway.match("GET" if method == "HEAD" else method, path)
    if found.route is not None:
        return found.route.template
    return "(no route)" if not found.allowed_methods else "(method not allowed)"

MAX_TARGET_BYTES = 8 * 1024
MAX_HEADER_BYTES = 16 * 1024
# From the end of the headers to the last byte of the body; a client slower than this is cut off.
BODY_TIMEOUT_SECONDS = 10.0
# A body over the limit is read and dropped up to this size and time before the 413, so the client
# (still sending) can read it; a larger one is answered at once. API Gateway's own payload limit.
MAX_DISCARDED_BYTES = 10 * 1024 * 1024
DISCARD_SECONDS = 2.0
# Pages served to whoever opens them (a link from anywhere, no token): the wall. Everything else
# refuses cross-site callers and asks for the token when one is set.
OPEN_PAGES = frozenset({("GET", "/wall"), ("GET", "/wall/"), ("HEAD", "/wall"), ("HEAD", "/wall/")})


@dataclass(frozen=True)
class Extension:
    """Something mounted on the local server beside the API: the one way to add routes.

    `route` is a Starlette route (usually `Mount(path, app=...)`); it is tried before the API.
    `open_methods` are the methods served to cross-site callers without the token (a page or
    script meant to be loaded from anywhere: `{"GET", "HEAD"}`); every other request to it
    passes the same checks as the API. `lifespan` is entered when the server starts (the MCP
    SDK's session manager needs one).
    """

    route: BaseRoute
    open_methods: frozenset[str] = frozenset()
    lifespan: Callable[[], contextlib.AbstractAsyncContextManager[Any]] | None = None

    @property
    def path(self) -> str:
        return str(getattr(self.route, "path", ""))


# One request in, its answer out: method, target (path and query, as sent), lower-case headers, body, client IP.
Handle = Callable[[str, str, Mapping[str, str], bytes, str], Answer]


def create_asgi_app(local_app: LocalApp, *, host: str = "127.0.0.1",
                    extensions: Sequence[Extension] = ()) -> ASGIApp:
    """The whole local HTTP front for `local_app`, serving `host` (the `--host` given), with `extensions`."""
    return create_front(local_app.handle, host=host, token=local_app.settings.api_token, extensions=extensions)


def create_front(handle: Handle, *, host: str, token: str | None, extensions: Sequence[Extension] = (),
                 open_pages: frozenset[tuple[str, str]] = OPEN_PAGES) -> ASGIApp:
    """An HTTP front for `handle` (`agentmem serve`'s API, `agentmem wall`'s proxy): the same limits, Host
    and cross-site checks, timeouts and error bodies. `token`, when set, is asked of every request but
    `open_pages` and the extensions' open methods (None: `handle` checks its own)."""

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for extension in extensions:
                if extension.lifespan is not None:
                    await stack.enter_async_context(extension.lifespan())
            yield

    routes: list[BaseRoute] = [e.route for e in extensions]
    routes.append(EveryPath(ApiEndpoint(handle)))
    router = Starlette(
        routes=routes,
        lifespan=lifespan,
        # Starlette's own 404/405 in the contract's body; and anything that escapes the API or a mount, which
        # Starlette's ServerErrorMiddleware would otherwise answer with a text/plain 500 before Guard sees it.
        exception_handlers={HTTPException: _http_exception, Exception: _internal_error},
    )
    return Guard(router, HostPolicy.for_bind(host), token, extensions, open_pages)


async def _http_exception(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    headers = dict(exc.headers or {})
    headers["Content-Type"] = "application/json"
    return Response(error_body(code, str(exc.detail)), exc.status_code, headers)


async def _internal_error(_: Request, __: Exception) -> Response:
    # Starlette re-raises after answering, so Guard still logs the exception.
    return Response(error_body("internal_error", "internal error"), 500, {"Content-Type": "application/json"})


class Guard:
    """Limits, Host, cross-site and token checks in front of every route; never a non-contract error body."""

    def __init__(self, app: ASGIApp, hosts: HostPolicy, token: str | None, extensions: Sequence[Extension],
                 open_pages: frozenset[tuple[str, str]] = OPEN_PAGES):
        self.app = app
        self.hosts = hosts
        self.token = token
        self.open_pages = open_pages
        self.open_paths = [(e.path.rstrip("/"), e.open_methods) for e in extensions if e.open_methods]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status_seen: list[int] = []

        async def send_logged(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_seen.append(int(message["status"]))
            await send(message)

        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                await send_error(send_logged, *refusal)
            else:
                await self.app(scope, receive, send_logged)
        except Exception:
            log.exception("unhandled error in the local server")
            if not status_seen:
                await send_error(send_logged, 500, "internal_error", "internal error")
        finally:
            # Method, route and status only: bodies and queries may hold personal data, and a path holds
            # ids (a userId may be an email), so the line names the route template, as API Gateway's log does.
            access_log.info("%s %s %s %.1fms", scope["method"], logged_path(scope["method"], scope["path"]),
                            status_seen[0] if status_seen else "-", (time.perf_counter() - started) * 1000)

    def _refusal(self, scope: Scope) -> tuple[int, str, str, dict[str, str]] | None:
        raw_headers: list[tuple[bytes, bytes]] = scope["headers"]
        target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        if target > MAX_TARGET_BYTES:
            return 414, "uri_too_long", f"the request target exceeds {MAX_TARGET_BYTES} bytes", {}
        if sum(len(k) + len(v) + 4 for k, v in raw_headers) > MAX_HEADER_BYTES:
            return 431, "headers_too_large", f"the request headers exceed {MAX_HEADER_BYTES} bytes", {}
        headers = lower_headers(raw_headers)
        if not self.hosts.allows(headers.get("host")):
            return 421, "misdirected_request", "this server answers to its own address only (Host header)", {}
        method, path = scope["method"], scope["path"]
        if self._open(method, path):
            return None
        reason = cross_site_reason(headers, scope.get("scheme", "http"))
        if reason is not None:
            readable = readable_by(headers) if method != "OPTIONS" else {}  # a preflight gets no permission
            return 403, "cross_site_refused", f"cross-site requests are refused ({reason})", readable
        if self.token and not bearer_token_ok(headers, self.token):
            return 403, "forbidden", "missing or wrong bearer token", {}
        return None

    def _open(self, method: str, path: str) -> bool:
        if (method, path) in self.open_pages:
            return True
        return any(
            method in methods and (path == prefix or path.startswith(prefix + "/"))
            for prefix, methods in self.open_paths
        )


def readable_by(headers: Mapping[str, str]) -> dict[str, str]:
    """CORS headers that let the calling page read a cross-site refusal (why, not any data), or none.

    Without them the browser hides the 403 from the page, and the feedback widget could only say it
    could not reach the server; with them its probe (a simple GET, no preflight) reads the refusal.
    A preflight is never answered with them: nothing but a simple request is let past the browser.
    """
    origin = headers.get("origin", "").strip()
    if not origin or origin == "null":
        return {}
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}


class EveryPath(BaseRoute):
    """The route of last resort: every request the extensions did not take goes to `app`, whatever its path.

    Not `Mount("")`: Starlette's path pattern stops at a newline, so `/v1/users/a%0Ab` would get a 404
    from the router instead of the API's 400 for a bad id.
    """

    def __init__(self, app: ASGIApp):
        self.app = app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        return (Match.FULL, {}) if scope["type"] == "http" else (Match.NONE, {})

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NotImplementedError("the API is not reversed by name")

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


class ApiEndpoint:
    """The body read with limits, then `handle` (`LocalApp.handle`: the Lambda handlers) in a worker thread."""

    def __init__(self, handle: Handle):
        self.handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = lower_headers(scope["headers"])
        declared = headers.get("content-length")
        if declared is not None and (not declared.strip().isdigit()):
            await send_error(send, 400, "bad_request", "Content-Length is not a number", close=True)
            return
        if declared is not None and int(declared) > MAX_BODY_BYTES:
            if int(declared) <= MAX_DISCARDED_BYTES:
                await discard_body(receive, MAX_DISCARDED_BYTES, DISCARD_SECONDS)
            await send_error(send, 413, "too_large", too_large_message(), close=True)
            return
        try:
            body = await read_body(receive, MAX_BODY_BYTES, BODY_TIMEOUT_SECONDS)
        except BodyTooLarge:
            await discard_body(receive, MAX_DISCARDED_BYTES, DISCARD_SECONDS)
            await send_error(send, 413, "too_large", too_large_message(), close=True)
            return
        except TimeoutError:
            await send_error(send, 408, "request_timeout",
                             f"the body did not arrive within {BODY_TIMEOUT_SECONDS:.0f} s", close=True)
            return
        except ClientGone:
            return  # the client left before its body was complete: nothing runs, nobody to answer
        raw_path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        query = (scope.get("query_string") or b"").decode("latin-1")
        target = raw_path + (f"?{query}" if query else "")
        client = scope.get("client")
        source_ip = client[0] if client else "127.0.0.1"
        status, out_headers, out = await anyio.to_thread.run_sync(
            self.handle, scope["method"], target, headers, body, source_ip
        )
        await send_response(send, status, out_headers, out)


class BodyTooLarge(Exception):
    pass


class ClientGone(Exception):
    pass


async def read_body(receive: Receive, limit: int, timeout: float) -> bytes:
    """The whole request body, or BodyTooLarge / TimeoutError / ClientGone."""
    chunks: list[bytes] = []
    size = 0
    with anyio.fail_after(timeout):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


async def discard_body(receive: Receive, limit: int, seconds: float) -> None:
    """Read and drop what is left of a refused body (at most `limit` bytes, for at most `seconds`).

    A client still sending when the server answers and closes gets a broken pipe instead of the
    413; dropping the rest first lets it read the answer. Nothing is kept: memory stays flat.
    """
    received = 0
    with anyio.move_on_after(seconds):
        while received <= limit:
            message = await receive()
            if message["type"] == "http.disconnect" or not message.get("more_body", False):
                return
            received += len(message.get("body", b""))


def lower_headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """ASGI headers as one dict, lower-case names; repeated headers joined with ", " (RFC 9110)."""
    headers: dict[str, str] = {}
    for name, value in raw:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


async def send_response(send: Send, status: int, headers: dict[str, str], body: bytes, *,
                        close: bool = False) -> None:
    out = [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in headers.items()
           if k.lower() not in {"content-length", "connection", "transfer-encoding"}]
    out.append((b"content-length", str(len(body)).encode()))
    if close:
        out.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})


async def send_error(send: Send, status: int, code: str, message: str,
                     headers: dict[str, str] | None = None, *, close: bool = False) -> None:
    await send_response(send, status, {"Content-Type": "application/json", **(headers or {})},
                        error_body(code, message), close=close)
