"""One entry point for every function that consumes events, however they are delivered.

In AWS each consumer reads its own SQS queue (bus rule -> queue -> event source
mapping with `ReportBatchItemFailures`): the function gets a batch of SQS
records whose bodies are the EventBridge events. powertools' batch processor
runs the business logic once per record and answers `batchItemFailures`, so
only the records that failed come back (and, after the queue's
`maxReceiveCount`, move to its dead-letter queue). Locally the worker hands the
function a batch in the same SQS shape (up to `CONSUMER_BATCH_SIZE` events that
are due) and reads `batchItemFailures` back the same way. Both paths parse the
event with the same model and call the same `handle`.

A consumer whose work is cheaper done together (the indexer embeds every lesson
of a batch in one forward pass) passes `handle_batch`: it gets the batch's
events at once and answers one result per event; a failure of the whole call
fails every record of it, each retried on its own.
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
    *,
    handle_batch: Callable[[list[E]], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Run `handle` on each event in `event`: an SQS batch (partial failures) or one EventBridge event.

    With `handle_batch`, the events of an SQS batch that parse go to it together (one result each, in order).
    """
    if not is_sqs_batch(event):
        return handle(model.model_validate(event))
    done = _handled_together(event["Records"], model, handle_batch) if handle_batch is not None else {}

    def record_handler(record: SQSRecord) -> dict[str, Any]:
        try:
            if record.message_id in done:
                outcome = done[record.message_id]
                if isinstance(outcome, Exception):
                    raise outcome
                return outcome
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


def _handled_together(
    records: list[dict[str, Any]], model: type[E], handle_batch: Callable[[list[E]], list[dict[str, Any]]]
) -> dict[str, dict[str, Any] | Exception]:
    """Each record's result (or the exception it fails with), by message id, from one `handle_batch` call."""
    outcomes: dict[str, dict[str, Any] | Exception] = {}
    parsed: list[tuple[str, E]] = []
    for record in records:
        try:
            parsed.append((record["messageId"], model.model_validate_json(record["body"])))
        except Exception as exc:  # a malformed record fails alone
            outcomes[record["messageId"]] = exc
    if not parsed:
        return outcomes
    try:
        results: list[dict[str, Any] | Exception] = list(handle_batch([event for _, event in parsed]))
    except Exception as exc:
        results = [exc] * len(parsed)
    if len(results) != len(parsed):
        raise ValueError(f"handle_batch answered {len(results)} results for {len(parsed)} events")
    outcomes.update({message_id: result for (message_id, _), result in zip(parsed, results, strict=True)})
    return outcomes
