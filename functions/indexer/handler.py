"""Consumes FeedbackSubmitted from the tenant's bus: digest -> embed -> index.

A failure raises, so the event is retried (EventBridge's retry policy, then the
dead-letter queue in AWS; the outbox's backoff locally).
"""

from __future__ import annotations

from typing import Any

from agentmem.api.events import FeedbackSubmittedEvent
from agentmem.api.observability import count, logger, metrics, tracer
from agentmem.wiring import get_services
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=FeedbackSubmittedEvent)
def lambda_handler(event: FeedbackSubmittedEvent, context: LambdaContext) -> dict[str, Any]:
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
