"""The event bus port: domain events out, in EventBridge's shape."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

EVENT_SOURCE = "agentmem"


@dataclass(frozen=True)
class DomainEvent:
    """An event to publish: EventBridge's `detail-type` and `detail`."""

    detail_type: str
    detail: dict[str, Any]
    source: str = EVENT_SOURCE
    resources: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class PublishReceipt:
    event_id: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class EventBus(Protocol):
    """Publishes events durably. Local: a SQLite outbox drained by a worker. AWS: EventBridge."""

    def publish(self, events: Sequence[DomainEvent]) -> list[PublishReceipt]:
        """One receipt per event, in order; a failed entry has `error` set after retries."""
