"""`agentmem serve`: the HTTP API on one machine, through the same Lambda handlers AWS runs.

Each request becomes an API Gateway REST proxy event for the function the
catalog names, and the function's answer becomes the HTTP response; a
background worker delivers events (EventBridge's part). Loopback by default.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from agentmem.config import Settings, load_settings, reset_settings
from agentmem.local import apigateway
from agentmem.local.lambda_runtime import invoke
from agentmem.local.worker import EventWorker
from agentmem.wiring import Services, build_services, set_services

log = logging.getLogger(__name__)
# Not under a name starting "agentmem": powertools owns those (and filters them from the root handler); it
# would stamp each access line with the Lambda context of whichever handler ran last.
access_log = logging.getLogger("local_server.access")
MAX_REQUEST_BYTES = 1024 * 1024


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
    body = {"error": {"code": code, "message": message, "details": []}}
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


@dataclass
class LocalApp:
    """The local service: services wired to the data folder, the event worker, and request dispatch."""

    settings: Settings
    services: Services
    worker: EventWorker

    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], body: bytes, source_ip: str
    ) -> tuple[int, dict[str, str], bytes]:
        path = raw_path.split("?", 1)[0]
        if method == "GET" and path.rstrip("/") == "/wall":
            return 200, {"Content-Type": "text/html; charset=utf-8"}, _wall_page()
        if self.settings.api_token and not _token_ok(headers, self.settings.api_token):
            return _error(403, "forbidden", "missing or wrong bearer token")
        found = apigateway.match(method, path)
        if found.route is None:
            if found.allowed_methods:
                return _error(405, "method_not_allowed", f"use {', '.join(found.allowed_methods)}")
            return _error(404, "not_found", f"no route for {method} {path}")
        if len(body) > MAX_REQUEST_BYTES:
            return _error(413, "too_large", f"the request exceeds {MAX_REQUEST_BYTES} bytes")
        try:
            text = body.decode("utf-8") if body else None
        except UnicodeDecodeError:
            return _error(400, "validation_error", "the body is not UTF-8")
        event = apigateway.proxy_event(
            found.route, found.path_parameters, method, raw_path, headers, text, source_ip
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


def create_app(
    data_dir: Path, *, start_worker: bool = True, ports: dict[str, Any] | None = None, **overrides: Any
) -> LocalApp:
    """Wire the local service on `data_dir`, index whatever was left pending, start the worker.

    `ports` may supply adapters by name (`embedder`, `vectors`, ...) in place of the defaults:
    tests share one loaded model this way, or inject a failing backend.
    """
    os.environ["AGENTMEM_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    reset_settings()
    settings = load_settings(data_dir=data_dir, backend="local", **overrides)
    data_dir.mkdir(parents=True, exist_ok=True)
    services = build_services(settings, **(ports or {}))
    set_services(services)
    from agentmem.adapters.local.event_bus import SqliteEventBus

    bus = services.memory.bus
    assert isinstance(bus, SqliteEventBus)
    worker = EventWorker(bus)
    app = LocalApp(settings, services, worker)
    if start_worker:
        worker.start()
        threading.Thread(target=_warm_up, args=(services,), daemon=True).start()
    return app


def _warm_up(services: Services) -> None:
    """Load the embedding model and sweep lessons left pending by a crash, off the request path."""
    try:
        services.memory.embedder.embed(["warm up"])
        swept = services.memory.index_pending()
        if swept:
            log.info("indexed %d lesson(s) left pending", swept)
    except Exception:
        log.exception("warm-up failed; requests will retry the embedder")


def _token_ok(headers: dict[str, str], token: str) -> bool:
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    return value.startswith("Bearer ") and hmac.compare_digest(value[7:].encode(), token.encode())


def _wall_page() -> bytes:
    try:
        return resources.files("agentmem.local").joinpath("wall.html").read_bytes()
    except FileNotFoundError:
        return b"<!doctype html><title>agentmem</title><p>The Memory Learning Wall is not installed."


class _RequestHandler(BaseHTTPRequestHandler):
    app: LocalApp
    protocol_version = "HTTP/1.1"
    server_version = "agentmem"

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            status, headers, body = _error(413, "too_large", f"the request exceeds {MAX_REQUEST_BYTES} bytes")
            self.close_connection = True
        else:
            raw = self.rfile.read(length) if length else b""
            headers_in = {k: v for k, v in self.headers.items()}
            try:
                status, headers, body = self.app.handle(
                    self.command, self.path, headers_in, raw, self.client_address[0]
                )
            except Exception:
                log.exception("unhandled error")
                status, headers, body = _error(500, "internal_error", "internal error")
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in {"content-length", "connection"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:
        # Method, path and status only: bodies may hold personal data.
        access_log.info("%s %s", self.address_string(), format % args)


def make_http_server(app: LocalApp, host: str, port: int) -> ThreadingHTTPServer:
    handler = type("BoundHandler", (_RequestHandler,), {"app": app})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
