"""Consumes TurnsAppended from the tenant's bus: index the turns for recall, learn facts, rewrite the profile.

One structured log line per run says how it went, and the bus gets
ProfileUpdated, ProfileUnchanged or ProfileUpdateFailed. A backend failure (or a
profile that kept changing underneath) raises, so the event is retried: in
AWS the record is reported back to the consumer's SQS queue and, after its
`maxReceiveCount`, moved to its dead-letter queue (`agentmem redrive --stack`);
locally the outbox retries with backoff. Consolidation is idempotent per event:
turns the profile has folded already are not folded or counted again. A
model's unusable answer does not raise: asking again would get the same answer.
"""

from __future__ import annotations

from typing import Any

from agentmem.api.consumer import consume
from agentmem.api.events import TurnsAppendedEvent
from agentmem.api.observability import count, inject_lambda_context, logger, metrics, tracer
from agentmem.domain.log_ids import log_id
from agentmem.wiring import get_services
from aws_lambda_powertools.utilities.typing import LambdaContext


def consolidate_turns(event: TurnsAppendedEvent) -> dict[str, Any]:
    services = get_services()
    detail = event.detail
    if detail.tenant != services.settings.tenant:
        # A bus is per tenant; an event of another tenant is a wiring mistake, never data to act on.
        logger.error("event for another tenant dropped", extra={"event_tenant": detail.tenant})
        return {"status": "ignored"}
    # First the turns are indexed for recall (quick, and idempotent: a retried event indexes them again).
    # In this function rather than one of its own: another queue, poller and alarm would cost more at
    # rest than a small tenant's whole budget allows.
    indexed = services.turn_recall.index_appended(detail.user_id, detail.thread_id, detail.from_seq, detail.to_seq)
    count("TurnsIndexed", indexed)
    result = services.consolidation.consolidate(detail.user_id, detail.thread_id, detail.from_seq, detail.to_seq)
    logger.info(
        "profile consolidation",
        extra={
            "userHash": log_id(detail.user_id), "threadHash": log_id(detail.thread_id), "fromSeq": detail.from_seq,
            "toSeq": detail.to_seq, "model": services.consolidation.llm.model_id, **result.as_dict(),
        },
    )
    count(f"Profile{result.status.capitalize()}")
    if result.facts_added:
        count("FactsLearned", result.facts_added)
    if result.retry is not None:
        raise result.retry
    return {"status": result.status, "userId": detail.user_id, **result.as_dict()}


@inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return consume(event, context, TurnsAppendedEvent, consolidate_turns)
