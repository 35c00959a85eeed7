"""One contract for both persistence layers of powertools' idempotency utility (feedback's Idempotency-Key).

`sqlite` is agentmem's own `SqliteIdempotencyStore` (local mode); `dynamodb` is powertools'
`DynamoDBPersistenceLayer` configured on the tenant table as AWS runs it (moto, the table
built from the synthesised template's key schema). Each test drives the layer through the
calls powertools makes (save in progress, save success, get, delete) or through the utility
itself (`idempotent_function`), configured exactly as the feedback function configures it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentmem.adapters.local.idempotency_store import SqliteIdempotencyStore
from agentmem.api.idempotency import (
    EXPIRES_AFTER_SECONDS,
    FEEDBACK_KEY_PREFIX,
    dynamodb_store,
    feedback_config,
    feedback_submission,
    idempotency_partition,
)
from agentmem.domain.errors import NotFound
from agentmem.local.lambda_runtime import LocalLambdaContext
from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import STATUS_CONSTANTS

from tests.contract.conftest import TABLE_NAME, aws_client, create_table

TENANT = "acme"
IN_PROGRESS = STATUS_CONSTANTS["INPROGRESS"]
COMPLETED = STATUS_CONSTANTS["COMPLETED"]
EXPIRED = STATUS_CONSTANTS["EXPIRED"]
LAMBDA_TIME_LEFT_MS = 30_000


def submission(
    key: str = "review-1", rating: str = "down", comment: str | None = "Not a cliché.", tenant: str = TENANT
) -> dict[str, Any]:
    """What the feedback function hands powertools for one submission."""
    return feedback_submission(tenant, "auditor", "run-1", key, rating, comment)


@dataclass
class StoreUnderTest:
    name: str
    # A new layer instance on the same storage: another Lambda container, or another local process.
    open_raw: Callable[[], BasePersistenceLayer]

    def open(self, expires_after_seconds: int = EXPIRES_AFTER_SECONDS) -> BasePersistenceLayer:
        layer = self.open_raw()
        layer.configure(feedback_config(expires_after_seconds=expires_after_seconds), key_prefix=FEEDBACK_KEY_PREFIX)
        return layer


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreUnderTest]:
    if request.param == "sqlite":
        opened: list[SqliteIdempotencyStore] = []

        def open_sqlite() -> BasePersistenceLayer:
            opened.append(SqliteIdempotencyStore(tmp_path / "idempotency.db"))
            return opened[-1]

        yield StoreUnderTest("sqlite", open_sqlite)
        for layer in opened:
            layer.close()
    else:
        request.getfixturevalue("moto")
        create_table()
        yield StoreUnderTest("dynamodb", lambda: dynamodb_store(TABLE_NAME, TENANT, client=aws_client("dynamodb")))


# The persistence calls powertools makes


def test_an_in_progress_record_is_stored_with_its_deadlines(store: StoreUnderTest) -> None:
    layer = store.open()
    before = time.time()
    layer.save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)

    record = layer.get_record(submission())
    assert record is not None and record.status == IN_PROGRESS
    assert before + EXPIRES_AFTER_SECONDS - 2 <= record.expiry_timestamp <= time.time() + EXPIRES_AFTER_SECONDS + 1
    assert record.in_progress_expiry_timestamp is not None
    assert before * 1000 + LAMBDA_TIME_LEFT_MS - 1000 <= record.in_progress_expiry_timestamp
    assert record.in_progress_expiry_timestamp <= time.time() * 1000 + LAMBDA_TIME_LEFT_MS


def test_a_second_in_progress_for_the_same_key_is_refused_with_the_stored_record(store: StoreUnderTest) -> None:
    store.open().save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    with pytest.raises(IdempotencyItemAlreadyExistsError) as refused:
        store.open().save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    old = refused.value.old_data_record
    assert old is not None and old.status == IN_PROGRESS


def test_success_stores_the_answer_to_replay(store: StoreUnderTest) -> None:
    layer = store.open()
    answer = {"feedbackId": "fb_1", "memoryId": "mem_1", "status": "accepted"}
    layer.save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    layer.save_success(submission(), answer)

    record = store.open().get_record(submission())
    assert record is not None and record.status == COMPLETED
    assert record.response_json_as_dict() == answer
    with pytest.raises(IdempotencyItemAlreadyExistsError):
        store.open().save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)


def test_the_same_key_with_another_payload_is_a_validation_error(store: StoreUnderTest) -> None:
    layer = store.open()
    layer.save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    layer.save_success(submission(), {"feedbackId": "fb_1"})

    with pytest.raises(IdempotencyValidationError):
        layer.get_record(submission(rating="up"))
    with pytest.raises(IdempotencyValidationError):
        store.open().save_inprogress(submission(comment="another"), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)


def test_no_comment_and_an_empty_comment_are_the_same_body(store: StoreUnderTest) -> None:
    layer = store.open()
    layer.save_inprogress(submission(comment=None), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    layer.save_success(submission(comment=None), {"feedbackId": "fb_1"})

    record = store.open().get_record(submission(comment=""))
    assert record is not None and record.response_json_as_dict() == {"feedbackId": "fb_1"}


def test_delete_frees_the_key(store: StoreUnderTest) -> None:
    layer = store.open()
    layer.save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    layer.delete_record(submission(), NotFound("run not found"))

    with pytest.raises(IdempotencyItemNotFoundError):
        layer.get_record(submission())
    store.open().save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)


def test_keys_and_tenants_are_independent(store: StoreUnderTest) -> None:
    layer = store.open()
    layer.save_inprogress(submission("review-1"), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    layer.save_inprogress(submission("review-2"), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    layer.save_inprogress(submission("review-1", tenant="globex"), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    with pytest.raises(IdempotencyItemNotFoundError):
        layer.get_record(submission("review-3"))


def test_an_expired_record_no_longer_holds_its_key(store: StoreUnderTest) -> None:
    expired_at_once = store.open(expires_after_seconds=-10)
    expired_at_once.save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    expired_at_once.save_success(submission(), {"feedbackId": "fb_old"})

    fresh = store.open()
    fresh.save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    record = fresh.get_record(submission())
    assert record is not None and record.status == IN_PROGRESS and record.response_json_as_dict() is None


def test_an_in_progress_record_past_its_lambda_deadline_no_longer_holds_its_key(store: StoreUnderTest) -> None:
    # The first invocation was killed (timed out) before it could save success or delete its record.
    store.open().save_inprogress(submission(), remaining_time_in_millis=-1_000)
    store.open().save_inprogress(submission(), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)


# The utility itself, as the feedback function uses it


class CountingSubmission:
    """The function made idempotent: counts its runs, and can be held mid-run to race a second request."""

    def __init__(self) -> None:
        self.runs = 0
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.fail_with: Exception | None = None

    def __call__(self, *, submission: dict[str, Any]) -> dict[str, str]:
        self.runs += 1
        self.started.set()
        assert self.release.wait(10), "the test never released the first request"
        if self.fail_with is not None:
            raise self.fail_with
        return {"feedbackId": f"fb_{self.runs}", "memoryId": f"mem_{self.runs}", "status": "accepted"}


def made_idempotent(layer: BasePersistenceLayer, function: CountingSubmission) -> Callable[..., Any]:
    def submit_feedback(*, submission: dict[str, Any]) -> dict[str, str]:
        return function(submission=submission)

    return idempotent_function(
        submit_feedback,
        data_keyword_argument="submission",
        persistence_store=layer,
        # With the invocation's context, as the handler passes it: in-progress records get a deadline.
        config=feedback_config(LocalLambdaContext("feedback")),
        key_prefix=FEEDBACK_KEY_PREFIX,
    )


def test_the_utility_replays_the_first_answer_and_runs_the_function_once(store: StoreUnderTest) -> None:
    function = CountingSubmission()
    first = made_idempotent(store.open_raw(), function)(submission=submission())
    again = [made_idempotent(store.open_raw(), function)(submission=submission()) for _ in range(3)]

    assert function.runs == 1 and again == [first] * 3
    with pytest.raises(IdempotencyValidationError):
        made_idempotent(store.open_raw(), function)(submission=submission(rating="up"))
    assert function.runs == 1


def test_a_concurrent_request_with_the_same_key_is_already_in_progress(store: StoreUnderTest) -> None:
    function = CountingSubmission()
    function.release.clear()
    answers: list[dict[str, str]] = []
    first = threading.Thread(
        target=lambda: answers.append(made_idempotent(store.open_raw(), function)(submission=submission()))
    )
    first.start()
    try:
        assert function.started.wait(10)
        with pytest.raises(IdempotencyAlreadyInProgressError):
            made_idempotent(store.open_raw(), function)(submission=submission())
    finally:
        function.release.set()
        first.join(10)
    assert function.runs == 1
    assert made_idempotent(store.open_raw(), function)(submission=submission()) == answers[0]


def test_a_failed_call_leaves_no_record_behind(store: StoreUnderTest) -> None:
    function = CountingSubmission()
    function.fail_with = NotFound("run run-1 not found")
    with pytest.raises(NotFound):
        made_idempotent(store.open_raw(), function)(submission=submission())

    function.fail_with = None
    answer = made_idempotent(store.open_raw(), function)(submission=submission())
    assert function.runs == 2 and answer["feedbackId"] == "fb_2"


# Where each layer keeps its records


def test_dynamodb_records_live_in_the_tenant_partition_under_the_table_ttl(moto: None) -> None:
    from infra.template_schema import table_ttl_attribute_from_template

    create_table()
    layer = dynamodb_store(TABLE_NAME, TENANT, client=aws_client("dynamodb"))
    # Bracketed by the times around the write (powertools reads the clock itself), so a slow machine
    # cannot push it out of bounds.
    before = time.time()
    made_idempotent(layer, CountingSubmission())(submission=submission())
    after = time.time()

    (item,) = aws_client("dynamodb").scan(TableName=TABLE_NAME)["Items"]
    assert item["pk"]["S"] == idempotency_partition(TENANT) == f"T#{TENANT}#IDEMPOTENCY"
    assert item["sk"]["S"].startswith(f"{FEEDBACK_KEY_PREFIX}#") and "review-1" not in item["sk"]["S"]
    ttl_attribute = table_ttl_attribute_from_template()
    assert ttl_attribute is not None
    assert int(before) + EXPIRES_AFTER_SECONDS <= int(item[ttl_attribute]["N"]) <= after + EXPIRES_AFTER_SECONDS
    assert item["status"]["S"] == COMPLETED


def test_sqlite_records_survive_a_restart_and_expired_ones_are_purged(tmp_path: Path) -> None:
    path = tmp_path / "idempotency.db"
    first = SqliteIdempotencyStore(path)
    first.configure(feedback_config(expires_after_seconds=-10), key_prefix=FEEDBACK_KEY_PREFIX)
    first.save_inprogress(submission("stale"), remaining_time_in_millis=LAMBDA_TIME_LEFT_MS)
    first.close()
    second = SqliteIdempotencyStore(path)
    second.configure(feedback_config(), key_prefix=FEEDBACK_KEY_PREFIX)
    made_idempotent(second, CountingSubmission())(submission=submission())
    second.close()

    third = SqliteIdempotencyStore(path)
    third.configure(feedback_config(), key_prefix=FEEDBACK_KEY_PREFIX)
    try:
        record = third.get_record(submission())
        assert record is not None and record.status == COMPLETED
        with pytest.raises(IdempotencyItemNotFoundError):
            third.get_record(submission("stale"))
    finally:
        third.close()


def test_the_wiring_builds_the_layer_of_each_backend_only_when_first_asked(tmp_path: Path, moto: None) -> None:
    from agentmem.config import load_settings
    from agentmem.wiring import build_idempotency_store
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    local = build_idempotency_store(load_settings(backend="local", data_dir=tmp_path))
    try:
        assert isinstance(local, SqliteIdempotencyStore) and local.path == tmp_path / "idempotency.db"
    finally:
        local.close()
    aws = build_idempotency_store(
        load_settings(
            backend="aws", tenant=TENANT, table_name=TABLE_NAME, key_table_name="keys", event_bus_name="bus",
            kms_key_arn="arn:key",
        )
    )
    assert isinstance(aws, DynamoDBPersistenceLayer)
    assert (aws.table_name, aws.key_attr, aws.sort_key_attr) == (TABLE_NAME, "pk", "sk")
    assert aws.static_pk_value == f"T#{TENANT}#IDEMPOTENCY" and aws.expiry_attr == "ttl"
