"""Powertools Logger, Tracer and Metrics shared by every function (cheap to create; no clients)."""

from __future__ import annotations

import functools
import logging
import os
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging.lambda_context import build_lambda_context_model
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from aws_lambda_powertools.shared.functions import resolve_truthy_env_var_choice

from agentmem.api.untraced import UntracedProvider

SERVICE = "agentmem"

logger = Logger(service=SERVICE)
# Tracing off (the local server, the tests): no X-Ray recorder is loaded only to discard its segments.
_TRACING_OFF = resolve_truthy_env_var_choice(env=os.getenv("POWERTOOLS_TRACE_DISABLED", "false"))
tracer = Tracer(service=SERVICE, provider=UntracedProvider() if _TRACING_OFF else None)
metrics = Metrics(namespace="agentmem", service=SERVICE)
# A request that added no metric is normal here (a 404, a disabled agent); powertools warns on each.
warnings.filterwarnings("ignore", message="No application metrics to publish")


H = TypeVar("H", bound=Callable[..., Any])


def inject_lambda_context(handler: H) -> H:
    """powertools' `logger.inject_lambda_context(clear_state=True)`, with the keys kept per invocation.

    powertools puts the Lambda context keys (`function_name`, `function_request_id`, ...) in the
    formatter's state, which every thread shares: where two functions run side by side in one
    process (`agentmem serve` runs each handler in its own thread), a line could carry the other
    invocation's name and request id. These keys go through Logger's thread-safe API instead (a
    contextvar, so each thread and each copied context has its own), set when the invocation
    starts and restored when it ends. In Lambda, one invocation at a time, the lines are the same.
    """
    cold = [True]

    @functools.wraps(handler)
    def decorate(event: Any, context: Any, *args: Any, **kwargs: Any) -> Any:
        keys = build_lambda_context_model(context).__dict__
        outer = logger.thread_safe_get_current_keys()
        logger.thread_safe_clear_keys()
        logger.thread_safe_append_keys(cold_start=cold[0], **keys)
        cold[0] = False
        try:
            return handler(event, context, *args, **kwargs)
        finally:
            logger.thread_safe_clear_keys()
            if outer:
                logger.thread_safe_append_keys(**outer)

    return decorate  # type: ignore[return-value]


def count(name: str, value: float = 1) -> None:
    """Add a Count metric, unless metrics are disabled (the local server).

    Powertools skips the flush when metrics are disabled but keeps collecting,
    and prints anyway once 100 values pile up; not collecting avoids that.
    """
    if not is_metrics_disabled():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)

# At DEBUG, powertools' resolver logs whole request bodies, which can hold personal data.
logging.getLogger("aws_lambda_powertools.event_handler").setLevel(logging.INFO)
