"""agentmem as Model Context Protocol tools (the `mcp` extra): `agentmem mcp`, /mcp on `agentmem serve` and in AWS."""

from agentmem.integrations.mcp.server import build_server, identity_from_query, streamable_http_app
from agentmem.integrations.mcp.tools import TOOLS, Identity

__all__ = ["TOOLS", "Identity", "build_server", "identity_from_query", "streamable_http_app"]
