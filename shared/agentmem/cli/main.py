"""The `agentmem` command."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from agentmem import __version__
from agentmem.config import DEFAULT_DATA_DIR, ConfigError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
def serve(host: str, port: int, data_dir: Path, log_level: str) -> None:
    """Run the HTTP API locally on the embedded backends (SQLite, in-process vectors, local model)."""
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from agentmem.local.server import create_app, make_http_server

    try:
        app = create_app(data_dir.resolve())
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    server = make_http_server(app, host, port)
    bound_host, bound_port = server.server_address[:2]
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
