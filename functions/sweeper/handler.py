"""Runs the periodic sweep on an EventBridge schedule (`schedule` in functions/catalog.py).

A failure raises, so the invocation counts as an error (alarmed); the next
scheduled run sweeps again, so nothing waits longer than one period more.
"""

from __future__ import annotations

from typing import Any

from agentmem.api.observability import count, inject_lambda_context, logger, metrics, tracer
from agentmem.service.sweep import sweep
from agentmem.wiring import get_services
from aws_lambda_powertools.utilities.typing import LambdaContext


@inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = sweep(get_services().memory)
    logger.info("sweep", extra=report.as_dict())
    if report.pending_indexed:
        count("PendingLessonsIndexed", report.pending_indexed)
    if report.lessons_expired:
        count("LessonsExpired", report.lessons_expired)
    return {"status": "swept", **report.as_dict()}
