"""agentmem inside agent frameworks: an MCP server, Strands, LangGraph and the OpenAI Agents SDK.

Each integration is an optional extra (`pip install 'tenantmem[mcp]'`, `[strands]`, `[langgraph]`,
`[openai-agents]`) and is imported only when used: nothing here imports a framework at package import.
Every integration talks to agentmem through `MemoryClient` (a running server, a deployed stack, or the
local data folder in-process), so each one works against any of the three.
"""
