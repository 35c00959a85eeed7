"""Redriving the tenant bus's dead-letter queue: events that exhausted their retries go back on the bus.

EventBridge puts the undeliverable event itself (its JSON) in the queue. Each
message is published again with its source, detail-type and detail, and
deleted from the queue only once PutEvents accepted it, so a failure midway
loses nothing. The consumers are idempotent, so an event delivered twice
does no harm.
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
