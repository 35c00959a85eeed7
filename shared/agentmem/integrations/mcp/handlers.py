"""MemoryClient's transport answered by the catalog's Lambda handlers in this process.

The `mcp` function (in AWS, and behind `agentmem serve`) runs each tool's request through the very
handler API Gateway would have sent it to, as an API Gateway proxy event: the same validation,
error mapping and logging as a direct call, without a second trip through the network or a second
signature. The caller's identity from the outer request is kept in the inner event's requestContext.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from agentmem.local import apigateway
from agentmem.local.lambda_runtime import invoke

# The outer request's context (caller identity, request id), stamped on every inner event: set per
# invocation by the mcp function, and carried into the SDK's tasks and worker threads with the context.
OUTER_REQUEST_CONTEXT: ContextVar[Mapping[str, Any] | None] = ContextVar("outer_request_context", default=None)


class HandlerTransport:

    def send(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(url)
        raw_path = parts.path + (f"?{parts.query}" if parts.query else "")
        found = apigateway.match(method, parts.path)
        if found.route is None:  # a tool naming a route the catalog lacks is a bug here, not the caller's
            raise LookupError(f"no catalog route for {method} {parts.path}")
        identity = (OUTER_REQUEST_CONTEXT.get() or {}).get("identity") or {}
        event = apigateway.proxy_event(
            found.route, found.path_parameters, method, raw_path, dict(headers),
            body.decode("utf-8") if body else None, str(identity.get("sourceIp") or "127.0.0.1"),
        )
        if identity:
            event["requestContext"]["identity"] = dict(identity)
        result = invoke(found.route.function, event)
        answer_headers = {k.lower(): str(v) for k, v in (result.get("headers") or {}).items()}
        for name, values in (result.get("multiValueHeaders") or {}).items():
            answer_headers[name.lower()] = ", ".join(str(v) for v in values)
        return int(result["statusCode"]), answer_headers, (result.get("body") or "").encode("utf-8")

    def close(self) -> None:
        pass
