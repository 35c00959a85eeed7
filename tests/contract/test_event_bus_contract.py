"""The EventBus contract: SqliteEventBus and EventBridgeBus (under moto, a rule targeting SQS) agree.

"Delivered" means what a consumer sees: for the local bus, the pending events
a second handle on the same outbox file finds (the worker's view, and what a
restarted server would find); for EventBridge, what reaches the SQS queue the
rule targets.
"""

from __future__ import annotations

from pathlib import Path

from agentmem.adapters.local.event_bus import SqliteEventBus
from agentmem.ports.events import EVENT_SOURCE, DomainEvent

from tests.contract.conftest import BusUnderTest


def feedback_event(n: int) -> DomainEvent:
    return DomainEvent(
        detail_type="FeedbackSubmitted",
        detail={
            "tenant": "acme",
            "agentId": "agent-a",
            "memoryId": f"mem-{n}",
            "n": n,
            "comment": "naïve “quotes” ✓",
            "nested": {"ok": True, "list": [1, 2.5, None]},
        },
    )


def test_every_event_gets_a_receipt_in_order_and_arrives_intact(bus_under_test: BusUnderTest) -> None:
    events = [feedback_event(n) for n in range(3)]
    receipts = bus_under_test.bus.publish(events)
    assert len(receipts) == 3
    assert all(r.ok and r.event_id for r in receipts)
    assert len({r.event_id for r in receipts}) == 3

    delivered = {
        event_id: (detail_type, source, detail) for event_id, detail_type, source, detail in bus_under_test.delivered()
    }
    assert set(delivered) == {r.event_id for r in receipts}
    for event, receipt in zip(events, receipts, strict=True):
        assert delivered[receipt.event_id] == ("FeedbackSubmitted", EVENT_SOURCE, event.detail)


def test_more_than_one_put_events_batch_is_published_whole(bus_under_test: BusUnderTest) -> None:
    # EventBridge takes at most 10 entries per call: 23 events need three.
    events = [feedback_event(n) for n in range(23)]
    receipts = bus_under_test.bus.publish(events)
    assert len(receipts) == 23 and all(r.ok for r in receipts)
    by_id = {event_id: detail for event_id, _, _, detail in bus_under_test.delivered()}
    assert [by_id[r.event_id]["n"] for r in receipts] == list(range(23))


def test_publishing_nothing_sends_nothing(bus_under_test: BusUnderTest) -> None:
    assert bus_under_test.bus.publish([]) == []
    assert bus_under_test.delivered() == []


# The local outbox's own promise: durable until acknowledged.


def test_local_events_stay_pending_across_a_restart_until_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    bus = SqliteEventBus(path)
    receipts = bus.publish([feedback_event(1), feedback_event(2)])
    bus.close()

    restarted = SqliteEventBus(path)
    assert [e.event_id for e in restarted.due()] == [r.event_id for r in receipts]
    restarted.ack(receipts[0].event_id)
    restarted.close()

    again = SqliteEventBus(path)
    assert [e.event_id for e in again.due()] == [receipts[1].event_id]
    again.close()


def test_forgetting_a_local_user_deletes_every_event_naming_them_in_that_tenant_and_no_other(tmp_path: Path) -> None:
    bus = SqliteEventBus(tmp_path / "events.db")
    bus.subscribe("consolidator", ["TurnsAppended"])
    turns = [DomainEvent("TurnsAppended", {"tenant": t, "userId": u, "threadId": "t-1", "fromSeq": 1, "toSeq": 1})
             for t, u in (("acme", "alice"), ("acme", "bob"), ("globex", "alice"))]
    bus.publish(turns)
    [alice_delivery, *_] = bus.due_for("consolidator")
    bus.ack_delivery(alice_delivery.event_id, "consolidator")  # delivered events are forgotten too

    assert bus.forget_user("acme", "alice") == 1
    left = [(e.envelope["detail"]["tenant"], e.envelope["detail"]["userId"]) for e in bus.due_for("consolidator")]
    assert left == [("acme", "bob"), ("globex", "alice")]
    assert bus.counts() == {"pending": 2}
    bus.close()
