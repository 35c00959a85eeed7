"""`agentmem users`: the tenant's users, a user's threads, searching a user's memory, correcting a fact."""

from __future__ import annotations

import itertools
from typing import Any

import click

from agentmem.cli.operate import _echo_json, _fail_on_api_errors
from agentmem.cli.target import Target, target_options

KINDS = ("facts", "turns", "items")


@click.group()
def users() -> None:
    """List users and their threads, search a user's memory, correct a fact."""


@users.command(name="list")
@click.option("--prefix", default="", help="Only users whose id starts with this.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=100, show_default=True, help="At most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of one id per line.")
@target_options
def users_list(prefix: str, limit: int, as_json: bool, **target: Any) -> None:
    """The tenant's users, by id (a user is listed from their first turn until erased)."""
    client = Target.from_options(target).client()
    found = _fail_on_api_errors(
        lambda: list(itertools.islice(client.iter_users(prefix=prefix or None, page_size=min(limit, 200)), limit))
    )
    if as_json:
        _echo_json([u.model_dump(by_alias=True, mode="json") for u in found])
        return
    for user in found:
        click.echo(user.user_id)
    click.echo(f"{len(found)} user(s)", err=True)


@users.command(name="threads")
@click.argument("user_id")
@click.option("--limit", type=click.IntRange(1, 100_000), default=100, show_default=True, help="At most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@target_options
def users_threads(user_id: str, limit: int, as_json: bool, **target: Any) -> None:
    """USER_ID's threads, newest activity first."""
    client = Target.from_options(target).client()
    found = _fail_on_api_errors(
        lambda: list(itertools.islice(client.iter_threads(user_id, page_size=min(limit, 200)), limit))
    )
    if as_json:
        _echo_json([t.model_dump(by_alias=True, mode="json") for t in found])
        return
    for thread in found:
        when = thread.last_activity_at.isoformat() if thread.last_activity_at else "-"
        click.echo(f"{thread.thread_id}  {thread.turn_count:>5} turn(s)  last {when}")


@users.command(name="search")
@click.argument("user_id")
@click.argument("query")
@click.option("--kind", "kinds", type=click.Choice(KINDS), multiple=True,
              help="Search only this part of the memory (repeatable); default: all three.")
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True, help="At most this many per kind.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole answer as JSON.")
@target_options
def users_search(user_id: str, query: str, kinds: tuple[str, ...], limit: int, as_json: bool, **target: Any) -> None:
    """USER_ID's facts, recalled turns and items most like QUERY (masked; no run is recorded)."""
    client = Target.from_options(target).client()
    found = _fail_on_api_errors(
        lambda: client.search_user(user_id, query, limit=limit, kinds=list(kinds) if kinds else None)  # type: ignore[arg-type]
    )
    if as_json:
        _echo_json(found.model_dump(by_alias=True, mode="json"))
        return
    for fact in found.facts:
        click.echo(f"fact  {fact.score or 0:.3f}  {fact.fact_id}  {fact.text}")
    for turn in found.turns:
        click.echo(f"turn  {turn.score:.3f}  {turn.thread_id}#{turn.seq}  {turn.role}: {turn.content[:100]}")
    for item in found.items:
        click.echo(f"item  {item.score or 0:.3f}  {'.'.join(item.namespace)}/{item.key}")
    if found.degraded:
        click.echo(f"degraded: {', '.join(found.degraded)}", err=True)


@users.command(name="edit-fact")
@click.argument("user_id")
@click.argument("fact_id")
@click.argument("text")
@target_options
def users_edit_fact(user_id: str, fact_id: str, text: str, **target: Any) -> None:
    """Correct FACT_ID of USER_ID to read TEXT (personal data in it is masked like a turn's)."""
    client = Target.from_options(target).client()
    fact = _fail_on_api_errors(lambda: client.update_fact(user_id, fact_id, text))
    click.echo(f"{fact.fact_id}  {fact.text}")
