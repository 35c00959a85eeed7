"""What the terminal shows: one line for every user error, no third-party noise unless --verbose,
and a progress bar on a terminal only.

A user error (no AWS region, no credentials, a stack that cannot be read, an answer of the API,
a file that is not what it should be) ends the command with one line saying what to do, never
with a traceback. A bug still shows its traceback: it is not the user's to fix.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

# Libraries whose warnings (Presidio's "Entity ORDINAL is not mapped", spaCy's, botocore's) say nothing
# a user of agentmem can act on.
THIRD_PARTY_LOGGERS = ("presidio-analyzer", "presidio_analyzer", "spacy", "faker", "botocore", "boto3", "urllib3",
                       "opensearch", "mcp", "httpx", "strands", "tokenizers")


def user_error_message(exc: BaseException) -> str | None:
    """The one line a user error ends with; None for anything that is not one (a bug keeps its traceback)."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
        ProfileNotFound,
    )

    from agentmem.client.errors import ApiError, MemoryClientError, MissingCredentials, MissingRegion

    if isinstance(exc, NoRegionError | MissingRegion):
        return "no AWS region: give --region or set AWS_DEFAULT_REGION (or a region in ~/.aws/config)"
    if isinstance(exc, NoCredentialsError | PartialCredentialsError | MissingCredentials):
        return (f"{_first_line(exc)}: configure AWS credentials (aws configure, AWS_PROFILE or "
                "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY), or use --url or --data-dir")
    if isinstance(exc, ProfileNotFound):
        return f"{_first_line(exc)}: check AWS_PROFILE or --profile against ~/.aws/config"
    if isinstance(exc, ClientError):
        return f"AWS refused the call: {_first_line(exc)}"
    if isinstance(exc, BotoCoreError):
        return f"AWS call failed: {_first_line(exc)}"
    if isinstance(exc, ApiError):
        return f"{exc.status} {exc.code}: {exc.message}"
    if isinstance(exc, MemoryClientError):
        return _first_line(exc)
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


class AgentmemGroup(click.Group):
    """The `agentmem` group: a user error raised anywhere below it becomes one line and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.ClickException:
            raise
        except Exception as exc:
            message = user_error_message(exc)
            if message is None:
                raise
            raise click.ClickException(message) from None


def quiet_third_parties(verbose: bool) -> None:
    """Keep third-party warnings and CloudWatch metric JSON off the terminal, unless asked for (--verbose)."""
    if verbose:
        # The local app turns metrics off unless told otherwise; asked for, they are printed as in Lambda.
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "false")
        return
    # Lambda's metrics are CloudWatch EMF JSON printed on stdout; locally nothing reads them.
    os.environ["POWERTOOLS_METRICS_DISABLED"] = "true"
    warnings.filterwarnings("ignore")
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def verbose_option(func: F) -> F:
    """--verbose: also show third-party warnings and the handlers' metric JSON."""
    return click.option(
        "--verbose", "-v", is_flag=True,
        help="Also show third-party libraries' warnings and the handlers' CloudWatch metric JSON.",
    )(func)


def progressbar(iterable: Iterable[Any] | None = None, *, length: int | None = None, label: str) -> Any:
    """click's progress bar on stderr, drawn only when stderr is a terminal (a pipe or a log gets nothing)."""
    return click.progressbar(iterable, length=length, label=label, file=sys.stderr, hidden=not sys.stderr.isatty())
