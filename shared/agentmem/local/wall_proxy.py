"""`agentmem wall`: the Memory Learning Wall for a deployed stack, through a loopback-only signing proxy.

The browser only ever talks to this machine, through the same HTTP front as `agentmem serve`
(uvicorn and local/asgi.py: limits, timeouts, the Host allowlist, the cross-site rule, contract
errors). The proxy serves the wall page and forwards `/v1/*` to the stack's API, signing each
request with the operator's AWS credentials (SigV4, `execute-api`): the stack needs no public
dashboard and no login of its own.

Because the proxy lends the operator's credentials to whoever reaches it, it binds loopback
only and asks for a random session token (the printed link carries it in the fragment, which
the page keeps in sessionStorage). The token also makes every API call a non-simple cross-origin
request, so another web page open in the same browser cannot drive the proxy (which refuses
cross-site requests besides); and the Host header must name the proxy itself, which defeats DNS
rebinding.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Protocol
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from starlette.types import ASGIApp

from agentmem.api.limits import MAX_BODY_BYTES, too_large_message
from agentmem.client.signing import SigV4Signer, region_from_url
from agentmem.client.transport import HttpTransport
from agentmem.local.asgi import create_front
from agentmem.local.http_common import (
    NO_FRAMING_HEADERS,
    Response,
    bearer_token_ok,
    error_body,
    error_response,
    loopback_addresses,
)
from agentmem.local.http_server import LocalHttpServer
from agentmem.local.static_files import (
    STATIC_HEADERS,
    WALL_SCRIPT_HEADERS,
    WALL_SCRIPT_PATH,
    WIDGET_PATH,
    wall_script,
    widget_script,
)

log = logging.getLogger(__name__)

# The request headers the API reads; anything else (cookies, the browser's own Authorization,
# forwarding headers) stays on this machine.
FORWARDED_REQUEST_HEADERS = ("Content-Type", "Accept", "If-Match", "Idempotency-Key")
RETURNED_RESPONSE_HEADERS = ("content-type", "etag", "retry-after", "x-amzn-requestid", "x-amz-apigw-id")
PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    **NO_FRAMING_HEADERS,
    "Referrer-Policy": "no-referrer",
}


class NotLoopback(ValueError):
    """The proxy was asked to listen where other machines could reach it."""


class Signer(Protocol):
    def sign(self, method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]: ...


def ensure_loopback(host: str) -> None:
    """Raise NotLoopback unless every address `host` names is a loopback address."""
    loopback = loopback_addresses(host)
    if loopback is None:
        raise NotLoopback(f"cannot resolve {host!r}")
    if not loopback:
        raise NotLoopback(
            f"{host!r} is not a loopback address: the wall proxy signs requests with your AWS credentials, "
            "so it listens on 127.0.0.1 or ::1 only"
        )


def wall_page() -> bytes:
    """The wall page shipped in the package (the same file `agentmem serve` serves)."""
    return resources.files("agentmem.local").joinpath("wall.html").read_bytes()


def _upstream_path(raw_path: str) -> str | None:
    """The /v1 path re-encoded the way the client signs it (each segment percent-encoded), or None."""
    segments = [unquote(s) for s in raw_path.split("/")[1:]]
    if not segments or segments[0] != "v1" or any(s in {"", ".", ".."} for s in segments):
        return None
    return "/" + "/".join(quote(s, safe="") for s in segments)


def _upstream_query(raw_query: str) -> str:
    # SigV4 signs the query in RFC 3986 form; the browser's form encoding (`+` for space) is not that.
    pairs = parse_qsl(raw_query, keep_blank_values=True)
    return urlencode(pairs, quote_via=quote, safe="")


def _contract_error(status: int, headers: Mapping[str, str], body: bytes) -> bytes:
    """The upstream error body, or API Gateway's own `{"message"}` (an IAM denial, a throttle) in the contract's shape.

    An IAM denial becomes `access_denied`, not `forbidden`: the page asks for a token on
    `forbidden`, and no token helps when the AWS identity is not allowed.
    """
    try:
        parsed = json.loads(body) if body else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        return body
    message = (parsed.get("message") or parsed.get("Message")) if isinstance(parsed, dict) else None
    code = {403: "access_denied", 429: "throttled"}.get(status, "upstream_error")
    kind = headers.get("x-amzn-errortype", "").split(":", 1)[0]
    text = f"the stack's API answered {status}" + (f" ({kind})" if kind else "") + (f": {message}" if message else "")
    return error_body(code, text)


@dataclass
class WallProxy:
    """Serves the wall page and forwards `/v1/*` to `upstream` (the stack's API URL), signed by `signer`."""

    upstream: str
    signer: Signer
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    connect_timeout: float = 5.0
    read_timeout: float = 30.0
    transport_factory: Callable[[float, float], HttpTransport] = HttpTransport

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {self.upstream!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"the API URL takes no query or fragment: {self.upstream!r}")
        base = parts.path.rstrip("/")
        # The contract's paths start with /v1, so a base pasted with it is accepted too.
        self._base_path = base[: -len("/v1")] if base.endswith("/v1") else base
        self._origin = f"{parts.scheme}://{parts.netloc}"

    def handle(self, method: str, raw_path: str, headers: Mapping[str, str], body: bytes) -> Response:
        """One request from the browser: the page, or an API call forwarded and signed."""
        path, _, query = raw_path.partition("?")
        if method in {"GET", "HEAD"} and path in {"/", "/wall", "/wall/"}:
            if path == "/":
                return 302, {"Location": "/wall", "Content-Length": "0"}, b""
            return 200, dict(PAGE_HEADERS), wall_page()
        if method in {"GET", "HEAD"} and path == WIDGET_PATH:
            # The wall's Runs tab gives feedback through the widget, from this origin.
            return 200, {"Content-Type": "text/javascript; charset=utf-8", **STATIC_HEADERS}, widget_script()
        if method in {"GET", "HEAD"} and path == WALL_SCRIPT_PATH:
            return 200, {"Content-Type": "text/javascript; charset=utf-8", **WALL_SCRIPT_HEADERS}, wall_script()
        upstream_path = _upstream_path(path)
        if upstream_path is None:
            return error_response(404, "not_found", f"no route for {method} {path}; the wall is at /wall")
        if method == "OPTIONS":
            # No CORS here: a preflight from another origin gets no permission.
            return error_response(405, "method_not_allowed", "cross-origin requests are not served")
        if not bearer_token_ok(headers, self.token):
            return error_response(403, "forbidden", "missing or wrong wall token (printed by `agentmem wall`)")
        if len(body) > MAX_BODY_BYTES:
            return error_response(413, "too_large", too_large_message())
        url = self._origin + self._base_path + upstream_path + (f"?{_upstream_query(query)}" if query else "")
        return self.forward(method, url, headers, body)

    def forward(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        given = {name.lower(): value for name, value in headers.items()}
        outgoing = {name: given[name.lower()] for name in FORWARDED_REQUEST_HEADERS if name.lower() in given}
        outgoing["User-Agent"] = "agentmem-wall"
        try:
            signed = self.signer.sign(method, url, outgoing, body)
        except Exception as exc:  # no credentials, an expired SSO session: tell the operator, not a bare 500
            log.warning("could not sign %s %s: %s", method, urlsplit(url).path, exc)
            return error_response(502, "signing_failed", f"could not sign the request with your AWS credentials: {exc}")
        # A fresh connection per request: the browser's connections come and go on their own threads.
        transport = self.transport_factory(self.connect_timeout, self.read_timeout)
        try:
            status, answer_headers, data = transport.send(method, url, signed, body)
        except Exception as exc:  # connect failures, timeouts, TLS errors: the upstream did not answer
            log.warning("%s %s: no answer from the stack: %s", method, urlsplit(url).path, exc)
            return error_response(502, "bad_gateway", f"no answer from {urlsplit(url).netloc}: {exc}")
        finally:
            transport.close()
        if status >= 400:
            data = _contract_error(status, answer_headers, data)
            answer_headers = {**answer_headers, "content-type": "application/json"}
        returned = {
            name: answer_headers[name] for name in RETURNED_RESPONSE_HEADERS if name in answer_headers
        }
        return status, returned, data


# The proxy's pages, served without the token to whoever opens them (the link is typed or clicked).
PROXY_PAGES = frozenset(
    (method, path) for method in ("GET", "HEAD") for path in ("/", "/wall", "/wall/", WIDGET_PATH, WALL_SCRIPT_PATH)
)


def create_proxy_app(proxy: WallProxy, host: str = "127.0.0.1") -> ASGIApp:
    """The proxy behind the same HTTP front as `agentmem serve` (local/asgi.py): request-line, header and body
    limits, read timeouts, the Host allowlist against DNS rebinding, cross-site requests refused, every error in
    the contract's body. The wall token is checked by `WallProxy.handle` (after the route, with its own words)."""

    def handle(method: str, target: str, headers: Mapping[str, str], body: bytes, _: str) -> Response:
        return proxy.handle(method, target, headers, body)

    return create_front(handle, host=host, token=None, open_pages=PROXY_PAGES)


def make_proxy_server(proxy: WallProxy, host: str = "127.0.0.1", port: int = 0) -> LocalHttpServer:
    """The HTTP server (uvicorn) for `proxy` on `host` (NotLoopback for anything but a loopback address)."""
    ensure_loopback(host)
    return LocalHttpServer(create_proxy_app(proxy, host), host, port)


def bound_address(server: LocalHttpServer) -> tuple[str, int]:
    """The host and port a server listens on (the port the OS chose for port 0)."""
    return str(server.server_address[0]), int(server.server_address[1])


def wall_url(server: LocalHttpServer, token: str) -> str:
    """The link to open: the wall on the proxy, its token in the fragment (never sent over the network)."""
    host, port = bound_address(server)
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/wall#token={token}"


def proxy_for_url(url: str, region: str | None = None, *, profile: str | None = None) -> WallProxy:
    """A proxy for the API at `url`, signing with the default (or `profile`'s) AWS credentials."""
    import boto3

    session = boto3.Session(profile_name=profile, region_name=region)
    # An execute-api host names the region its signature must be for, whatever the profile's default.
    signing_region = region_from_url(url) or region or session.region_name
    if not signing_region:
        raise ValueError("no AWS region to sign for: pass --region or use an execute-api URL")
    credentials = session.get_credentials()
    if credentials is None:
        raise ValueError("no AWS credentials found (environment, shared files, SSO or an instance role)")
    return WallProxy(url, SigV4Signer(signing_region, credentials))


def proxy_for_stack(stack: str, region: str | None = None, *, profile: str | None = None) -> WallProxy:
    """A proxy for a deployed tenant stack: its `ApiUrl` output, signed with the caller's AWS credentials."""
    from agentmem.client import MemoryClient

    client = MemoryClient.for_stack(stack, region, profile=profile)
    try:
        url = client.url
    finally:
        client.close()
    return proxy_for_url(url, region, profile=profile)
