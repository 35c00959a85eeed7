"""`/mcp`: agentmem's operations as Model Context Protocol tools (streamable HTTP, stateless, JSON answers).

API Gateway authorises the call like every other route (IAM, SigV4, the stack's resource policy), and
`agentmem serve` sends it here like every other route (bearer token, Host checks). The caller names the
agent and user in the endpoint URL (`/mcp?agentId=A&userId=U&threadId=T`), never the model in a tool
argument. Each tool call runs through the catalog's own handler for its route, in this process
(`HandlerTransport`). Mangum runs the SDK's ASGI app on the proxy event; the app (not the server) is made
anew per invocation because the SDK's session manager runs once per instance.

The MCP SDK and Mangum are the `mcp` extra (always in the Lambda layer); without them this route says so.
"""

from __future__ import annotations

import base64
import json
from functools import cache
from typing import Any

from agentmem.api.errors import error_response
from agentmem.api.observability import inject_lambda_context, logger, tracer
from agentmem.api.resolver import make_resolver
from agentmem.integrations.mcp.handlers import OUTER_REQUEST_CONTEXT, HandlerTransport
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router
from aws_lambda_powertools.utilities.typing import LambdaContext

router = Router()
_NO_STREAM = "use POST: this MCP endpoint is stateless and opens no event stream or session"


@cache
def _server() -> Any:
    # Built once per execution environment (its tools' argument models take ~50 ms to build).
    from agentmem.client import MemoryClient
    from agentmem.integrations.mcp import build_server

    return build_server(MemoryClient("http://agentmem.internal", transport=HandlerTransport()))


@router.post(
    "/mcp",
    summary="Model Context Protocol: one JSON-RPC request (tools/list, tools/call, ...), one JSON answer",
    description="Query `agentId`, `userId`, `threadId`: whom the tools act for. Tool errors come back as "
    "`isError` results; see the tools' own schemas through `tools/list`.",
)
def mcp_request() -> Response[Any]:
    try:
        from agentmem.integrations.mcp import streamable_http_app
        from mangum import Mangum

        server = _server()
    except ImportError as exc:
        logger.warning("MCP endpoint unavailable", extra={"missing": exc.name})
        return error_response(501, "not_implemented", "the MCP endpoint needs the mcp extra: "
                              "pip install 'tenantmem[mcp]'")
    event = router.current_event.raw_event
    token = OUTER_REQUEST_CONTEXT.set(event.get("requestContext"))
    try:
        answer = Mangum(streamable_http_app(server), lifespan="auto")(event, router.lambda_context)
    finally:
        OUTER_REQUEST_CONTEXT.reset(token)
    return _contract_answer(answer)


def _contract_answer(answer: dict[str, Any]) -> Response[Any]:
    """Mangum's answer as a Response; a refusal the SDK wrote as plain text gets the contract's error body."""
    status = int(answer["statusCode"])
    body = answer.get("body") or ""
    if answer.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8", errors="replace")
    if status >= 400:
        try:
            json.loads(body)
        except ValueError:
            # The SDK's 406/415 (Accept or Content-Type not JSON) are client mistakes like any other: a 400.
            if status in (400, 406, 415):
                return error_response(400, "validation_error", body.strip() or "the MCP request was refused")
            return error_response(status, "mcp_error", body.strip() or "the MCP request failed")
    headers = {k: v for k, v in (answer.get("headers") or {}).items() if k.lower() != "content-length"}
    return Response(status_code=status, body=body, headers=headers)


# MCP lets a server without a server-to-client stream answer GET (and DELETE, with no session) 405.
@router.get("/mcp", summary="405: no server-to-client event stream (stateless)")
def mcp_stream() -> Response[Any]:
    answer = error_response(405, "method_not_allowed", _NO_STREAM)
    answer.headers["Allow"] = "POST"
    return answer


@router.delete("/mcp", summary="405: there is no session to end (stateless)")
def mcp_end_session() -> Response[Any]:
    return mcp_stream()


app = make_resolver(router)


@inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
