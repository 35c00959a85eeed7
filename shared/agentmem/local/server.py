"""`agentmem serve`: the HTTP API on one machine, through the same Lambda handlers AWS runs.

Each request becomes an API Gateway REST proxy event for the function the
catalog names, and the function's answer becomes the HTTP response; a
background worker delivers events (EventBridge's part). Loopback by default.

`LocalApp.handle` is the dispatch, callable in-process (the CLI and tests do);
`make_http_server` puts it behind uvicorn (local/http_server.py) and the ASGI
front (local/asgi.py: limits, Host and cross-site checks, mounts).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agentmem.config import Settings, load_settings, reset_settings
from agentmem.local import apigateway
from agentmem.local.asgi import Extension, create_asgi_app
from agentmem.local.http_common import NO_FRAMING_HEADERS, Response, bearer_token_ok, error_response
from agentmem.local.http_server import LocalHttpServer
from agentmem.local.lambda_runtime import invoke
from agentmem.local.security import ensure_safe_bind
from agentmem.local.static_files import static_extension
from agentmem.local.worker import SWEEP_PENDING_OLDER_THAN_SECONDS, EventWorker
from agentmem.service.lesson_groups import list_grouped
from agentmem.wiring import Services, build_services, set_services

log = logging.getLogger(__name__)


@dataclass
class LocalApp:
    """The local service: services wired to the data folder, the event worker, and request dispatch."""

    settings: Settings
    services: Services
    worker: EventWorker
    # Set once the start-up warm-up (model load, pending sweep, lesson comparison) has finished.
    warmed: threading.Event = field(default_factory=threading.Event)

    def handle(
        self, method: str, raw_path: str, headers: Mapping[str, str], body: bytes, source_ip: str
    ) -> Response:
        """One request, in-process: the wall page, or the catalog function's answer to its proxy event."""
        path = raw_path.split("?", 1)[0]
        if path.rstrip("/") == "/wall":
            if method in {"GET", "HEAD"}:
                return 200, {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
                             **NO_FRAMING_HEADERS}, _wall_page()
            return error_response(405, "method_not_allowed", "use GET", {"Allow": "GET, HEAD"})
        if self.settings.api_token and not bearer_token_ok(headers, self.settings.api_token):
            return error_response(403, "forbidden", "missing or wrong bearer token")
        # HEAD is GET without the body (RFC 9110): the GET route answers it, and the HTTP layer (uvicorn)
        # sends the headers only, Content-Length included.
        routed = "GET" if method == "HEAD" else method
        found = apigateway.match(routed, path)
        if found.route is None:
            if found.allowed_methods:
                allowed = ", ".join(with_head(found.allowed_methods))
                return error_response(405, "method_not_allowed", f"use {allowed}", {"Allow": allowed})
            return error_response(404, "not_found", f"no route for {method} {path}")
        try:
            text = body.decode("utf-8") if body else None
        except UnicodeDecodeError:
            return error_response(400, "validation_error", "the body is not UTF-8")
        event = apigateway.proxy_event(
            found.route, found.path_parameters, routed, raw_path, headers, text, source_ip
        )
        result = invoke(found.route.function, event)
        out_headers = dict(result.get("headers") or {})
        for name, values in (result.get("multiValueHeaders") or {}).items():
            out_headers[name] = ", ".join(values)
        return int(result["statusCode"]), out_headers, (result.get("body") or "").encode()

    def close(self) -> None:
        self.worker.stop()
        set_services(None)
        self.services.close()


def with_head(methods: Sequence[str]) -> list[str]:
    """The methods of a path as `Allow` names them: HEAD beside every GET."""
    named = list(dict.fromkeys(methods))
    if "GET" in named and "HEAD" not in named:
        named.insert(named.index("GET") + 1, "HEAD")
    return named


def create_app(
    data_dir: Path, *, start_worker: bool = True, ports: dict[str, Any] | None = None, host: str | None = None,
    **overrides: Any,
) -> LocalApp:
    """Wire the local service on `data_dir`, index whatever was left pending, start the worker.

    `ports` may supply adapters by name (`embedder`, `vectors`, ...) in place of the defaults:
    tests share one loaded model this way, or inject a failing backend. With `host` (the address the
    server will listen on), UnsafeBind is raised for an address beyond loopback without apiToken
    before anything starts or any file is written.
    """
    os.environ["AGENTMEM_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    reset_settings()
    settings = load_settings(data_dir=data_dir, backend="local", **overrides)
    if host is not None:
        ensure_safe_bind(host, settings.api_token)
    data_dir.mkdir(parents=True, exist_ok=True)
    services = build_services(settings, **(ports or {}))
    # The PII detector's spaCy pipeline (seconds to load, once per process) is ready before the first
    # request, so no request waits for it.
    services.conversations.detector.detect("warm up: Ana Lopez in Lisbon")
    set_services(services)
    from agentmem.adapters.local.event_bus import SqliteEventBus

    bus = services.memory.bus
    assert isinstance(bus, SqliteEventBus)
    memory = services.memory
    worker = EventWorker(
        bus, sweep=lambda: memory.index_pending(older_than_seconds=SWEEP_PENDING_OLDER_THAN_SECONDS)
    )
    app = LocalApp(settings, services, worker)
    if start_worker:
        worker.start()
        threading.Thread(target=_warm_up, args=(services, app.warmed), daemon=True).start()
    return app


def _warm_up(services: Services, done: threading.Event) -> None:
    """Load the embedding model, sweep lessons left pending by a crash, and compare each agent's newest
    lessons once, all off the request path.

    The comparison (the wall's groups, `retrieve`'s near-duplicates) reads each lesson's comment vector,
    kept by the indexer; a lesson indexed before they were kept has its comment embedded here, into the
    embedder's cache, so the first wall page after a restart does not wait seconds for them.
    """
    try:
        memory = services.memory
        memory.embedder.embed(["warm up"])
        swept = memory.index_pending()
        if swept:
            log.info("indexed %d lesson(s) left pending", swept)
        for agent_id in sorted(memory.settings.enabled_agent_set):
            list_grouped(memory, agent_id, 1, None)
    except Exception:
        log.exception("warm-up failed; requests will retry the embedder")
    finally:
        done.set()


def _wall_page() -> bytes:
    try:
        return resources.files("agentmem.local").joinpath("wall.html").read_bytes()
    except FileNotFoundError:
        return b"<!doctype html><title>agentmem</title><p>The Memory Learning Wall is not installed."


def extensions(app: LocalApp) -> list[Extension]:
    """What `agentmem serve` mounts beside the API (the MCP server, static files): register yours here.

    Each is an `Extension` (agentmem.local.asgi): a Starlette route tried before the API, which
    passes the same Host, cross-site and token checks unless it opens some methods to everyone.
    """
    return [static_extension()]


def make_http_server(
    app: LocalApp, host: str, port: int, *, extra: Sequence[Extension] | None = None
) -> LocalHttpServer:
    """The HTTP server for `app` on `host:port` (0 picks a free port), with `extensions(app)` or `extra` mounted.

    Raises UnsafeBind for an address beyond loopback when no apiToken is set.
    """
    ensure_safe_bind(host, app.settings.api_token)
    mounted = list(extensions(app) if extra is None else extra)
    return LocalHttpServer(create_asgi_app(app, host=host, extensions=mounted), host, port)
