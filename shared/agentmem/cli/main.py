"""The `agentmem` command."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

import click

from agentmem import __version__
from agentmem.cli.terminal import AgentmemGroup, progressbar, quiet_third_parties, verbose_option
from agentmem.config import DEFAULT_DATA_DIR, ConfigError

# The evaluation files live beside a clone (../shared/eval/ in CI), never inside the repository.
EVAL_DIR_VARIABLE = "AGENTMEM_EVAL_DIR"
DEFAULT_EVAL_DIR = Path("..") / "shared" / "eval"


@click.group(cls=AgentmemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agentmem")
def cli() -> None:
    """agentmem: persistent, tenant-isolated memory for AI agents.

    Every setting can also come from AGENTMEM_* environment variables or
    agentmem.toml in the data folder (the environment wins).
    """


@cli.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Keep the loopback default unless you put an authenticating proxy in front.",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="TCP port (0 picks a free one and prints it).",
)
@click.option(
    "--data-dir",
    default=str(DEFAULT_DATA_DIR),
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding the SQLite files, vectors, outbox and key file; kept across restarts.",
)
@click.option(
    "--log-level",
    default="INFO",
    show_default=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
    help="Log verbosity.",
)
@verbose_option
def serve(host: str, port: int, data_dir: Path, log_level: str, verbose: bool) -> None:
    """Run the HTTP API locally on the embedded backends (SQLite, in-process vectors, local model)."""
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet_third_parties(verbose)
    import signal

    from agentmem.local.malloc_tuning import limit_arenas
    from agentmem.local.security import UnsafeBind
    from agentmem.local.server import create_app, make_http_server

    limit_arenas()  # before any thread starts: each would otherwise keep freed memory in an arena of its own
    try:
        # The bind is checked before anything starts: no worker, no data file for a refused --host.
        app = create_app(data_dir.resolve(), host=host)
    except (ConfigError, UnsafeBind) as exc:
        raise click.ClickException(str(exc)) from None
    try:
        server = make_http_server(app, host, port)
    except (UnsafeBind, OSError) as exc:
        app.close()
        raise click.ClickException(str(exc)) from None
    # uvicorn stops on SIGTERM, then raises it again: exit through `finally`, so the worker stops cleanly.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    click.echo(
        f"agentmem {__version__} listening on http://{bound_host}:{bound_port} "
        f"(data: {data_dir.resolve()}, tenant: {app.settings.tenant}, "
        f"enabled agents: {', '.join(app.settings.enabled_agents) or 'none'})",
        err=True,
    )
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.close()


def main() -> None:  # pragma: no cover
    cli()


@cli.command()
@click.argument("function")
@click.argument("event_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--data-dir", default=str(DEFAULT_DATA_DIR), show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Local data folder the handler works on (with --backend local).")
@click.option("--backend", type=click.Choice(["local", "moto", "aws"]), default="local", show_default=True,
              help="local: the embedded backends in --data-dir. moto: a throwaway AWS under moto (DynamoDB from "
                   "the synthesised template, KMS, EventBridge, Comprehend). aws: real AWS, configured by "
                   "AGENTMEM_* variables or --stack, with your AWS credentials.")
@click.option("--stack", help="With --backend aws: read the resources from this TenantStack's outputs.")
@click.option("--region", help="AWS region of --stack.")
@click.option("--enable-agent", "enabled", multiple=True,
              help="Agent id to enable memory for during this call (repeatable); adds to AGENTMEM_ENABLED_AGENTS.")
def invoke(
    function: str, event_file: Path, data_dir: Path, backend: str, stack: str | None, region: str | None,
    enabled: tuple[str, ...],
) -> None:
    """Run one Lambda handler on a sam-style EVENT_FILE (like `sam local invoke`) and print its result.

    FUNCTION is a name from functions/catalog.py (retrieve, feedback, indexer, conversations, consolidate,
    service). Example: agentmem invoke retrieve events/retrieve/basic.json --enable-agent brand-auditor
    """
    import contextlib
    import json

    from functions.catalog import FUNCTIONS

    names = [spec.name for spec in FUNCTIONS]
    if function not in names:
        raise click.BadParameter(f"must be one of {', '.join(names)}", param_hint="FUNCTION")
    if stack and backend != "aws":
        raise click.UsageError("--stack goes with --backend aws")
    try:
        event = json.loads(event_file.read_text())
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="EVENT_FILE") from None
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    from agentmem.config import load_settings, reset_settings
    from agentmem.local.lambda_runtime import invoke as run_handler
    from agentmem.wiring import build_services, set_services

    if enabled:
        current = [a for a in os.environ.get("AGENTMEM_ENABLED_AGENTS", "").split(",") if a]
        os.environ["AGENTMEM_ENABLED_AGENTS"] = ",".join(dict.fromkeys([*current, *enabled]))
    backend_context: Any = contextlib.nullcontext({})
    if backend == "local":
        os.environ["AGENTMEM_BACKEND"] = "local"
        os.environ["AGENTMEM_DATA_DIR"] = str(data_dir.resolve())
    elif backend == "moto":
        from agentmem.local.moto_backend import NOT_FROM_MOTO, moto_backend

        click.echo(f"moto: {NOT_FROM_MOTO}", err=True)
        backend_context = moto_backend()
    else:
        os.environ["AGENTMEM_BACKEND"] = "aws"
        if stack:
            from agentmem.cli.target import stack_settings

            os.environ.update(stack_settings(stack, region))
    with backend_context as ports:
        reset_settings()
        try:
            settings = load_settings()
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None
        services = build_services(settings, **ports)
        set_services(services)
        try:
            result = run_handler(function, event)
        finally:
            set_services(None)
            services.close()
    click.echo(json.dumps(result, indent=2, default=str))


@cli.group(name="eval")
def eval_group() -> None:
    """Measure agentmem on public evaluation data (PII detection, LoCoMo recall)."""


def _eval_file(path: Path | None, name: str) -> Path:
    """PATH, or NAME in $AGENTMEM_EVAL_DIR (default ../shared/eval/, beside the clone as in CI)."""
    folder = Path(os.environ.get(EVAL_DIR_VARIABLE) or DEFAULT_EVAL_DIR)
    chosen = path if path is not None else folder / name
    if not chosen.is_file():
        how = "" if path is not None else (f" (the default: {name} in ${EVAL_DIR_VARIABLE}, else {DEFAULT_EVAL_DIR}/)")
        raise click.ClickException(
            f"{chosen} not found{how}: give the file as PATH or set {EVAL_DIR_VARIABLE} to the folder holding {name} "
            f"(../shared/eval/ beside the clone in CI)"
        )
    return chosen


@eval_group.command(name="pii")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help='Print one JSON object {"by_type": {TYPE: {...}}}.')
@click.option("--split", is_flag=True,
              help="Also score the file's two halves by record index (A: even, B: odd), to see whether a "
                   "change generalises beyond the half it was developed on.")
@click.option("--detector", type=click.Choice(["local", "regex"]), default="local", show_default=True,
              help="The local backend's full detector (structured rules and Presidio over spaCy), or the "
                   "structured rules alone.")
@click.option("--min-precision", "min_precision", multiple=True, metavar="TYPE=FRACTION",
              help="Fail (exit 1) when TYPE's precision on the whole file is below FRACTION; TYPE `overall` "
                   "pools every type. Repeatable.")
@click.option("--min-recall", "min_recall", multiple=True, metavar="TYPE=FRACTION",
              help="Fail (exit 1) when TYPE's recall on the whole file is below FRACTION. Repeatable.")
@verbose_option
def eval_pii(path: Path | None, as_json: bool, split: bool, detector: str,
             min_precision: tuple[str, ...], min_recall: tuple[str, ...], verbose: bool) -> None:
    """Precision and recall per entity type of the local PII detector on a Presidio-format file.

    PATH is a JSON list of {"full_text", "spans": [{"entity_type", "start_position", "end_position"}]};
    without it, pii-dev.json in $AGENTMEM_EVAL_DIR, else ../shared/eval/ (beside the clone, as in CI).
    Each type with a target is marked met or MISSED; gold DOMAIN_NAME is scored as URL and GPE as LOCATION.
    With --min-precision / --min-recall it is a quality gate.
    """
    import json

    quiet_third_parties(verbose)
    path = _eval_file(path, "pii-dev.json")

    from agentmem.adapters.local.pii_regex import RegexPiiDetector
    from agentmem.eval.floors import parse_floor, pii_shortfalls
    from agentmem.eval.pii import TARGETS, evaluate_detector, format_table, load_records, split_records

    try:
        precision_floors = dict(parse_floor(text) for text in min_precision)
        recall_floors = dict(parse_floor(text) for text in min_recall)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    try:
        records = load_records(path)
    except (ValueError, OSError) as exc:
        raise click.ClickException(f"{path}: not a Presidio-format file ({str(exc).splitlines()[0]})") from None
    if detector == "local":
        from agentmem.adapters.local.presidio_pii import LocalPiiDetector

        chosen: Any = LocalPiiDetector()
    else:
        chosen = RegexPiiDetector()
    parts: dict[str, list[Any]] = {"all": list(records)}
    if split:
        parts["A"], parts["B"] = split_records(records)
    results = {}
    for name, part in parts.items():
        with progressbar(part, label=f"Scoring {name} ({len(part)} records)") as bar:
            results[name] = evaluate_detector(chosen, bar)
    if as_json:
        click.echo(json.dumps(results["all"] if not split else results, indent=2))
    else:
        for name, result in results.items():
            if split:
                click.echo(f"\n{name} ({len(parts[name])} records)")
            click.echo(format_table(result, TARGETS))
        click.echo("(gold DOMAIN_NAME is scored as URL, GPE as LOCATION)")
    _judge_floors(pii_shortfalls(results["all"], precision_floors, recall_floors),
                  len(precision_floors) + len(recall_floors))


def _judge_floors(shortfalls: list[str], floors: int) -> None:
    """After an eval's table: exit 1 naming every figure below its floor (on stderr, so --json stays JSON)."""
    if shortfalls:
        raise click.ClickException("below the floor: " + "; ".join(shortfalls))
    if floors:
        click.echo(f"all {floors} floors met", err=True)


@cli.command()
@click.option("--url", help="Use a running agentmem at this URL instead of starting one in a temporary folder. "
                            "The agents brand-auditor (and copy-editor with --batch) must be enabled there.")
@click.option("--token", envvar="AGENTMEM_API_TOKEN", help="Bearer token of that local server, if it needs one.")
@click.option("--batch", is_flag=True,
              help="Also audit articles never given feedback, and let another agent audit them too.")
@click.option("--llm", type=click.Choice(["auto", "none", "bedrock", "openai"]), default="auto", show_default=True,
              help="Who audits: a model on an OpenAI-compatible endpoint (AGENTMEM_OPENAI_BASE_URL and "
                   "AGENTMEM_OPENAI_MODEL), Bedrock Converse (AGENTMEM_LLM_MODEL_ID), or the rule-based auditor "
                   "(none). auto takes the first of these that is configured.")
@verbose_option
def demo(url: str | None, token: str | None, batch: bool, llm: str, verbose: bool) -> None:
    """The Brand Voice Audit: feedback on a few runs, and the next runs flag less.

    Ends with the line `flags: BEFORE -> AFTER`.
    """
    import contextlib

    from agentmem.client import MemoryClient
    from agentmem.demo.runner import AUDITOR, OTHER_AGENT, local_service
    from agentmem.demo.runner import demo as run_demo

    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    logging.basicConfig(level=logging.WARNING)
    quiet_third_parties(verbose)
    llm_call = _demo_llm(llm)
    service = contextlib.nullcontext(url) if url else local_service([AUDITOR, OTHER_AGENT])
    with service as base_url:
        # A generous read timeout: on a busy machine the first calls wait for the models to load.
        client = MemoryClient(base_url, token=token, timeout=(5, 120))
        before, after = run_demo(client, batch=batch, llm=llm_call, say=click.echo)
    click.echo(f"flags: {before} -> {after}")


def _demo_llm(kind: str):  # type: ignore[no-untyped-def]
    """The demo agent's model: Bedrock Converse or an OpenAI-compatible endpoint, from the settings."""
    from agentmem.config import get_settings
    from agentmem.wiring import build_llm

    settings = get_settings()
    if kind == "auto":
        kind = ("openai" if settings.openai_base_url and settings.openai_model
                else "bedrock" if settings.llm_model_id else "none")
    if kind == "none":
        return None
    if kind == "bedrock" and not settings.llm_model_id:
        raise click.ClickException("--llm bedrock needs AGENTMEM_LLM_MODEL_ID (a Bedrock Converse model id)")
    if kind == "openai" and not (settings.openai_base_url and settings.openai_model):
        raise click.ClickException("--llm openai needs AGENTMEM_OPENAI_BASE_URL and AGENTMEM_OPENAI_MODEL")
    if kind == "bedrock":
        settings = settings.model_copy(update={"openai_base_url": None})
    llm = build_llm(settings)
    return lambda messages: llm.complete(
        "\n\n".join(m["content"] for m in messages if m["role"] == "system"),
        [m for m in messages if m["role"] != "system"],
        max_tokens=800,
    )


@eval_group.command(name="locomo")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help='Print one JSON object {"overall": {"5": r, ...}, "by_category": {...}} (recall as a fraction).')
@click.option("--vector-only", is_flag=True,
              help="The turn search without its keyword side, to measure what the keyword side is worth "
                   "(the S3 Vectors mode's own figure: scripts/eval_locomo_s3vectors.py).")
@click.option("--library", is_flag=True,
              help="Measure the turn search library alone (no API, no masking, no retrieve), for comparison.")
@click.option("--retriever", type=click.Choice(["hybrid", "dense", "lexical"]), default="hybrid", show_default=True,
              help="With --library: the hybrid search, or one of its two indexes alone.")
@click.option("--min-recall-at", "min_recall_at", multiple=True, metavar="K=PERCENT",
              help="Fail (exit 1) when the overall recall@K is below PERCENT (as the table prints it); "
                   "K from 1 to 50. Repeatable.")
@click.option("--conversations", "conversation_ids", default=None, metavar="ID,ID",
              help="Only these conversations (sample ids, comma-separated), e.g. conv-26,conv-30.")
@click.option("--folds", type=click.IntRange(min=2), default=None,
              help="Cross-validation: split the conversations into this many folds (every FOLDS-th one).")
@click.option("--fold", type=click.IntRange(min=1), default=None,
              help="With --folds: measure this fold only (1 to FOLDS), the conversations reported on.")
@click.option("--tuning-side", is_flag=True,
              help="With --folds/--fold: measure the other folds instead, the conversations tuned on.")
@verbose_option
def eval_locomo(path: Path | None, as_json: bool, vector_only: bool, library: bool, retriever: str,
                min_recall_at: tuple[str, ...], conversation_ids: str | None, folds: int | None,
                fold: int | None, tuning_side: bool, verbose: bool) -> None:
    """Recall@5/10/25/50 of `retrieve`'s recalled turns on a LoCoMo file, per category and overall.

    Each conversation is ingested through the HTTP API as a new user would (one thread per session,
    turns appended in order, indexing awaited), each question asked with `retrieve` in a new thread
    (recallK 50, tokenBudget 32000); recall is the share of a question's evidence turns among the top
    k recalled, as in the LoCoMo paper. Also prints tokens per answer and retrieve latency p50/p95.
    Without PATH: locomo-dev.json in $AGENTMEM_EVAL_DIR, else ../shared/eval/ (beside the clone, as in CI).
    With --min-recall-at it is a quality gate.
    """
    import json

    quiet_third_parties(verbose)
    path = _eval_file(path, "locomo-dev.json")
    from agentmem.eval.locomo import fold_conversations, load_samples

    try:
        sample_ids = [str(sample.get("sample_id", "")) for sample in load_samples(path)]
    except (ValueError, OSError, AttributeError) as exc:
        raise click.ClickException(f"{path}: not a LoCoMo file ({str(exc).splitlines()[0]})") from None
    chosen: list[str] | None = None
    if conversation_ids is not None:
        chosen = [part.strip() for part in conversation_ids.split(",") if part.strip()]
        unknown = sorted(set(chosen) - set(sample_ids))
        if unknown:
            raise click.BadParameter(f"not in {path.name}: {', '.join(unknown)}", param_hint="--conversations")
    if (folds is None) != (fold is None) or (tuning_side and folds is None):
        raise click.UsageError("--folds and --fold go together (and --tuning-side needs both)")
    if folds is not None and fold is not None:
        if chosen is not None:
            raise click.UsageError("give --conversations or --folds/--fold, not both")
        try:
            held_out = fold_conversations(sample_ids, folds, fold)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--fold") from None
        chosen = [i for i in sample_ids if i not in held_out] if tuning_side else held_out

    from agentmem.eval.floors import locomo_shortfalls, parse_floor
    from agentmem.eval.locomo import KS, evaluate, format_table

    try:
        floors = {int(k): floor for k, floor in (parse_floor(text, key_is_int=True) for text in min_recall_at)}
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--min-recall-at") from None
    if any(not 1 <= k <= 50 for k in floors):
        raise click.BadParameter("K must be from 1 to 50", param_hint="--min-recall-at")
    ks = sorted({*KS, *floors})
    if library:
        result = evaluate(path, retriever=retriever, ks=ks, conversations=chosen)  # type: ignore[arg-type]
        click.echo(json.dumps(result, indent=2) if as_json else format_table(result))
    else:
        from agentmem.eval.locomo_api import evaluate_through_api, format_extras

        # Minutes on the whole file.
        with progressbar(length=1, label="Ingesting and asking, conversation by conversation") as bar:
            def advance(done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)

            result = evaluate_through_api(
                path, keyword_side=not vector_only, ks=ks, conversations=chosen, progress=advance
            )
        click.echo(json.dumps(result, indent=2) if as_json else format_table(result) + "\n" + format_extras(result))
    _judge_floors(locomo_shortfalls(result, floors), len(floors))


def _register_operator_commands() -> None:
    from agentmem.cli.config_command import config
    from agentmem.cli.mcp import mcp
    from agentmem.cli.operate import COMMANDS
    from agentmem.cli.runs import runs
    from agentmem.cli.users import users
    from agentmem.cli.wall import wall

    for command in (*COMMANDS, runs, wall, config, mcp, users):
        cli.add_command(command)


_register_operator_commands()
