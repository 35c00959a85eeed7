"""One contract for every ItemStore adapter: SQLite locally, DynamoDB (under moto) in AWS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.ports.items import Item

from tests.contract.conftest import TABLE_NAME, create_table


@pytest.fixture(params=["sqlite", "dynamodb"])
def item_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from agentmem.adapters.local.item_store import SqliteItemStore

        store = SqliteItemStore(tmp_path / "items.db")
        yield store
        store.close()
    else:
        from agentmem.adapters.aws.dynamodb_items import DynamoDbItemStore

        request.getfixturevalue("moto")
        create_table()
        yield DynamoDbItemStore(TABLE_NAME)


def item(namespace: tuple[str, ...], key: str, at: float = 1_700_000_000.5, *, owner: str = "ana",
         kind: Any = "users", tenant: str = "acme", **value: Any) -> Item:
    return Item(tenant, kind, owner, namespace, key, value or {"text": f"value of {key} ✓"}, at, at)


def test_a_put_item_reads_back_exactly(item_store):
    stored = item_store.put(item(("memories",), "k1", n=1, nested={"a": [1, 2]}))
    assert item_store.get("acme", "users", "ana", ("memories",), "k1") == stored
    assert stored.value == {"n": 1, "nested": {"a": [1, 2]}}
    assert item_store.get("acme", "users", "ana", ("memories",), "missing") is None


def test_replacing_an_item_keeps_its_creation_time_and_updates_the_rest(item_store):
    item_store.put(item(("m",), "k", 100.0, text="old"))
    replaced = item_store.put(item(("m",), "k", 200.0, text="new"))
    assert (replaced.created_at, replaced.updated_at, replaced.value) == (100.0, 200.0, {"text": "new"})
    assert item_store.get("acme", "users", "ana", ("m",), "k") == replaced


def test_items_are_apart_per_tenant_owner_kind_and_owner(item_store):
    item_store.put(item(("m",), "k", text="ana's"))
    item_store.put(item(("m",), "k", owner="bob", text="bob's"))
    item_store.put(item(("m",), "k", kind="agents", text="agent ana's"))
    item_store.put(item(("m",), "k", tenant="other", text="other tenant's"))
    assert item_store.get("acme", "users", "ana", ("m",), "k").value == {"text": "ana's"}
    assert item_store.get("acme", "agents", "ana", ("m",), "k").value == {"text": "agent ana's"}
    assert item_store.namespaces("acme", "users", "carl") == []


def test_listing_under_a_prefix_takes_whole_labels_only_newest_first(item_store):
    item_store.put(item(("docs",), "a", 1.0))
    item_store.put(item(("docs", "2024"), "b", 2.0))
    item_store.put(item(("docsx",), "c", 3.0))
    item_store.put(item((), "d", 4.0))
    keys = [i.key for i in item_store.list_items("acme", "users", "ana", ("docs",), limit=10, offset=0)]
    assert keys == ["b", "a"]
    everything = item_store.list_items("acme", "users", "ana", (), limit=10, offset=0)
    assert [i.key for i in everything] == ["d", "c", "b", "a"]
    assert [i.key for i in item_store.list_items("acme", "users", "ana", (), limit=2, offset=1)] == ["c", "b"]


def test_get_many_returns_the_existing_ones(item_store):
    item_store.put(item(("m",), "a"))
    item_store.put(item(("n",), "b"))
    found = item_store.get_many("acme", "users", "ana", [(("m",), "a"), (("n",), "b"), (("m",), "zz")])
    assert sorted((i.namespace, i.key) for i in found) == [(("m",), "a"), (("n",), "b")]


def test_namespaces_are_distinct_and_sorted_including_the_owner_root(item_store):
    for ns, key in [(("b", "x"), "1"), (("a",), "1"), (("a",), "2"), ((), "r")]:
        item_store.put(item(ns, key))
    assert item_store.namespaces("acme", "users", "ana") == [(), ("a",), ("b", "x")]


def test_delete_removes_one_item_and_says_whether_it_was_there(item_store):
    item_store.put(item(("m",), "a"))
    assert item_store.delete("acme", "users", "ana", ("m",), "a") is True
    assert item_store.delete("acme", "users", "ana", ("m",), "a") is False
    assert item_store.get("acme", "users", "ana", ("m",), "a") is None


def test_delete_owner_removes_that_owner_only(item_store):
    item_store.put(item(("m",), "a"))
    item_store.put(item(("n",), "b"))
    item_store.put(item(("m",), "a", owner="bob"))
    assert item_store.delete_owner("acme", "users", "ana") == 2
    assert item_store.namespaces("acme", "users", "ana") == []
    assert item_store.get("acme", "users", "bob", ("m",), "a") is not None


# -- expiry (LangGraph's TTL) -----------------------------------------------------------------------

T0 = 1_700_000_000.0


def expiring(namespace: tuple[str, ...], key: str, expires_in: float, at: float = T0) -> Item:
    return Item("acme", "users", "ana", namespace, key, {"text": key}, at, at, at + expires_in, expires_in / 60)


def test_an_expired_item_is_never_read_and_a_live_one_is(item_store):
    item_store.put(expiring(("m",), "short", 60))
    item_store.put(expiring(("m",), "long", 600))
    item_store.put(expiring(("gone",), "short", 60))
    item_store.put(item(("m",), "forever", T0))
    stored = item_store.get("acme", "users", "ana", ("m",), "short", now=T0 + 59)
    assert stored is not None and (stored.expires_at, stored.ttl_minutes) == (T0 + 60, 1.0)

    later = T0 + 61
    assert item_store.get("acme", "users", "ana", ("m",), "short", now=later) is None
    found = item_store.get_many("acme", "users", "ana", [(("m",), "short"), (("m",), "long")], now=later)
    assert [i.key for i in found] == ["long"]
    listed = item_store.list_items("acme", "users", "ana", (), limit=10, offset=0, now=later)
    assert sorted(i.key for i in listed) == ["forever", "long"]
    assert item_store.namespaces("acme", "users", "ana", now=later) == [("m",)]
    # Without a `now` a reader sees what is stored (the service always gives one).
    assert item_store.get("acme", "users", "ana", ("m",), "short") is not None


def test_set_expiry_moves_an_items_expiry_and_ignores_an_item_that_is_gone(item_store):
    item_store.put(expiring(("m",), "k", 60))
    item_store.set_expiry("acme", "users", "ana", ("m",), "k", T0 + 300)
    assert item_store.get("acme", "users", "ana", ("m",), "k", now=T0 + 200).expires_at == T0 + 300
    item_store.set_expiry("acme", "users", "ana", ("m",), "never-put", T0 + 300)
    assert item_store.get("acme", "users", "ana", ("m",), "never-put") is None
    # Written again without a TTL, it lives for ever.
    item_store.put(item(("m",), "k", T0 + 1))
    again = item_store.get("acme", "users", "ana", ("m",), "k", now=T0 + 10_000)
    assert again is not None and again.expires_at is None and again.ttl_minutes is None


def test_in_dynamodb_an_expiring_item_carries_the_tables_ttl_attribute_in_whole_seconds(request, tmp_path):
    from agentmem.adapters.aws.dynamodb_items import DynamoDbItemStore, item_sk, items_pk

    from tests.contract.conftest import aws_client

    request.getfixturevalue("moto")
    create_table()
    store = DynamoDbItemStore(TABLE_NAME)
    store.put(expiring(("m",), "k", 90.5))
    key = {"pk": {"S": items_pk("acme", "users", "ana")}, "sk": {"S": item_sk(("m",), "k")}}
    raw = aws_client("dynamodb").get_item(TableName=TABLE_NAME, Key=key)["Item"]
    assert raw["ttl"] == {"N": str(int(T0) + 91)}  # rounded up: never deleted before it expired
    store.put(item(("m",), "k", T0 + 1))
    assert "ttl" not in aws_client("dynamodb").get_item(TableName=TABLE_NAME, Key=key)["Item"]
