"""The event bus on Amazon EventBridge: PutEvents in batches of 10, failed entries retried."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError, NoCredentialsError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agentmem.adapters.aws.lazy import LazyClient
from agentmem.backoff import backoff
from agentmem.ports.events import DomainEvent, PublishReceipt

PUT_EVENTS_LIMIT = 10  # EventBridge's own limit on entries per PutEvents call
DEFAULT_MAX_ATTEMPTS = 4

# Entry error codes worth another try; the others (MalformedDetail, InvalidArgument, AccessDenied...)
# would fail the same way again.
RETRYABLE_ENTRY_CODES = frozenset(
    {
        "InternalFailure",
        "InternalException",
        "ThrottlingException",
        "ServiceUnavailable",
        "ConcurrentModificationException",
    }
)
RETRYABLE_CALL_CODES = frozenset(
    {
        "InternalFailure",
        "InternalException",
        "ThrottlingException",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "RequestLimitExceeded",
    }
)

CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=2, read_timeout=5)


class EventBridgeBus:
    """EventBus on one EventBridge bus. Never raises for a delivery failure: the receipt says so."""

    def __init__(
        self,
        bus_name: str,
        client: Any = None,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.bus_name = bus_name
        self.max_attempts = max_attempts
        self._client = LazyClient(lambda: boto3.client("events", config=CLIENT_CONFIG), client)
        self._sleep = sleep

    @property
    def client(self) -> Any:
        """The EventBridge client, built on first use."""
        return self._client()

    def publish(self, events: Sequence[DomainEvent]) -> list[PublishReceipt]:
        receipts: list[PublishReceipt | None] = [None] * len(events)
        for start in range(0, len(events), PUT_EVENTS_LIMIT):
            batch = range(start, min(start + PUT_EVENTS_LIMIT, len(events)))
            for index, receipt in self._publish_batch(events, list(batch)).items():
                receipts[index] = receipt
        return [r if r is not None else PublishReceipt(None, "not published") for r in receipts]

    def _publish_batch(self, events: Sequence[DomainEvent], indexes: list[int]) -> dict[int, PublishReceipt]:
        """Publish up to 10 events; retry the entries (or the call) that failed for a passing reason."""
        receipts: dict[int, PublishReceipt] = {}
        waiting = indexes
        errors: dict[int, str] = {}
        for attempt in range(self.max_attempts):
            try:
                response = self.client.put_events(Entries=[self._entry(events[i]) for i in waiting])
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", "ClientError"))
                errors = dict.fromkeys(waiting, code)
                if code not in RETRYABLE_CALL_CODES:
                    break
            except (BotocoreConnectionError, HTTPClientError, NoCredentialsError) as exc:
                errors = dict.fromkeys(waiting, type(exc).__name__)
            else:
                retry = []
                errors = {}
                # PutEvents answers one entry per request entry, in the same order.
                for index, result in zip(waiting, response.get("Entries", []), strict=True):
                    code = result.get("ErrorCode")
                    if code is None:
                        receipts[index] = PublishReceipt(event_id=result.get("EventId"))
                        continue
                    errors[index] = f"{code}: {result.get('ErrorMessage', '')}".rstrip(": ")
                    if code in RETRYABLE_ENTRY_CODES:
                        retry.append(index)
                    else:
                        receipts[index] = PublishReceipt(None, errors[index])
                waiting = retry
            if not waiting:
                break
            if attempt + 1 < self.max_attempts:
                self._sleep(backoff(attempt, 0.1, 2.0))
        for index in waiting:
            receipts[index] = PublishReceipt(None, errors.get(index, "not published"))
        return receipts

    def _entry(self, event: DomainEvent) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "EventBusName": self.bus_name,
            "Source": event.source,
            "DetailType": event.detail_type,
            "Detail": json.dumps(event.detail, separators=(",", ":"), ensure_ascii=False),
        }
        if event.resources:
            entry["Resources"] = list(event.resources)
        return entry


