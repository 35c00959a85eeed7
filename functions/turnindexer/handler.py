"""Consumes TurnsAppended from the tenant's bus: index the new turns for recall (embed, vector, keywords).

The turns are read (masked) from the transcript store; indexing them again replaces them, so a
retried event does no harm. A failure raises, so the event is retried (EventBridge's retry policy,
then the dead-letter queue in AWS; the outbox's backoff locally).
"""

from __future__ import annotations

from typing import Any

from agentmem.api.events import TurnsAppendedEvent
from agentmem.api.observability import count, logger, metrics, tracer
from agentmem.wiring import get_services
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=TurnsAppendedEvent)
def lambda_handler(event: TurnsAppendedEvent, context: LambdaContext) -> dict[str, Any]:
    services = get_services()
    detail = event.detail
    if detail.tenant != services.settings.tenant:
        # A bus is per tenant; an event of another tenant is a wiring mistake, never data to act on.
        logger.error("event for another tenant dropped", extra={"event_tenant": detail.tenant})
        return {"status": "ignored"}
    if services.turn_recall is None:  # pragma: no cover - build_services always wires it
        raise RuntimeError("turn recall is not wired")
    indexed = services.turn_recall.index_appended(detail.user_id, detail.thread_id, detail.from_seq, detail.to_seq)
    logger.info("turns indexed", extra={"fromSeq": detail.from_seq, "toSeq": detail.to_seq, "turns": indexed})
    count("TurnsIndexed", indexed)
    return {"status": "indexed", "turns": indexed}
