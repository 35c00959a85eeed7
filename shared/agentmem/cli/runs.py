"""`agentmem runs`: an agent's runs, and the queue of those awaiting an editor's verdict."""

from __future__ import annotations

import itertools
from typing import Any

import click

from agentmem.cli.operate import _echo_json, _fail_on_api_errors
from agentmem.cli.target import Target, target_options

VERDICT_MARK = {"up": "👍", "down": "👎", None: "··"}


@click.group()
def runs() -> None:
    """An agent's runs: the editors' review queue on the command line (the wall's Runs tab)."""


@runs.command(name="list")
@click.argument("agent_id")
@click.option("--feedback", "verdict", type=click.Choice(["none", "up", "down", "any"]), default="any",
              show_default=True, help="none: awaiting a verdict; up/down: by the newest feedback's rating.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True, help="At most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@target_options
def runs_list(agent_id: str, verdict: str, limit: int, as_json: bool, **target: Any) -> None:
    """AGENT_ID's runs, newest first (inputs and outputs masked, as stored, cut to snippets)."""
    client = Target.from_options(target).client()
    page_size = min(limit, 100)
    items = _fail_on_api_errors(
        lambda: list(itertools.islice(client.iter_runs(agent_id, feedback=verdict, page_size=page_size), limit))
    )
    if as_json:
        _echo_json([r.model_dump(by_alias=True, mode="json") for r in items])
        return
    for r in items:
        when = r.created_at.strftime("%Y-%m-%d %H:%M") if r.created_at else "?"
        text = r.input.replace("\n", " ")[:60]
        injected = f"{len(r.injected_memory_ids)} injected" if r.injected_memory_ids else ""
        click.echo(f"{r.run_id}  {VERDICT_MARK[r.verdict]}  {when}  {injected:<11} {text}")
    noun = "run" if len(items) == 1 else "runs"
    click.echo(f"{len(items)} {noun}" + (" awaiting a verdict" if verdict == "none" else ""), err=True)
