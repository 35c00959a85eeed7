"""Operators' commands: memories, profiles, erasure, reindexing, export and import."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import click

from agentmem.cli.target import Target, data_target_options, target_options
from agentmem.cli.terminal import progressbar


def _fail_on_api_errors(call: Any) -> Any:
    from agentmem.client.errors import ApiError, TransportError

    try:
        return call()
    except ApiError as exc:
        details = "".join(f"\n  - {d.get('field')}: {d.get('message')}" for d in (exc.details or []))
        raise click.ClickException(f"{exc.status} {exc.code}: {exc.message}{details}") from None
    except TransportError as exc:
        raise click.ClickException(str(exc)) from None


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, default=str, ensure_ascii=False))


# memories


@click.group()
def memories() -> None:
    """List, mark and delete an agent's lessons (the Memory Learning Wall, on the command line)."""


@memories.command(name="list")
@click.argument("agent_id")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True, help="At most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@target_options
def memories_list(agent_id: str, limit: int, as_json: bool, **target: Any) -> None:
    """AGENT_ID's lessons, newest first."""
    client = Target.from_options(target).client()
    items = _fail_on_api_errors(lambda: list(itertools.islice(client.iter_memories(agent_id), limit)))
    if as_json:
        _echo_json([m.model_dump(by_alias=True, mode="json") for m in items])
        return
    for m in items:
        thumb = "👍" if m.rating == "up" else "👎"
        comment = (m.comment or "").replace("\n", " ")[:70]
        click.echo(f"{m.memory_id}  {thumb}  x{m.importance:<4g} injected {m.injected_count or 0:>3}  {comment}")
    click.echo(f"{len(items)} lesson(s)", err=True)


@memories.command(name="mark")
@click.argument("agent_id")
@click.argument("memory_id")
@click.argument("importance")
@target_options
def memories_mark(agent_id: str, memory_id: str, importance: str, **target: Any) -> None:
    """Set a lesson's IMPORTANCE: important, unimportant, neutral, or a multiplier in [0, 2]."""
    value: str | float = importance
    if importance not in {"important", "unimportant", "neutral"}:
        try:
            value = float(importance)
        except ValueError:
            raise click.BadParameter("important, unimportant, neutral or a number", param_hint="IMPORTANCE") from None
    client = Target.from_options(target).client()
    memory = _fail_on_api_errors(lambda: client.set_importance(agent_id, memory_id, value))
    click.echo(f"{memory.memory_id}: importance {memory.importance:g}")


@memories.command(name="delete")
@click.argument("agent_id")
@click.argument("memory_id")
@target_options
def memories_delete(agent_id: str, memory_id: str, **target: Any) -> None:
    """Delete a lesson; it is never retrieved again."""
    client = Target.from_options(target).client()
    _fail_on_api_errors(lambda: client.delete_memory(agent_id, memory_id))
    click.echo(f"{memory_id}: deleted")


# profile


@click.group()
def profile() -> None:
    """Show, edit and restore a user's Markdown profile."""


@profile.command(name="show")
@click.argument("user_id")
@click.option("--json", "as_json", is_flag=True, help="Print the whole answer as JSON.")
@target_options
def profile_show(user_id: str, as_json: bool, **target: Any) -> None:
    """Print USER_ID's profile (frontmatter and body)."""
    client = Target.from_options(target).client()
    view = _fail_on_api_errors(lambda: client.get_profile(user_id))
    if as_json:
        _echo_json(view.model_dump(by_alias=True, mode="json"))
    else:
        click.echo(view.markdown)


@profile.command(name="edit")
@click.argument("user_id")
@click.option("--file", "source", type=click.File("r"),
              help="Read the new profile from this file ('-' for stdin) instead of opening $EDITOR.")
@target_options
def profile_edit(user_id: str, source: Any, **target: Any) -> None:
    """Edit USER_ID's profile; refused (409) if it changed meanwhile."""
    client = Target.from_options(target).client()
    view = _fail_on_api_errors(lambda: client.get_profile(user_id))
    text = source.read() if source else click.edit(view.markdown, extension=".md")
    if text is None or text == view.markdown:
        click.echo("no change")
        return
    updated = _fail_on_api_errors(lambda: client.put_profile(user_id, text, if_match=view.version))
    click.echo(f"profile of {user_id}: version {updated.version}")


@profile.command(name="versions")
@click.argument("user_id")
@target_options
def profile_versions(user_id: str, **target: Any) -> None:
    """List USER_ID's profile versions, newest first."""
    client = Target.from_options(target).client()
    for v in _fail_on_api_errors(lambda: client.profile_versions(user_id)):
        click.echo(json.dumps(v.model_dump(by_alias=True, mode="json", exclude={"markdown"}), default=str))


@profile.command(name="restore")
@click.argument("user_id")
@click.argument("version", type=int)
@target_options
def profile_restore(user_id: str, version: int, **target: Any) -> None:
    """Make an old VERSION of USER_ID's profile the current one (as a new version)."""
    client = Target.from_options(target).client()
    restored = _fail_on_api_errors(lambda: client.restore_profile(user_id, version))
    click.echo(f"profile of {user_id}: version {restored.version} (restored from {version})")


# erase


@click.command()
@click.argument("user_id", required=False)
@click.option(
    "--agent", "agent_id", default=None,
    help="Instead of a user: destroy the vault of this agent's runs made without a userId.",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@target_options
def erase(user_id: str | None, agent_id: str | None, yes: bool, **target: Any) -> None:
    """Erase USER_ID: data keys destroyed first, then transcripts, profile, facts, runs and vault.

    With --agent AGENT_ID instead, the personal data of that agent's runs made without a userId
    (masked with the agent's own vault subject) becomes unrecoverable: its data key and vault go.
    """
    if (user_id is None) == (agent_id is None):
        raise click.UsageError("give a USER_ID or --agent AGENT_ID (one of them)")
    what = f"every trace of {user_id}" if user_id else f"the personal data of {agent_id}'s runs without a user"
    if not yes:
        click.confirm(f"Erase {what}? This cannot be undone", abort=True)
    client = Target.from_options(target).client()
    if user_id is not None:
        _fail_on_api_errors(lambda: client.erase_user(user_id))
        click.echo(f"{user_id}: erased")
    else:
        _fail_on_api_errors(lambda: client.erase_agent_personal_data(agent_id))
        click.echo(f"{agent_id}: personal data of runs without a user erased")


# reindex, export, import


@click.command()
@click.option("--agent", "agents", multiple=True, help="Only this agent (repeatable); default: every agent.")
@click.option("--turns", is_flag=True,
              help="Re-index every user's stored turns for recall instead (after the turn search's indexed "
                   "text or the embedding model changed; a data folder from an older agentmem).")
@data_target_options
def reindex(agents: tuple[str, ...], turns: bool, **target: Any) -> None:
    """Rebuild the vector index from the record store: embed every live lesson again and index it."""
    from agentmem.service.maintenance import iter_lessons, reindex_lessons, reindex_turns

    services = Target.from_options(target).services()
    if turns:
        if agents:
            raise click.UsageError("--turns re-indexes users' turns: it takes no --agent")
        if services.turn_recall is None:
            raise click.ClickException("this target has no turn recall")
        done = reindex_turns(services.conversations, services.turn_recall)
        click.echo(f"reindexed {done.turns} turn(s) in {done.threads} thread(s) of {done.users} user(s)")
        return
    memory = services.memory
    chosen = list(agents) or memory.store.list_agents_with_memories(memory.tenant)
    total = sum(1 for agent in chosen for _ in iter_lessons(memory, agent))
    with progressbar(length=total, label="Re-indexing lessons") as bar:
        report = reindex_lessons(memory, chosen, progress=bar.update)
    for agent, count in sorted(report.by_agent.items()):
        click.echo(f"{agent}: {count} lesson(s)")
    click.echo(f"reindexed {report.indexed} lesson(s) of {report.agents} agent(s)")


@click.command(name="export")
@click.option("--agent", "agent_id", help="Export this agent's lessons (with the runs that taught them).")
@click.option("--user", "user_id", help="Export this user's memory: profile, facts and masked transcripts.")
@click.option("--thread", "threads", multiple=True, help="With --user: a thread whose turns to include (repeatable).")
@click.option("-o", "--output", type=click.File("w"), default="-", show_default=True, help="JSON Lines file.")
@data_target_options
def export(agent_id: str | None, user_id: str | None, threads: tuple[str, ...], output: Any, **target: Any) -> None:
    """Write an agent's or a user's memory as JSON Lines."""
    if bool(agent_id) == bool(user_id):
        raise click.UsageError("give exactly one of --agent and --user")
    services = Target.from_options(target).services()
    if agent_id:
        from agentmem.service.maintenance import export_lessons

        records = export_lessons(services.memory, agent_id)
    else:
        from agentmem.service.user_export import export_user

        records = export_user(services, user_id or "", threads)
    count = 0
    for record in records:
        output.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        count += 1
    click.echo(f"exported {count - 1} record(s)", err=True)


@click.command(name="import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@data_target_options
def import_(path: Path, **target: Any) -> None:
    """Load a JSON Lines file written by `agentmem export` (same ids: importing twice adds nothing)."""
    from agentmem.domain.errors import InvalidInput

    lines = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise click.ClickException(
                f"{path}, line {number}: not JSON ({exc.msg}); give a file written by `agentmem export`"
            ) from None
    header = lines[0] if lines else {}
    if not isinstance(header, dict) or not all(isinstance(line, dict) for line in lines):
        raise click.ClickException(
            f"{path}: every line must be a JSON object; give a file written by `agentmem export`"
        )
    services = Target.from_options(target).services()
    try:
        if str(header.get("format", "")).startswith("agentmem.lessons"):
            from agentmem.service.maintenance import import_lessons

            # Each new lesson is embedded and indexed as it is stored: seconds for a few hundred.
            with progressbar(lines, label=f"Importing {len(lines) - 1} lesson(s)") as bar:
                created, existing = import_lessons(services.memory, bar)
            click.echo(f"imported {created} lesson(s); {existing} already present")
        elif str(header.get("format", "")).startswith("agentmem.user"):
            from agentmem.service.user_export import import_user

            click.echo(import_user(services, lines))
        else:
            raise click.ClickException(f"{path}: not an agentmem export (no format header)")
    except InvalidInput as exc:
        raise click.ClickException(f"{path}: {exc.message}") from None


@click.command()
@click.option("--user", "user_id", help="Only this user's data keys (default: every user of the tenant).")
@click.option("--rotate-local-key", is_flag=True,
              help="Locally: first add a new key-encryption key to the data folder's key file, then re-wrap "
                   "under it (old KEKs keep unwrapping until everything is re-wrapped).")
@data_target_options
def rewrap(user_id: str | None, rotate_local_key: bool, **target: Any) -> None:
    """Re-wrap users' data keys under the current key-encryption key (KMS key or the local key file).

    KMS key rotation needs no re-encryption; this is for moving every wrapped data key onto the newest key
    material (KMS ReEncrypt, or the local KEK after --rotate-local-key). No PII value is re-encrypted.
    """
    services = Target.from_options(target).services()
    if rotate_local_key:
        if services.settings.backend != "local":
            raise click.UsageError("--rotate-local-key is for a local data folder; rotate the KMS key in AWS")
        kek_id = services.conversations.keys.rotate()
        click.echo(f"new key-encryption key {kek_id}")
    count = services.conversations.rewrap_data_keys(user_id)
    click.echo(f"re-wrapped {count} data key(s)")


@click.command()
@click.option("--limit", type=click.IntRange(1, 100_000), default=1000, show_default=True,
              help="At most this many events.")
@data_target_options
def redrive(limit: int, **target: Any) -> None:
    """Send events that exhausted their retries back to their consumers (after fixing the cause).

    Locally: the outbox's dead events. With --stack: each consumer's dead-letter queue back to the consumer's
    queue, and the tenant bus's dead-letter queue back onto the bus.
    """
    chosen = Target.from_options(target)
    if chosen.stack:
        import boto3

        from agentmem.adapters.aws.dlq_redrive import redrive_dead_letters, redrive_to_queue
        from agentmem.adapters.aws.eventbridge_bus import EventBridgeBus
        from agentmem.cli.target import stack_outputs
        from functions.catalog import FUNCTIONS

        outputs = stack_outputs(chosen.stack, chosen.region)
        sqs = boto3.client("sqs", region_name=chosen.region)
        for spec in FUNCTIONS:
            queue_output, dead_letter_output = spec.queue_outputs
            if not spec.consumes or dead_letter_output not in outputs:
                continue
            moved = redrive_to_queue(sqs, outputs[dead_letter_output], outputs[queue_output], limit=limit)
            click.echo(f"{spec.name}: moved {moved.redriven} event(s) back to its queue"
                       + (f"; {len(moved.failed)} not sent (left in its dead-letter queue)" if moved.failed else ""))
        report = redrive_dead_letters(sqs, outputs["DlqUrl"], EventBridgeBus(outputs["EventBusName"]), limit=limit)
        click.echo(f"bus: redrove {report.redriven} event(s); {report.unreadable} unreadable message(s) left in the "
                   f"queue; {len(report.failed)} failed to publish (left in the queue)")
        return
    bus = chosen.services().memory.bus
    click.echo(f"redrove {bus.redrive_dead()} dead event(s); the worker of `agentmem serve` delivers them")


COMMANDS = (memories, profile, erase, reindex, export, import_, rewrap, redrive)
