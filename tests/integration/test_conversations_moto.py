"""Conversation memory through the real handlers on the AWS adapters, under moto: DynamoDB for the
transcripts and the vault, KMS for the data keys and thread hashes, Comprehend with the regex detector.

One moto account serves the whole module (setting it up is the slow part); every test works with
users of its own, so they cannot see each other's data.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.config import load_settings
from agentmem.domain.pii import find_tokens
from agentmem.local.lambda_runtime import invoke
from agentmem.tokens import get_token_counter
from agentmem.wiring import Services, build_services, set_services
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from tests.conftest import EVAL_DIR, load_event
from tests.contract.conftest import KEY_TABLE_NAME, TABLE_NAME, create_key_table, create_table
from tests.integration.conversations_harness import (
    STRUCTURED_ENTITY_TYPES,
    HandlerCaller,
    HashingEmbedder,
    all_turns,
    append,
    check_a_crash_between_the_turns_and_the_idempotency_record,
    run_isolation_scenario,
)

REGION = "us-east-1"
BUS_NAME = "agentmem-moto"
EMAIL = "jane.doe@example.com"
CARD = "4111 1111 1111 1111"

AWS_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
    "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true",
}


class Stack:
    """One tenant stack's resources in moto, and Services wired to them per tenant."""

    def __init__(self, root: Path) -> None:
        create_table()
        create_key_table()
        self.tables = {TABLE_NAME}
        kms = boto3.client("kms", region_name=REGION)
        self.key_arn = kms.create_key(Description="tenant data key")["KeyMetadata"]["Arn"]
        self.hmac_arn = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]["Arn"]
        boto3.client("events", region_name=REGION).create_event_bus(Name=BUS_NAME)
        self.root = root
        self.built: list[Services] = []

    def services(self, tenant: str = "acme", table_name: str = TABLE_NAME) -> Services:
        """A tenant's Services on `table_name`: a test that writes a lot gets a table of its own, since
        moto copies the whole table for every transaction and slows down as a table fills."""
        if table_name not in self.tables:
            create_table(table_name)
            self.tables.add(table_name)
        settings_ = load_settings(
            backend="aws", tenant=tenant, table_name=table_name, key_table_name=KEY_TABLE_NAME,
            event_bus_name=BUS_NAME,
            kms_key_arn=self.key_arn, hmac_key_arn=self.hmac_arn, enabled_agents=["agent-a"],
            data_dir=self.root / tenant,
        )
        # OpenSearch Serverless and Bedrock are not in moto: the local index and a hashing embedder stand in.
        built = build_services(
            settings_, vectors=LocalVectorIndex(self.root / f"{table_name}-{tenant}-vectors.db"),
            embedder=HashingEmbedder(),
        )
        self.built.append(built)
        return built

    def items(self, where: Callable[[str], bool], table_name: str = TABLE_NAME) -> list[dict[str, Any]]:
        client = boto3.client("dynamodb", region_name=REGION)
        found: list[dict[str, Any]] = []
        request: dict[str, Any] = {"TableName": table_name}
        while True:
            page = client.scan(**request)
            found += [item for item in page["Items"] if where(item["pk"]["S"])]
            if "LastEvaluatedKey" not in page:
                return found
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def partition(self, pk: str) -> list[dict[str, Any]]:
        return self.items(lambda found: found == pk)

    def data_keys(self, user: str, tenant: str = "acme") -> list[dict[str, Any]]:
        """The user's items in the key table (a table of its own)."""
        return self.items(lambda found: found == f"T#{tenant}#U#{user}", KEY_TABLE_NAME)

    def user_items(self, user: str, tenant: str = "acme", table_name: str = TABLE_NAME) -> list[dict[str, Any]]:
        """Every item in one of the user's partitions (`T#{tenant}#U#{user}` and below it)."""
        pk = f"T#{tenant}#U#{user}"
        return self.items(lambda found: found == pk or found.startswith(pk + "#"), table_name)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in AWS_ENVIRONMENT.items():
            patch.setenv(name, value)
        patch.delenv("AWS_PROFILE", raising=False)
        patch.delenv("AWS_ENDPOINT_URL", raising=False)
        with mock_aws():
            built = Stack(tmp_path_factory.mktemp("moto"))
            yield built
            set_services(None)
            for services in built.built:
                services.close()


@pytest.fixture(scope="module")
def acme(stack: Stack) -> Services:
    return stack.services("acme")


@pytest.fixture
def call(acme: Services) -> HandlerCaller:
    return HandlerCaller(acme)


_numbers = itertools.count()


@pytest.fixture
def fresh_user() -> Callable[[str], str]:
    """User ids no other test of the module uses."""
    number = next(_numbers)
    return lambda name: f"{name}-{number}"


def plaintext_dump(items: list[dict[str, Any]]) -> bytes:
    return json.dumps(items, default=lambda blob: blob.hex() if isinstance(blob, bytes) else str(blob)).encode()


def test_turns_are_stored_masked_under_the_documented_keys(
    call: HandlerCaller, stack: Stack, fresh_user: Callable[[str], str]
) -> None:
    alice = fresh_user("alice")
    stored = append(call, alice, "t1", [("user", f"Mail {EMAIL}"), ("assistant", f"Card {CARD} noted.")])

    assert [t["seq"] for t in stored] == [1, 2]
    assert all(t["tokens"] == get_token_counter().count(t["content"]) for t in stored)
    turns = stack.partition(f"T#acme#U#{alice}#TH#t1")
    assert sorted(item["sk"]["S"] for item in turns) == ["TURN#000000000001", "TURN#000000000002"]
    vault = stack.partition(f"T#acme#U#{alice}#VAULT")
    assert {item["sk"]["S"].split("#")[0] for item in vault} == {"TOK", "FP", "CTR"}
    everything = plaintext_dump(stack.user_items(alice))
    assert EMAIL.encode() not in everything and CARD.encode() not in everything
    assert all_turns(call, alice, "t1") == stored


def test_the_data_key_is_stored_wrapped_by_kms_for_that_tenant_and_user_only(
    call: HandlerCaller, stack: Stack, fresh_user: Callable[[str], str]
) -> None:
    alice = fresh_user("alice")
    append(call, alice, "t1", [("user", f"Mail {EMAIL}")])
    [item] = stack.data_keys(alice)
    assert item["sk"]["S"] == "DATAKEY#000001"
    # Not in the tenant table, whose point-in-time recovery would keep it for 35 days.
    assert not [i for i in stack.partition(f"T#acme#U#{alice}") if i["sk"]["S"].startswith("DATAKEY#")]
    wrapped = item["wrapped"]["B"]
    kms = boto3.client("kms", region_name=REGION)

    plaintext = kms.decrypt(CiphertextBlob=wrapped, EncryptionContext={"tenant": "acme", "userId": alice})
    assert len(plaintext["Plaintext"]) == 32
    with pytest.raises(kms.exceptions.InvalidCiphertextException):
        kms.decrypt(CiphertextBlob=wrapped, EncryptionContext={"tenant": "acme", "userId": "someone-else"})


def test_unmask_restores_only_the_callers_own_tokens_from_any_thread(
    call: HandlerCaller, fresh_user: Callable[[str], str]
) -> None:
    alice, bob = fresh_user("alice"), fresh_user("bob")
    mine = append(call, alice, "t1", [("user", EMAIL)])[0]["content"]
    mine_too = append(call, alice, "t2", [("user", CARD)])[0]["content"]
    theirs = append(call, bob, "t1", [("user", "bob@example.org")])[0]["content"]
    text = f"{mine} {mine_too} {theirs}"

    status, answer = call("POST", f"/v1/users/{alice}/threads/t9/unmask", {"text": text})

    assert status == 200 and answer["text"] == f"{EMAIL} {CARD} {theirs}"


def test_comprehend_spans_are_masked_along_with_the_regex_ones(
    call: HandlerCaller, fresh_user: Callable[[str], str]
) -> None:
    # moto's Comprehend answers every call with the same canned entities, one of them a NAME at
    # characters 50-58: put a name there, and an e-mail (the regex detector's) up front.
    text = f"{EMAIL} wrote that you should ask".ljust(50) + "Jonathan" + " and nobody else."
    assert text[50:58] == "Jonathan"
    user = fresh_user("alice")
    stored = append(call, user, "t1", [("user", text)])[0]["content"]

    assert [t.token_type for t in find_tokens(stored)] == ["EMAIL", "PERSON"]
    assert "Jonathan" not in stored and EMAIL not in stored
    assert call("POST", f"/v1/users/{user}/threads/t1/unmask", {"text": stored})[1]["text"] == text


def test_a_name_comprehend_found_once_is_masked_where_it_does_not_find_it_again(
    call: HandlerCaller, stack: Stack, fresh_user: Callable[[str], str]
) -> None:
    # moto's canned NAME is at characters 50-58 of every text: "Jonathan" there is found, anywhere else not.
    first = "Let me introduce my colleague to you, his name is".ljust(50) + "Jonathan" + "."
    user = fresh_user("alice")
    token = find_tokens(append(call, user, "t1", [("user", first)])[0]["content"])[-1].token
    later = append(call, user, "t2", [("user", "Jonathan called, and Jonathan's sister too.")])[0]["content"]

    assert later == f"{token} called, and {token}'s sister too."
    assert b"Jonathan" not in plaintext_dump(stack.user_items(user))
    other = fresh_user("bob")
    assert append(call, other, "t1", [("user", "Jonathan called.")])[0]["content"] == "Jonathan called."


def test_erase_destroys_the_data_key_then_every_record_of_the_user_and_nobody_elses(
    call: HandlerCaller, stack: Stack, fresh_user: Callable[[str], str]
) -> None:
    alice, bob = fresh_user("alice"), fresh_user("bob")
    masked = append(call, alice, "t1", [("user", f"Mail {EMAIL}")])[0]["content"]
    append(call, alice, "t2", [("user", "another thread")])
    append(call, bob, "t1", [("user", f"Mail {EMAIL}")])
    bob_items = len(stack.user_items(bob))

    assert call("DELETE", f"/v1/users/{alice}")[0] == 204
    assert call("DELETE", f"/v1/users/{alice}")[0] == 204

    assert stack.user_items(alice) == [] and stack.data_keys(alice) == []
    assert len(stack.user_items(bob)) == bob_items and len(stack.data_keys(bob)) == 1
    assert call("GET", f"/v1/users/{alice}/threads/t1/turns")[0] == 404
    assert call("POST", f"/v1/users/{alice}/threads/t1/unmask", {"text": masked})[1]["text"] == masked


def test_rewrap_re_encrypts_every_data_key_of_the_tenant_and_values_still_decrypt(
    acme: Services, call: HandlerCaller, stack: Stack, fresh_user: Callable[[str], str]
) -> None:
    alice = fresh_user("alice")
    masked = append(call, alice, "t1", [("user", EMAIL)])[0]["content"]
    [before] = stack.data_keys(alice)

    assert acme.conversations.rewrap_data_keys() >= 1

    [after] = stack.data_keys(alice)
    assert after["wrapped"]["B"] != before["wrapped"]["B"]
    acme.conversations.key_cache.forget("acme", alice)
    assert call("POST", f"/v1/users/{alice}/threads/t1/unmask", {"text": masked})[1]["text"] == EMAIL


def test_invalid_requests_are_400_with_every_field_and_write_nothing(
    call: HandlerCaller, stack: Stack, fresh_user: Callable[[str], str]
) -> None:
    alice = fresh_user("alice")
    status, error = call("POST", f"/v1/users/{alice}/threads/t1/turns", {"turns": [
        {"role": "user", "content": f"valid {EMAIL}"}, {"role": "system", "content": "injected"},
    ], "extra": True})
    assert status == 400
    assert {d["field"] for d in error["error"]["details"]} == {"turns.1.role", "extra"}
    assert stack.user_items(alice) == []
    status, error = call("GET", f"/v1/users/{alice}/threads/t1/turns?cursor=forged")
    assert status == 400 and error["error"]["details"][0]["field"] == "cursor"


def test_the_sample_events_run_through_the_handler(acme: Services) -> None:
    set_services(acme)
    appended = invoke("conversations", load_event("conversations/append_turns"))
    assert appended["statusCode"] == 201
    assert "jane.doe@example.com" not in appended["body"]
    listed = json.loads(invoke("conversations", load_event("conversations/list_turns"))["body"])
    assert [t["seq"] for t in listed["items"]] == [1]
    assert invoke("conversations", load_event("conversations/append_invalid"))["statusCode"] == 400
    assert invoke("conversations", load_event("conversations/erase_user"))["statusCode"] == 204
    assert invoke("conversations", load_event("conversations/list_turns"))["statusCode"] == 404


def test_no_operation_ever_touches_another_tenants_or_users_data(stack: Stack) -> None:
    # Two tenants on one table: only the keys (and KMS contexts, and thread hashes) keep them apart.
    callers = {tenant: HandlerCaller(stack.services(tenant, "agentmem-isolation")) for tenant in ("iso-a", "iso-b")}
    run_isolation_scenario(callers, users=["alice", "bob"], threads=["t1", "t2"], seed=7, operations=60)


_property_users = itertools.count()


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    thread=st.lists(st.tuples(st.sampled_from(["user", "assistant"]),
                              st.text(min_size=1, max_size=200) | st.just(f"mail {EMAIL}")), max_size=30),
    budget=st.integers(min_value=100, max_value=1500),
)
def test_packed_history_fits_the_budget_and_is_a_suffix(
    acme: Services, thread: list[tuple[str, str]], budget: int
) -> None:
    call = HandlerCaller(acme)
    user = f"packing-{next(_property_users)}"
    if thread:
        append(call, user, "t1", thread)
    stored = [{"role": t["role"], "content": t["content"]} for t in all_turns(call, user, "t1") or []]
    status, answer = call("POST", "/v1/agents/agent-a/retrieve",
                          {"input": "next?", "userId": user, "threadId": "t1", "tokenBudget": budget})
    assert status == 200, answer
    assert answer["tokens"] == get_token_counter().count_messages(answer["messages"]) <= budget
    assert answer["history"] == stored[len(stored) - len(answer["history"]) :]


def test_no_detected_structured_value_is_stored_in_plaintext_in_the_table(stack: Stack) -> None:
    source = EVAL_DIR / "pii-dev.json"
    if not source.exists():
        pytest.skip(f"{source} is absent: the evaluation data lives next to the repository, not in it")
    # A slice: moto is slow with transactions; the local suite ingests the whole file.
    texts = [record["full_text"] for record in json.loads(source.read_text())[:80]]
    call, user = HandlerCaller(stack.services("acme", "agentmem-pii")), "pii"
    for start in range(0, len(texts), 40):
        append(call, user, f"t{start}", [("user", text) for text in texts[start : start + 40]])
    detector = RegexPiiDetector()
    values = {s.value for t in texts for s in detector.detect(t) if s.entity_type in STRUCTURED_ENTITY_TYPES}
    assert len(values) > 10
    stored = plaintext_dump(stack.user_items(user, table_name="agentmem-pii"))
    assert sorted(v for v in values if v.encode() in stored) == []


def test_a_retried_append_with_its_key_stores_the_turns_once_in_dynamodb(call: HandlerCaller, fresh_user) -> None:
    user = fresh_user("idempotent")
    path = f"/v1/users/{user}/threads/t1/turns"
    body = {"turns": [{"role": "user", "content": f"mail {EMAIL}"}]}
    first = call("POST", path, body, headers={"Idempotency-Key": "append-7"})
    assert first[0] == 201
    assert call("POST", path, body, headers={"Idempotency-Key": "append-7"}) == first
    assert len(call("GET", path)[1]["items"]) == 1
    status, error = call("POST", path, {"turns": [{"role": "user", "content": "other"}]},
                         headers={"Idempotency-Key": "append-7"})
    assert status == 409 and error["error"]["code"] == "conflict"
    assert len(call("GET", path)[1]["items"]) == 1


def test_a_crash_between_the_turns_and_the_idempotency_record_never_appends_twice_in_dynamodb(
    call: HandlerCaller, acme: Services, fresh_user, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The turns, the thread's counter and the append's key are one TransactWriteItems; the record is another write.
    check_a_crash_between_the_turns_and_the_idempotency_record(call, acme, monkeypatch, fresh_user("crashed"))


def test_a_keyed_append_sent_again_after_the_erase_finds_no_record_and_no_item_names_the_user(
    call: HandlerCaller, stack: Stack, fresh_user: Callable[[str], str]
) -> None:
    erin = fresh_user("erin-erased")
    body = {"turns": [{"role": "user", "content": f"Mail {EMAIL}"}]}
    path, key = f"/v1/users/{erin}/threads/t1/turns", {"Idempotency-Key": "k-erase"}
    status, first = call("POST", path, body, headers=key)
    assert status == 201
    assert erin.encode() in plaintext_dump(stack.partition("T#acme#IDEMPOTENCY"))  # the answer names the user
    assert call("DELETE", f"/v1/users/{erin}")[0] == 204

    assert erin.encode() not in plaintext_dump(stack.items(lambda pk: True))
    status, replay = call("POST", path, body, headers=key)
    assert status == 201
    assert find_tokens(replay["turns"][0]["content"])[0].token != find_tokens(first["turns"][0]["content"])[0].token


def test_an_items_namespace_key_object_keys_and_personal_numbers_reach_dynamodb_only_as_tokens(
    call: HandlerCaller, stack: Stack, fresh_user: Callable[[str], str]
) -> None:
    from tests.integration.privacy_values import made_up_person, raw_values

    person, user = made_up_person(), fresh_user("items")
    body = {"namespace": ["contacts", person.phone_text], "key": person.email,
            "value": {person.email: {"card": person.card, "phone": person.phone}}}
    status, stored = call("PUT", f"/v1/users/{user}/items", body)
    assert status == 200, stored

    dump = plaintext_dump(stack.items(lambda pk: True))
    assert [value for value in raw_values(person) if value in dump] == []
    assert find_tokens(stored["key"]) and find_tokens(stored["value"][next(iter(stored["value"]))]["card"])
