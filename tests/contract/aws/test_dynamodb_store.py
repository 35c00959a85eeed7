"""DynamoDbRecordStore at its boundary: the items it writes (under moto) and how it handles DynamoDB's answers.

Failures moto does not produce (unprocessed keys, throttling, transaction
conflicts) are played back with botocore's Stubber, in DynamoDB's own shapes.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from agentmem.adapters.aws.dynamodb_lessons import feedback_to_item, memory_key, memory_to_item
from agentmem.adapters.aws.dynamodb_store import MAX_BATCH_ATTEMPTS, DynamoDbRecordStore
from agentmem.domain.errors import BackendUnavailable, Conflict, NotFound
from botocore.config import Config
from botocore.stub import ANY, Stubber

from tests.contract.conftest import REGION, TABLE_NAME, aws_client, create_table
from tests.contract.test_record_store_contract import T0, add_memories, make_feedback, make_run

DAY = 86_400


@pytest.fixture
def store(moto: None) -> DynamoDbRecordStore:
    create_table()
    return DynamoDbRecordStore(TABLE_NAME, client=aws_client("dynamodb"))


def raw_item(pk: str, sk: str) -> dict[str, Any] | None:
    client = aws_client("dynamodb")
    return client.get_item(TableName=TABLE_NAME, Key={"pk": {"S": pk}, "sk": {"S": sk}}).get("Item")


def test_a_memory_is_written_under_the_single_table_keys(store: DynamoDbRecordStore) -> None:
    (memory,) = add_memories(store, 1)
    item = raw_item("T#acme#A#agent-a", f"MEM#{memory.memory_id}")
    assert item is not None
    assert item["gsi1pk"] == {"S": "T#acme#A#agent-a#MEM"}
    assert item["gsi1sk"] == {"S": f"0001750000000.000000#{memory.memory_id}"}
    # The age limit (90 days) plus the grace period in which the sweeper removes the lesson's vector.
    assert item["ttl"] == {"N": str(int(T0) + (90 + 7) * DAY)}
    assert raw_item("T#acme#A#agent-a", f"FB#{memory.feedback_id}") is not None
    assert raw_item("T#acme#A#agent-a", f"RUN#{memory.run_id}") is not None
    assert raw_item("T#acme#PENDING", f"MEM#agent-a#{memory.memory_id}") is not None
    assert raw_item("T#acme#AGENTS", "A#agent-a") is not None


def test_the_memory_age_limit_sets_the_ttl(moto: None) -> None:
    create_table()
    # Built without a client: the store builds its own on first use, and moto answers it.
    store = DynamoDbRecordStore(TABLE_NAME, max_age_days=7)
    (memory,) = add_memories(store, 1)
    ttl = {"N": str(int(T0) + (7 + 7) * DAY)}  # the age limit plus the sweeper's grace period
    assert raw_item("T#acme#A#agent-a", f"MEM#{memory.memory_id}")["ttl"] == ttl


def test_indexing_removes_the_pending_marker_and_deleting_leaves_the_list_index(store: DynamoDbRecordStore) -> None:
    first, second = add_memories(store, 2)
    store.update_memory("acme", "agent-a", first.memory_id, status="indexed")
    assert raw_item("T#acme#PENDING", f"MEM#agent-a#{first.memory_id}") is None
    assert raw_item("T#acme#PENDING", f"MEM#agent-a#{second.memory_id}") is not None

    store.update_memory("acme", "agent-a", first.memory_id, status="deleted")
    item = raw_item("T#acme#A#agent-a", f"MEM#{first.memory_id}")
    assert "gsi1pk" not in item and item["status"] == {"S": "deleted"}

    assert [m.memory_id for m in store.list_memories("acme", "agent-a", limit=5).items] == [second.memory_id]


def test_the_cursor_is_opaque_urlsafe_base64(store: DynamoDbRecordStore) -> None:
    add_memories(store, 3)
    cursor = store.list_memories("acme", "agent-a", limit=1).next_cursor
    assert cursor is not None and set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_a_memory_id_taken_by_another_feedback_is_a_conflict(store: DynamoDbRecordStore) -> None:
    store.put_run(make_run())
    feedback, memory = make_feedback()
    store.add_feedback(feedback, memory)
    other_feedback, _ = make_feedback(n=2)
    with pytest.raises(Conflict):
        store.add_feedback(other_feedback, memory)
    assert store.get_run("acme", "agent-a", "run-1").feedback_ids == [feedback.feedback_id]


# DynamoDB's failure answers, played back


def stubbed_store(**kwargs: Any) -> tuple[DynamoDbRecordStore, Stubber, list[float]]:
    client = aws_client("dynamodb")
    sleeps: list[float] = []
    return DynamoDbRecordStore(TABLE_NAME, client=client, sleep=sleeps.append, **kwargs), Stubber(client), sleeps


def test_unprocessed_keys_are_fetched_again_after_a_backoff(aws_credentials: None) -> None:
    store, stubber, sleeps = stubbed_store()
    memories = [make_feedback(f"run-{n}")[1] for n in range(3)]
    items = [memory_to_item(m) for m in memories]
    keys = [memory_key("acme", "agent-a", m.memory_id) for m in memories]
    stubber.add_response(
        "batch_get_item",
        {
            "Responses": {TABLE_NAME: [items[0]]},
            "UnprocessedKeys": {TABLE_NAME: {"Keys": keys[1:], "ConsistentRead": True}},
        },
        {"RequestItems": {TABLE_NAME: {"Keys": keys, "ConsistentRead": True}}},
    )
    stubber.add_response(
        "batch_get_item",
        {"Responses": {TABLE_NAME: items[1:]}},
        {"RequestItems": {TABLE_NAME: {"Keys": keys[1:], "ConsistentRead": True}}},
    )
    with stubber:
        found = store.get_memories("acme", "agent-a", [m.memory_id for m in memories])
    assert sorted(m.memory_id for m in found) == sorted(m.memory_id for m in memories)
    assert len(sleeps) == 1
    stubber.assert_no_pending_responses()


def test_keys_left_unprocessed_after_every_retry_are_backend_unavailable(aws_credentials: None) -> None:
    store, stubber, sleeps = stubbed_store()
    key = memory_key("acme", "agent-a", "m1")
    for _ in range(MAX_BATCH_ATTEMPTS):
        stubber.add_response(
            "batch_get_item",
            {
                "Responses": {TABLE_NAME: []},
                "UnprocessedKeys": {TABLE_NAME: {"Keys": [key]}},
            },
        )
    with stubber, pytest.raises(BackendUnavailable) as caught:
        store.get_memories("acme", "agent-a", ["m1"])
    assert caught.value.part == "store"
    # Exponential (0.05 s doubling, capped at 1 s), each with up to half taken off by jitter.
    assert len(sleeps) == MAX_BATCH_ATTEMPTS - 1
    for attempt, slept in enumerate(sleeps):
        ceiling = min(1.0, 0.05 * 2**attempt)
        assert ceiling / 2 <= slept <= ceiling


@pytest.mark.parametrize(
    "code",
    [
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "InternalServerError",
        "ResourceNotFoundException",
    ],
)
def test_overload_and_outage_codes_are_backend_unavailable(aws_credentials: None, code: str) -> None:
    store, stubber, _ = stubbed_store()
    stubber.add_client_error("get_item", service_error_code=code, http_status_code=400)
    with stubber, pytest.raises(BackendUnavailable) as caught:
        store.get_run("acme", "agent-a", "run-1")
    assert caught.value.part == "store"


def test_an_unreachable_endpoint_is_backend_unavailable(aws_credentials: None) -> None:
    # Port 9 (discard) on loopback: the connection is refused at once.
    client = boto3.client(
        "dynamodb",
        region_name=REGION,
        endpoint_url="http://127.0.0.1:9",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=1),
    )
    with pytest.raises(BackendUnavailable) as caught:
        DynamoDbRecordStore(TABLE_NAME, client=client).get_run("acme", "agent-a", "run-1")
    assert caught.value.part == "store"


def cancelled(*codes: str) -> dict[str, Any]:
    return {
        "service_error_code": "TransactionCanceledException",
        "http_status_code": 400,
        "modeled_fields": {"CancellationReasons": [{"Code": c} for c in codes]},
    }


def test_a_transaction_that_lost_to_a_concurrent_writer_is_retried(aws_credentials: None) -> None:
    store, stubber, sleeps = stubbed_store()
    feedback, memory = make_feedback()
    stubber.add_response("put_item", {}, {"TableName": TABLE_NAME, "Item": ANY})  # the agent registry
    stubber.add_client_error("transact_write_items", **cancelled("None", "None", "TransactionConflict", "None"))
    stubber.add_response("transact_write_items", {})
    with stubber:
        assert store.add_feedback(feedback, memory) == (feedback, True)
    assert len(sleeps) == 1
    stubber.assert_no_pending_responses()


def test_a_missing_run_is_read_from_the_cancellation_reasons_by_position(aws_credentials: None) -> None:
    store, stubber, _ = stubbed_store()
    feedback, memory = make_feedback()
    stubber.add_response("put_item", {}, {"TableName": TABLE_NAME, "Item": ANY})
    stubber.add_client_error("transact_write_items", **cancelled("None", "None", "ConditionalCheckFailed", "None"))
    with stubber, pytest.raises(NotFound):
        store.add_feedback(feedback, memory)


def test_an_existing_feedback_is_read_back_when_its_put_was_the_failed_condition(aws_credentials: None) -> None:
    store, stubber, _ = stubbed_store()
    feedback, memory = make_feedback()
    stored = feedback_to_item(feedback)
    stubber.add_response("put_item", {}, {"TableName": TABLE_NAME, "Item": ANY})
    stubber.add_client_error("transact_write_items", **cancelled("ConditionalCheckFailed", "None", "None", "None"))
    stubber.add_response("get_item", {"Item": stored})
    with stubber:
        assert store.add_feedback(feedback, memory) == (feedback, False)


def test_runs_and_feedback_expire_by_ttl_after_the_retention_and_lessons_a_grace_period_after_their_age(moto):
    from agentmem.adapters.aws.dynamodb_records import EXPIRY_GRACE_DAYS

    create_table()
    store = DynamoDbRecordStore(TABLE_NAME, max_age_days=30, retention_days=120)
    store.put_run(make_run())
    store.add_feedback(*make_feedback())

    items = aws_client("dynamodb").scan(TableName=TABLE_NAME)["Items"]
    ttl = {item["sk"]["S"].split("#", 1)[0]: int(item["ttl"]["N"]) for item in items if "ttl" in item}
    day = 86_400
    assert ttl["RUN"] == ttl["FB"] == int(T0 + 120 * day)
    assert ttl["MEM"] == int(T0 + (30 + EXPIRY_GRACE_DAYS) * day)
    # The sweep removes nothing itself in DynamoDB: the TTL does.
    assert store.purge_runs_created_before("acme", T0 + 1) == 0


def test_a_run_is_indexed_under_its_verdict_and_feedback_moves_it_in_the_same_write(store: DynamoDbRecordStore) -> None:
    store.put_run(make_run("run-1"))
    item = raw_item("T#acme#A#agent-a", "RUN#run-1")
    assert item["gsi1pk"] == {"S": "T#acme#A#agent-a#RUN#none"}
    assert item["gsi1sk"] == {"S": "0001750000000.000000#run-1"}
    assert "verdict" not in item
    store.add_feedback(*make_feedback("run-1", rating="up"))
    item = raw_item("T#acme#A#agent-a", "RUN#run-1")
    assert item["gsi1pk"] == {"S": "T#acme#A#agent-a#RUN#up"} and item["verdict"] == {"S": "up"}
    assert item["gsi1sk"] == {"S": "0001750000000.000000#run-1"}


def test_the_review_queue_is_one_query_of_the_index_and_no_scan(store: DynamoDbRecordStore) -> None:
    for n in range(3):
        store.put_run(make_run(f"run-{n}", at=T0 + n))
    calls: list[tuple[str, dict[str, Any]]] = []
    store.client.meta.events.register(
        "provide-client-params.dynamodb.*", lambda params, model, **_: calls.append((model.name, params))
    )
    page = store.list_runs("acme", "agent-a", limit=2, verdict="none")
    assert [r.run_id for r in page.items] == ["run-2", "run-1"]
    assert [(name, params["IndexName"], params["Limit"]) for name, params in calls] == [("Query", "gsi1", 3)]

    calls.clear()
    store.list_runs("acme", "agent-a", limit=2, verdict="any")
    assert [name for name, _ in calls] == ["Query"] * 3  # one per verdict, merged by the sort key
