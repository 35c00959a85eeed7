"""One entry point for every function that consumes events, however they are delivered.

In AWS each consumer reads its own SQS queue (bus rule -> queue -> event source
mapping with `ReportBatchItemFailures`): the function gets a batch of SQS
records whose bodies are the EventBridge events. powertools' batch processor
runs the business logic once per record and answers `batchItemFailures`, so
only the records that failed come back (and, after the queue's
`maxReceiveCount`, move to its dead-letter queue). Locally the worker hands the
function one EventBridge event at a time, as EventBridge's Lambda target would;
a failure raises and the outbox retries it. Both paths parse the event with
the same model and call the same `handle`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentmem.api.observability import count, logger

E = TypeVar("E", bound=EventBridgeModel)


def is_sqs_batch(event: Mapping[str, Any]) -> bool:
    records = event.get("Records")
    return isinstance(records, list) and bool(records) and all(
        isinstance(r, Mapping) and r.get("eventSource") == "aws:sqs" for r in records
    )


def consume(
    event: dict[str, Any],
    context: LambdaContext,
    model: type[E],
    handle: Callable[[E], dict[str, Any]],
) -> dict[str, Any]:
    """Run `handle` on each event in `event`: an SQS batch (partial failures) or one EventBridge event."""
    if not is_sqs_batch(event):
        return handle(model.model_validate(event))

    def record_handler(record: SQSRecord) -> dict[str, Any]:
        try:
            return handle(model.model_validate_json(record.body))
        except Exception as exc:
            # The message comes back after its visibility timeout; no body in the log (it names users).
            logger.warning(
                "event processing failed; the message will be received again",
                extra={"messageId": record.message_id, "error": type(exc).__name__,
                       "receiveCount": record.attributes.approximate_receive_count},
            )
            count("EventsFailed")
            raise

    # One processor per invocation: it holds the batch's results, which must not be shared.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return dict(process_partial_response(event, record_handler, processor, context))
