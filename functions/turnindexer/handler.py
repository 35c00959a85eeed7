"""Consumes TurnsAppended: index the new turns for recall (embed; vector and, where there is one, keywords).

The turns are read (masked) from the transcript store. In AWS the events come from the function's
own SQS queue in batches; a record that fails is reported back (`batchItemFailures`), received
again, and after the queue's `maxReceiveCount` moved to its dead-letter queue. Locally the worker
hands one EventBridge event and retries a failure with backoff. Indexing the same turns again
replaces them, so a redelivered event does no harm.
"""

from __future__ import annotations

from typing import Any

from agentmem.api.consumer import consume
from agentmem.api.events import TurnsAppendedEvent
from agentmem.api.observability import count, logger, metrics, tracer
from agentmem.wiring import get_services
from aws_lambda_powertools.utilities.typing import LambdaContext


def index_turns(event: TurnsAppendedEvent) -> dict[str, Any]:
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


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return consume(event, context, TurnsAppendedEvent, index_turns)
