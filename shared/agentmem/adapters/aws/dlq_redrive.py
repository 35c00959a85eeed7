"""Redriving dead letters: events that exhausted their retries go back to their consumers.

Two kinds of dead-letter queue hold them:

- a consumer's own (`redrive_to_queue`): SQS moved the message there after the
  consumer failed on it `maxReceiveCount` times; the body is the EventBridge
  event. It is sent back to the consumer's queue as it is (body and message
  attributes) and deleted from the dead-letter queue only once the send
  succeeded. (SQS's own StartMessageMoveTask does the same asynchronously;
  this is synchronous, so the command can say what it moved, and it runs under
  moto, which lacks the move task.)
- the bus's (`redrive_dead_letters`): EventBridge put the event it could not
  deliver there. Each is published again with its source, detail-type and
  detail, and deleted only once PutEvents accepted it.

Either way a failure midway loses nothing, and the consumers are idempotent, so
an event delivered twice does no harm.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentmem.adapters.aws.eventbridge_bus import EventBridgeBus
from agentmem.ports.events import DomainEvent


@dataclass
class RedriveReport:
    redriven: int = 0
    unreadable: int = 0
    failed: list[str] = field(default_factory=list)


def redrive_dead_letters(
    sqs: Any, queue_url: str, bus: EventBridgeBus, *, limit: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> RedriveReport:
    """Move up to `limit` messages from the dead-letter queue back onto the bus."""
    report = RedriveReport()
    while report.redriven + report.unreadable + len(report.failed) < limit:
        batch = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                    VisibilityTimeout=60).get("Messages", [])
        if not batch:
            break
        events, handles = [], []
        for message in batch:
            try:
                original = json.loads(message["Body"])
                events.append(DomainEvent(original["detail-type"], original["detail"], source=original["source"]))
                handles.append(message["ReceiptHandle"])
            except (ValueError, KeyError, TypeError):
                # Not an EventBridge event: left in the queue for a person to look at.
                report.unreadable += 1
        for receipt, handle in zip(bus.publish(events), handles, strict=True):
            if receipt.ok:
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=handle)
                report.redriven += 1
            else:
                report.failed.append(receipt.error or "not published")
        if progress:
            progress(len(batch))
    return report


def redrive_to_queue(
    sqs: Any, dead_letter_url: str, queue_url: str, *, limit: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> RedriveReport:
    """Move up to `limit` messages from a consumer's dead-letter queue back to the consumer's queue."""
    report = RedriveReport()
    while report.redriven + len(report.failed) < limit:
        batch = sqs.receive_message(
            QueueUrl=dead_letter_url, MaxNumberOfMessages=min(10, limit - report.redriven - len(report.failed)),
            WaitTimeSeconds=1, VisibilityTimeout=60, MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not batch:
            break
        entries = [
            {"Id": str(i), "MessageBody": m["Body"],
             **({"MessageAttributes": m["MessageAttributes"]} if m.get("MessageAttributes") else {})}
            for i, m in enumerate(batch)
        ]
        sent = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        failed = {f["Id"]: f.get("Message") or f.get("Code", "not sent") for f in sent.get("Failed", [])}
        moved = [m for i, m in enumerate(batch) if str(i) not in failed]
        if moved:
            sqs.delete_message_batch(
                QueueUrl=dead_letter_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(moved)],
            )
        report.redriven += len(moved)
        report.failed.extend(failed.values())
        if progress:
            progress(len(batch))
    return report
