"""The files `agentmem serve` publishes under /static: the embeddable feedback widget, at a versioned path,
and the Memory Learning Wall's script (the wall page's Content-Security-Policy allows no inline script).

A host application's page loads the widget from here with `<script src>`: a script load is open to
any origin (it reads nothing), and the answer carries `Access-Control-Allow-Origin: *` so a host may
also pin it with Subresource Integrity (`integrity` + `crossorigin`). The file name carries the
major version: `agentmem-feedback.v1.js` keeps its attributes, events and calls; a breaking change
ships as `.v2.js` beside it. The wall's script is no interface of anyone's and goes with the page it
drives, so it is unversioned and revalidated on every load: after an upgrade the page (never cached)
does not run beside last hour's script.
"""

from __future__ import annotations

from importlib import resources

from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentmem.local.asgi import Extension
from agentmem.local.http_common import NO_FRAMING_HEADERS

STATIC_PREFIX = "/static"
WIDGET_FILE = "agentmem-feedback.v1.js"
WIDGET_PATH = f"{STATIC_PREFIX}/{WIDGET_FILE}"
WALL_SCRIPT_FILE = "wall.js"
WALL_SCRIPT_PATH = f"{STATIC_PREFIX}/{WALL_SCRIPT_FILE}"
STATIC_HEADERS = {
    "access-control-allow-origin": "*",
    "x-content-type-options": "nosniff",
    # Revalidated each hour (the ETag makes that cheap): a fixed v1 bug reaches hosts the same day.
    "cache-control": "public, max-age=3600",
    "cross-origin-resource-policy": "cross-origin",
    # A script load is no frame: these keep the files out of other sites' frames, not out of their pages.
    **{name.lower(): value for name, value in NO_FRAMING_HEADERS.items()},
}
# The ETag still spares the bytes when nothing changed.
WALL_SCRIPT_HEADERS = {**STATIC_HEADERS, "cache-control": "no-cache"}


def headers_for(path: str) -> dict[str, str]:
    """The headers a /static answer carries, by its path."""
    return WALL_SCRIPT_HEADERS if path == WALL_SCRIPT_PATH else STATIC_HEADERS


def widget_script() -> bytes:
    """The widget's source, as shipped in the package."""
    return resources.files("agentmem.local").joinpath("static", WIDGET_FILE).read_bytes()


def wall_script() -> bytes:
    """The wall page's script, as shipped in the package."""
    return resources.files("agentmem.local").joinpath("static", WALL_SCRIPT_FILE).read_bytes()


class _WithHeaders:
    """Adds `headers_for(path)` to every answer of the wrapped app."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        added = headers_for(scope.get("path", ""))  # Starlette's Mount keeps the full path here

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", [])
                        if k.decode("latin-1").lower() not in added]
                extra = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in added.items()]
                message = {**message, "headers": kept + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def static_extension() -> Extension:
    """/static mounted on the local server, open to GET and HEAD from any origin."""
    files = StaticFiles(packages=[("agentmem.local", "static")])
    return Extension(Mount(STATIC_PREFIX, app=_WithHeaders(files)), open_methods=frozenset({"GET", "HEAD"}))
