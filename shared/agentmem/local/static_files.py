"""The files `agentmem serve` publishes under /static: the embeddable feedback widget, at a versioned path.

A host application's page loads the widget from here with `<script src>`: a script load is open to
any origin (it reads nothing), and the answer carries `Access-Control-Allow-Origin: *` so a host may
also pin it with Subresource Integrity (`integrity` + `crossorigin`). The file name carries the
major version: `agentmem-feedback.v1.js` keeps its attributes, events and calls; a breaking change
ships as `.v2.js` beside it.
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
STATIC_HEADERS = {
    "access-control-allow-origin": "*",
    "x-content-type-options": "nosniff",
    # Revalidated each hour (the ETag makes that cheap): a fixed v1 bug reaches hosts the same day.
    "cache-control": "public, max-age=3600",
    "cross-origin-resource-policy": "cross-origin",
    # A script load is no frame: these keep the files out of other sites' frames, not out of their pages.
    **{name.lower(): value for name, value in NO_FRAMING_HEADERS.items()},
}


def widget_script() -> bytes:
    """The widget's source, as shipped in the package."""
    return resources.files("agentmem.local").joinpath("static", WIDGET_FILE).read_bytes()


class _WithHeaders:
    """Adds STATIC_HEADERS to every answer of the wrapped app."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", [])
                        if k.decode("latin-1").lower() not in STATIC_HEADERS]
                extra = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in STATIC_HEADERS.items()]
                message = {**message, "headers": kept + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def static_extension() -> Extension:
    """/static mounted on the local server, open to GET and HEAD from any origin."""
    files = StaticFiles(packages=[("agentmem.local", "static")])
    return Extension(Mount(STATIC_PREFIX, app=_WithHeaders(files)), open_methods=frozenset({"GET", "HEAD"}))
