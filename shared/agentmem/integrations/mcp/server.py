"""The MCP server: agentmem's tools on the official SDK's `MCPServer`, over stdio or streamable HTTP.

Whom a call acts for is decided outside the model's reach:
- stdio (`agentmem mcp --agent A --user U`): a fixed `Identity` from the command line;
- streamable HTTP (`/mcp` on `agentmem serve`, or the tenant's API in AWS): the endpoint URL the caller
  configured, `/mcp?agentId=A&userId=U&threadId=T`, behind the same authorisation as every other route
  (the bearer token locally, IAM/SigV4 in AWS). The caller is trusted with the whole tenant, as on the
  HTTP API; the model calling tools can name neither agent nor user.

Every tool reaches agentmem through one `MemoryClient` (in-process handlers, `--url` or `--stack`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import create_model
from starlette.applications import Starlette

from agentmem import __version__
from agentmem.client.errors import ApiError, MemoryClientError, TransportError
from agentmem.domain.ids import ID_PATTERN
from agentmem.integrations.mcp.tools import TOOLS, Identity, IdentityMissing, ToolSpec

SERVER_NAME = "agentmem"
INSTRUCTIONS = (
    "agentmem is this agent's memory. Before a task, call retrieve_memory with the task and put its "
    "`messages` in front of your prompt; afterwards call set_run_output with the returned runId. Feedback on "
    "a run (give_feedback) becomes a lesson for the agent's next similar runs. The user's profile, facts and "
    "conversation are kept per user; personal data is stored as tokens that unmask restores for this user."
)
# Query parameters of the HTTP endpoint that say whom the calls act for.
IDENTITY_PARAMETERS = {"agentId": "agent_id", "userId": "user_id", "threadId": "thread_id"}

ClientFactory = Callable[[], Any]


def build_server(client: Any, identity: Identity | None = None) -> MCPServer:
    """An MCP server whose tools call `client` (a MemoryClient).

    `identity` fixes whom the tools act for (stdio). Without it each request's identity is read from
    the HTTP endpoint's query (`?agentId=&userId=&threadId=`).
    """
    tools = [_tool(spec, client, identity) for spec in TOOLS]
    return MCPServer(
        SERVER_NAME,
        title="agentmem",
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=tools,
        log_level="WARNING",
    )


def streamable_http_app(server: MCPServer, *, path: str = "/mcp") -> Starlette:
    """The server's streamable-HTTP ASGI app at `path`: stateless (any replica or Lambda answers any call),
    JSON answers (no event stream to hold open).

    The SDK's own DNS-rebinding check is off: `agentmem serve` checks Host and cross-site requests for
    every route in front of this app, and in AWS API Gateway with IAM authorisation stands in front.
    """
    return server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


def identity_from_query(query: Any) -> Identity:
    """The identity in an endpoint's query parameters; a malformed id is refused."""
    values: dict[str, str | None] = {}
    for parameter, attribute in IDENTITY_PARAMETERS.items():
        value = query.get(parameter) if query is not None else None
        if value is not None and not ID_PATTERN.match(value):
            raise IdentityMissing(f"the endpoint's {parameter} is not a valid identifier")
        values[attribute] = value or None
    return Identity(**values)


def _identity(fixed: Identity | None, ctx: Context) -> Identity:
    if fixed is not None:
        return fixed
    request = ctx.request_context.request
    return identity_from_query(getattr(request, "query_params", None))


def _tool(spec: ToolSpec, client: Any, fixed: Identity | None) -> Tool:
    model = spec.arguments
    arg_model = create_model(f"{model.__name__}Validated", __base__=(model, ArgModelBase))

    async def run(ctx: Context, **arguments: Any) -> CallToolResult:
        try:
            identity = _identity(fixed, ctx)
            args = {k: _plain(v) for k, v in arguments.items()}
            answer = await anyio.to_thread.run_sync(spec.call, client, identity, args)
        except IdentityMissing as exc:
            raise ToolError(str(exc)) from None
        except ApiError as exc:
            raise ToolError(_api_error_text(exc)) from None
        except TransportError as exc:
            raise ToolError(f"agentmem is unreachable: {exc}") from None
        except MemoryClientError as exc:
            raise ToolError(str(exc)) from None
        return _result(answer)

    return Tool(
        fn=run,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        parameters=model.model_json_schema(by_alias=True),
        fn_metadata=FuncMetadata(arg_model=arg_model),
        is_async=True,
        context_kwarg="ctx",
        annotations=ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent or spec.read_only,
            open_world_hint=False,
        ),
    )


def _plain(value: Any) -> Any:
    """Validated arguments back to JSON values (nested models to dicts)."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _api_error_text(exc: ApiError) -> str:
    text = f"{exc.code}: {exc.message}"
    fields = "; ".join(f"{d.get('field')}: {d.get('message')}" for d in exc.details if isinstance(d, dict))
    return f"{text} ({fields})" if fields else text


def _result(answer: Any) -> CallToolResult:
    text = json.dumps(answer, ensure_ascii=False, indent=None)
    structured = answer if isinstance(answer, dict) else None
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)
