"""Consumes FeedbackSubmitted: digest -> embed -> index.

In AWS the events come from the indexer's SQS queue in batches; a record that
fails is reported back (`batchItemFailures`), received again, and after the
queue's `maxReceiveCount` moved to its dead-letter queue, which an alarm
watches and `agentmem redrive --stack` replays. Locally the worker hands one
EventBridge event and retries a failure with backoff. Indexing is idempotent,
so a redelivered event does no harm.
"""

from __future__ import annotations

from typing import Any

from agentmem.api.consumer import consume
from agentmem.api.events import FeedbackSubmittedEvent
from agentmem.api.observability import count, inject_lambda_context, logger, metrics, tracer
from agentmem.wiring import get_services
from aws_lambda_powertools.utilities.typing import LambdaContext


def index_lesson(event: FeedbackSubmittedEvent) -> dict[str, Any]:
    services = get_services()
    detail = event.detail
    if detail.tenant != services.settings.tenant:
        # A bus is per tenant; an event of another tenant is a wiring mistake, never data to act on.
        logger.error("event for another tenant dropped", extra={"event_tenant": detail.tenant})
        return {"status": "ignored"}
    outcome = services.memory.index_memory(detail.agent_id, detail.memory_id)
    logger.info("lesson indexing", extra={"memory_id": detail.memory_id, "outcome": outcome})
    if outcome == "indexed":
        count("LessonsIndexed")
    return {"status": outcome, "memoryId": detail.memory_id}


@inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return consume(event, context, FeedbackSubmittedEvent, index_lesson)
