"""`agentmem mcp`: agentmem's tools for a desktop MCP client, over stdio."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import click

from agentmem.cli.target import InProcessTransport, Target, target_options
from agentmem.config import ConfigError
from agentmem.domain.ids import ID_PATTERN


def _identifier(_: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not ID_PATTERN.match(value):
        raise click.BadParameter("1-128 characters of A-Z a-z 0-9 . _ : @ -, starting with a letter or digit")
    return value


@click.command(name="mcp")
@click.option("--agent", callback=_identifier, envvar="AGENTMEM_MCP_AGENT",
              help="The agent the tools act for: retrieve_memory, record_run, set_run_output, give_feedback "
                   "and the lesson tools use its memory. Without it those tools answer with an error. "
                   "[env: AGENTMEM_MCP_AGENT]")
@click.option("--user", callback=_identifier, envvar="AGENTMEM_MCP_USER",
              help="The user the tools act for: the profile, facts, turns and unmask tools, and the user's "
                   "context in retrieve_memory. Tools never take a user as an argument, so the model cannot act "
                   "as another user. Without it the user tools answer with an error. [env: AGENTMEM_MCP_USER]")
@click.option("--thread", callback=_identifier, envvar="AGENTMEM_MCP_THREAD", default="mcp", show_default=True,
              help="The conversation thread used when a tool call names none (retrieve_memory's history, "
                   "append_turns, unmask). [env: AGENTMEM_MCP_THREAD]")
@target_options
def mcp(agent: str | None, user: str | None, thread: str, **target: Any) -> None:
    """Serve agentmem as Model Context Protocol tools over stdio (for Claude Desktop, Cursor, ...).

    The tools act on the local data folder in this process (lessons are indexed by a background worker
    here), on a running server with --url, or on a deployed stack with --stack (SigV4-signed with your AWS
    credentials). Register it in an MCP client as the command `agentmem mcp --agent A --user U`.
    Over HTTP the same tools are at /mcp on `agentmem serve` and on a deployed stack's API.
    """
    if agent is None and user is None:
        raise click.UsageError("give --agent, --user or both: the tools act for them")
    # stdout carries the protocol: everything that logs while the backend is built goes to stderr
    # (powertools' handlers keep the stream they were created with).
    with contextlib.redirect_stdout(sys.stderr):
        os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
        client = _client(Target.from_options(target))
        from agentmem.integrations.mcp import Identity, build_server

        server = build_server(client, Identity(agent_id=agent, user_id=user, thread_id=thread))
    try:
        server.run("stdio")
    finally:
        client.close()


def _client(target: Target) -> Any:
    if target.url or target.stack:
        return target.client()
    # Unlike the one-shot operator commands, a long-lived server indexes the lessons it is given.
    from agentmem.client import MemoryClient
    from agentmem.local.server import create_app

    data_dir: Path = target.data_dir.resolve()
    try:
        app = create_app(data_dir, start_worker=True)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    return MemoryClient("http://agentmem.local", transport=InProcessTransport(app))
