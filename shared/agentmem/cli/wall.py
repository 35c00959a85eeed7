"""`agentmem wall`: open the Memory Learning Wall of a deployed stack without exposing anything publicly."""

from __future__ import annotations

import logging
import sys

import click


@click.command()
@click.option("--stack", help="Tenant stack name; its ApiUrl output is the API to show.")
@click.option("--url", help="The API's URL instead of --stack (an execute-api URL or a custom domain).")
@click.option("--region", help="AWS region of the stack (default: the URL's, then your AWS configuration).")
@click.option("--profile", help="AWS named profile whose credentials read the stack and sign requests.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Loopback address to listen on (127.0.0.1, ::1 or localhost); any other address is refused.",
)
@click.option(
    "--port",
    default=8766,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="TCP port (0 picks a free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the wall in the default web browser.")
@click.option(
    "--log-level",
    default="WARNING",
    show_default=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
    help="Log verbosity (INFO logs each request's method, path and status).",
)
def wall(
    stack: str | None,
    url: str | None,
    region: str | None,
    profile: str | None,
    host: str,
    port: int,
    open_browser: bool,
    log_level: str,
) -> None:
    """Serve the Memory Learning Wall for a deployed stack on this machine.

    A loopback-only proxy serves the page and forwards its API calls to the stack, signed with
    your AWS credentials (SigV4), so the stack needs no public dashboard or extra login. Open the
    printed link: it carries a one-time token that keeps other local programs and web pages from
    using your credentials through the proxy. (For `agentmem serve`, the wall is at /wall.)

    Example: agentmem wall --stack agentmem-acme --region eu-west-1
    """
    from agentmem.local.wall_proxy import (
        NotLoopback,
        ensure_loopback,
        make_proxy_server,
        proxy_for_stack,
        proxy_for_url,
        wall_url,
    )

    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if (stack is None) == (url is None):
        raise click.UsageError("give exactly one of --stack NAME or --url URL")
    try:
        ensure_loopback(host)
    except NotLoopback as exc:
        raise click.BadParameter(str(exc), param_hint="--host") from None
    try:
        proxy = proxy_for_stack(stack, region, profile=profile) if stack else proxy_for_url(str(url), region,
                                                                                            profile=profile)
    except Exception as exc:  # botocore's errors (no credentials, unknown stack, expired SSO) all end here
        raise click.ClickException(f"cannot reach {'stack ' + repr(stack) if stack else url}: {exc}") from None
    try:
        server = make_proxy_server(proxy, host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from None
    link = wall_url(server, proxy.token)
    click.echo(f"Memory Learning Wall for {stack or url} ({proxy.upstream})", err=True)
    click.echo(f"  {link}", err=True)
    click.echo("Requests are signed with your AWS credentials; only this machine can connect. Ctrl+C stops.", err=True)
    sys.stderr.flush()
    if open_browser:
        import webbrowser

        webbrowser.open(link)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
