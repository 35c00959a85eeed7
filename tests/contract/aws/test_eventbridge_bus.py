"""EventBridgeBus at its boundary: PutEvents entries, and retries of the entries EventBridge failed.

moto never fails an entry for a passing reason, so partial failures are played
back with botocore's Stubber in PutEvents' own response shape.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentmem.adapters.aws.eventbridge_bus import EventBridgeBus
from agentmem.ports.events import DomainEvent
from botocore.stub import Stubber

from tests.contract.conftest import aws_client


def event(n: int) -> DomainEvent:
    return DomainEvent("FeedbackSubmitted", {"memoryId": f"mem-{n}"})


def entry(n: int) -> dict[str, Any]:
    return {
        "EventBusName": "bus",
        "Source": "agentmem",
        "DetailType": "FeedbackSubmitted",
        "Detail": json.dumps({"memoryId": f"mem-{n}"}, separators=(",", ":")),
    }


@pytest.fixture
def stubbed(aws_credentials: None) -> Any:
    client = aws_client("events")
    sleeps: list[float] = []
    with Stubber(client) as stubber:
        yield EventBridgeBus("bus", client=client, sleep=sleeps.append), stubber, sleeps
        stubber.assert_no_pending_responses()


def test_only_the_entries_that_failed_for_a_passing_reason_are_sent_again(stubbed: Any) -> None:
    bus, stubber, sleeps = stubbed
    stubber.add_response(
        "put_events",
        {
            "FailedEntryCount": 2,
            "Entries": [
                {"EventId": "id-0"},
                {"ErrorCode": "ThrottlingException", "ErrorMessage": "Rate exceeded"},
                {"ErrorCode": "InternalFailure", "ErrorMessage": "try again"},
            ],
        },
        {"Entries": [entry(0), entry(1), entry(2)]},
    )
    stubber.add_response(
        "put_events",
        {
            "FailedEntryCount": 1,
            "Entries": [
                {"EventId": "id-1"},
                {"ErrorCode": "InternalFailure", "ErrorMessage": "try again"},
            ],
        },
        {"Entries": [entry(1), entry(2)]},
    )
    stubber.add_response(
        "put_events", {"FailedEntryCount": 0, "Entries": [{"EventId": "id-2"}]}, {"Entries": [entry(2)]}
    )
    receipts = bus.publish([event(0), event(1), event(2)])
    assert [(r.event_id, r.ok) for r in receipts] == [("id-0", True), ("id-1", True), ("id-2", True)]
    # Exponential backoff from 0.1 s, each wait with up to half taken off by jitter.
    assert len(sleeps) == 2
    assert 0.05 <= sleeps[0] <= 0.1 and 0.1 <= sleeps[1] <= 0.2


def test_an_entry_that_cannot_succeed_is_not_retried_and_its_receipt_says_why(stubbed: Any) -> None:
    bus, stubber, sleeps = stubbed
    stubber.add_response(
        "put_events",
        {
            "FailedEntryCount": 1,
            "Entries": [
                {"ErrorCode": "MalformedDetail", "ErrorMessage": "Detail is malformed."},
                {"EventId": "id-1"},
            ],
        },
        {"Entries": [entry(0), entry(1)]},
    )
    receipts = bus.publish([event(0), event(1)])
    assert receipts[0].event_id is None and receipts[0].error == "MalformedDetail: Detail is malformed."
    assert receipts[1].ok and receipts[1].event_id == "id-1"
    assert sleeps == []


def test_retries_are_bounded_and_the_last_error_is_reported(stubbed: Any) -> None:
    bus, stubber, sleeps = stubbed
    for _ in range(bus.max_attempts):
        stubber.add_response(
            "put_events",
            {
                "FailedEntryCount": 1,
                "Entries": [
                    {"ErrorCode": "InternalFailure", "ErrorMessage": "still failing"},
                ],
            },
            {"Entries": [entry(0)]},
        )
    (receipt,) = bus.publish([event(0)])
    assert not receipt.ok and receipt.error == "InternalFailure: still failing"
    assert len(sleeps) == bus.max_attempts - 1


def test_a_refused_call_gives_every_entry_an_error_receipt(stubbed: Any) -> None:
    bus, stubber, _ = stubbed
    stubber.add_client_error("put_events", service_error_code="AccessDeniedException", http_status_code=400)
    receipts = bus.publish([event(0), event(1)])
    assert [r.error for r in receipts] == ["AccessDeniedException", "AccessDeniedException"]


def test_events_are_sent_ten_to_a_call_in_order(stubbed: Any) -> None:
    bus, stubber, _ = stubbed
    for batch in ([*range(10)], [*range(10, 20)], [20]):
        stubber.add_response(
            "put_events",
            {"FailedEntryCount": 0, "Entries": [{"EventId": f"id-{n}"} for n in batch]},
            {"Entries": [entry(n) for n in batch]},
        )
    receipts = bus.publish([event(n) for n in range(21)])
    assert [r.event_id for r in receipts] == [f"id-{n}" for n in range(21)]
