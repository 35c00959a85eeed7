"""Calls the local app the way an HTTP client would, and hands back status and JSON."""

from __future__ import annotations

import json
from typing import Any

from agentmem.local.server import LocalApp


class LocalCaller:
    def __init__(self, app: LocalApp):
        self.app = app

    def __call__(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, raw: bytes | None = None
    ) -> tuple[int, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        status, _, out = self.app.handle(
            method, path, {"Content-Type": "application/json", **(headers or {})}, data, "127.0.0.1"
        )
        return status, (json.loads(out) if out else None)
