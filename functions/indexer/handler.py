"""Consumes FeedbackSubmitted: digest -> embed -> index.

In AWS the events come from the indexer's SQS queue in batches; a record that
fails is reported back (`batchItemFailures`), received again, and after the
queue's `maxReceiveCount` moved to its dead-letter queue, which an alarm
watches and `agentmem redrive --stack` replays. Locally the worker hands the
same SQS-shaped batches (the lessons due at once) and retries a failure with
backoff. The lessons of a batch are embedded together (one forward pass per
group of similar length: at 50 feedbacks/s most of the cost of a lesson).
Indexing is idempotent, so a redelivered event does no harm.
"""

from __future__ import annotations

from typing import Any

from agentmem.api.consumer import consume
from agentmem.api.events import FeedbackSubmittedEvent
from agentmem.api.observability import count, inject_lambda_context, logger, metrics, tracer
from agentmem.wiring import get_services
from aws_lambda_powertools.utilities.typing import LambdaContext


def index_lessons(events: list[FeedbackSubmittedEvent]) -> list[dict[str, Any]]:
    """Index the lessons of a batch together: their digests go through the embedder in one call."""
    services = get_services()
    results: list[dict[str, Any]] = [{"status": "ignored"}] * len(events)
    wanted = []
    for position, event in enumerate(events):
        if event.detail.tenant != services.settings.tenant:
            # A bus is per tenant; an event of another tenant is a wiring mistake, never data to act on.
            logger.error("event for another tenant dropped", extra={"event_tenant": event.detail.tenant})
        else:
            wanted.append((position, event.detail))
    outcomes = services.memory.index_memories([(detail.agent_id, detail.memory_id) for _, detail in wanted])
    for (position, detail), outcome in zip(wanted, outcomes, strict=True):
        logger.info("lesson indexing", extra={"memory_id": detail.memory_id, "outcome": outcome})
        if outcome == "indexed":
            count("LessonsIndexed")
        results[position] = {"status": outcome, "memoryId": detail.memory_id}
    return results


def index_lesson(event: FeedbackSubmittedEvent) -> dict[str, Any]:
    return index_lessons([event])[0]


@inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return consume(event, context, FeedbackSubmittedEvent, index_lesson, handle_batch=index_lessons)
