"""Powertools Logger, Tracer and Metrics shared by every function (cheap to create; no clients)."""

from __future__ import annotations

import logging
import warnings

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

SERVICE = "agentmem"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="agentmem", service=SERVICE)
# A request that added no metric is normal here (a 404, a disabled agent); powertools warns on each.
warnings.filterwarnings("ignore", message="No application metrics to publish")


def count(name: str, value: float = 1) -> None:
    """Add a Count metric, unless metrics are disabled (the local server).

    Powertools skips the flush when metrics are disabled but keeps collecting,
    and prints anyway once 100 values pile up; not collecting avoids that.
    """
    if not is_metrics_disabled():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)

# At DEBUG, powertools' resolver logs whole request bodies, which can hold personal data.
logging.getLogger("aws_lambda_powertools.event_handler").setLevel(logging.INFO)
