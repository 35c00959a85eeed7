"""`AgentMemStore`, LangGraph's `BaseStore` API, against `agentmem serve`'s HTTP server (real HTTP, MiniLM)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentmem.client import MemoryClient
from agentmem.integrations.langgraph_store import AgentMemStore
from agentmem.local.server import create_app
from langgraph.store.base import InvalidNamespaceError

from tests.integration.served import serving


@pytest.fixture
def served(tmp_path: Path, minilm) -> Iterator[tuple[AgentMemStore, MemoryClient]]:
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    with serving(app) as url:
        client = MemoryClient(url)
        yield AgentMemStore(client), client
        client.close()


def test_put_get_and_delete_round_trip_under_a_user_and_an_agent(served):
    store, _ = served
    store.put(("users", "u-1", "prefs"), "food", {"likes": "ramen", "level": 3})
    store.put(("agents", "planner", "notes"), "food", {"likes": "agent's own note"})
    got = store.get(("users", "u-1", "prefs"), "food")
    assert got is not None
    assert (got.namespace, got.key, got.value) == (("users", "u-1", "prefs"), "food", {"likes": "ramen", "level": 3})
    assert got.created_at <= got.updated_at
    assert store.get(("agents", "planner", "notes"), "food").value == {"likes": "agent's own note"}
    assert store.get(("users", "u-2", "prefs"), "food") is None
    store.delete(("users", "u-1", "prefs"), "food")
    assert store.get(("users", "u-1", "prefs"), "food") is None
    assert store.get(("agents", "planner", "notes"), "food") is not None


def test_search_ranks_by_meaning_within_the_prefix_and_applies_filters(served):
    store, _ = served
    ns = ("users", "u-1", "memories")
    store.put(ns, "m1", {"text": "I love hiking in the mountains on weekends", "kind": "hobby", "year": 2023})
    store.put(ns, "m2", {"text": "My favourite food is spicy Thai curry", "kind": "food", "year": 2024})
    store.put(ns, "m3", {"text": "I play the cello in a small orchestra", "kind": "hobby", "year": 2025})
    store.put(("users", "u-1", "other"), "x", {"text": "Curry and noodles every day", "kind": "food"})
    hits = store.search((*ns[:2], "memories"), query="what does the user like to eat?")
    assert hits[0].key == "m2"
    assert all(h.namespace == ns for h in hits) and len(hits) == 3
    assert hits[0].score is not None and hits[0].score > hits[-1].score
    hobbies = store.search(("users", "u-1"), filter={"kind": "hobby", "year": {"$gte": 2024}})
    assert [h.key for h in hobbies] == ["m3"] and hobbies[0].score is None
    assert {h.key for h in store.search(("users", "u-1"), limit=10)} == {"m1", "m2", "m3", "x"}


def test_an_item_put_unindexed_is_never_ranked_and_follows_the_ranked_ones_without_a_score(served):
    store, _ = served
    store.put(("users", "u-1", "m"), "secret", {"text": "spicy Thai curry"}, index=False)
    store.put(("users", "u-1", "m"), "seen", {"text": "cello lessons"})
    hits = store.search(("users", "u-1"), query="Thai food")
    assert [(h.key, h.score is None) for h in hits] == [("seen", False), ("secret", True)]  # as LangGraph's store
    assert [h.key for h in store.search(("users", "u-1"), query="Thai food", limit=1)] == ["seen"]


def test_list_namespaces_with_prefix_suffix_and_max_depth(served):
    store, _ = served
    for ns in [("users", "u-1", "a", "x"), ("users", "u-1", "a", "y"), ("users", "u-1", "b"), ("users", "u-2", "a")]:
        store.put(ns, "k", {"text": "v"})
    assert store.list_namespaces(prefix=("users", "u-1")) == [
        ("users", "u-1", "a", "x"), ("users", "u-1", "a", "y"), ("users", "u-1", "b"),
    ]
    assert store.list_namespaces(prefix=("users", "u-1"), suffix=("y",)) == [("users", "u-1", "a", "y")]
    assert store.list_namespaces(prefix=("users", "u-1"), max_depth=3) == [("users", "u-1", "a"), ("users", "u-1", "b")]
    assert store.list_namespaces(prefix=("users", "u-1", "*", "x")) == [("users", "u-1", "a", "x")]
    assert store.list_namespaces(prefix=("users", "u-1"), limit=1, offset=1) == [("users", "u-1", "a", "y")]


def test_a_users_values_are_masked_and_erased_with_the_user(served):
    store, client = served
    store.put(("users", "u-9", "contacts"), "ana", {"text": "Write to ana@example.com about the refund"})
    value = store.get(("users", "u-9", "contacts"), "ana").value
    assert "ana@example.com" not in value["text"] and "refund" in value["text"]
    client.erase_user("u-9")
    assert store.get(("users", "u-9", "contacts"), "ana") is None
    assert store.search(("users", "u-9"), query="refund") == []


def test_namespaces_outside_users_and_agents_are_refused(served):
    store, _ = served
    with pytest.raises(InvalidNamespaceError):
        store.put(("docs",), "k", {"text": "v"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("users", "u.1"), "k", {"text": "v"})  # a label with "." never reaches the server
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces()


def test_the_async_api_runs_the_same_operations(served):
    store, _ = served

    async def steps() -> list[str]:
        await store.aput(("agents", "a-1", "m"), "k", {"text": "async value"})
        found = await store.asearch(("agents", "a-1"), query="async")
        await store.adelete(("agents", "a-1", "m"), "k")
        assert await store.aget(("agents", "a-1", "m"), "k") is None
        return [h.key for h in found]

    assert asyncio.run(steps()) == ["k"]


def test_ttls_map_to_an_expiry_agentmem_keeps_and_reads_refresh_it_as_the_config_says(served):
    from langgraph.store.base import TTLConfig

    store, client = served
    assert store.supports_ttl
    store.put(("users", "u-1", "m"), "short", {"text": "lives ten minutes"}, ttl=10)
    short = client.get_item(("users", "u-1"), ("m",), "short", refresh_ttl=False)
    assert short is not None and short.expires_at is not None
    assert 9.9 * 60 < (short.expires_at - short.updated_at).total_seconds() <= 10 * 60
    store.put(("users", "u-1", "m"), "forever", {"text": "no ttl"})
    assert client.get_item(("users", "u-1"), ("m",), "forever").expires_at is None

    defaults = AgentMemStore(client, ttl=TTLConfig(default_ttl=60, refresh_on_read=False))
    defaults.put(("users", "u-1", "m"), "default", {"text": "an hour"})
    first = client.get_item(("users", "u-1"), ("m",), "default", refresh_ttl=False).expires_at
    assert first is not None and abs((first - short.updated_at).total_seconds() - 3600) < 60
    assert defaults.get(("users", "u-1", "m"), "default") is not None  # read, not refreshed (the config)
    assert client.get_item(("users", "u-1"), ("m",), "default", refresh_ttl=False).expires_at == first
    store.get(("users", "u-1", "m"), "default")  # the plain store refreshes on read (LangGraph's default)
    assert client.get_item(("users", "u-1"), ("m",), "default", refresh_ttl=False).expires_at > first


def test_the_common_memories_user_id_shape_belongs_to_the_user_at_the_configured_position(served):
    _, client = served
    store = AgentMemStore(client, user_at=1)
    store.put(("memories", "u-7"), "food", {"text": "Loves spicy Thai curry"})
    store.put(("memories", "u-7", "old"), "sport", {"text": "Played tennis as a child"})
    got = store.get(("memories", "u-7"), "food")
    assert got is not None and got.namespace == ("memories", "u-7")
    assert client.item_namespaces(("users", "u-7")) == [("memories", "u-7"), ("memories", "u-7", "old")]
    assert [h.key for h in store.search(("memories", "u-7"), query="what to cook?")] == ["food", "sport"]
    assert store.list_namespaces(prefix=("memories", "u-7"), max_depth=2) == [("memories", "u-7")]
    with pytest.raises(InvalidNamespaceError):  # no agent configured: a prefix without the user reads nothing
        store.search(("memories",), query="curry")
    client.erase_user("u-7")
    assert store.get(("memories", "u-7"), "food") is None


def test_namespaces_that_name_no_owner_belong_to_the_configured_agent(served):
    _, client = served
    store = AgentMemStore(client, user_at=1, agent="graph")
    store.put(("docs",), "faq", {"text": "Refunds take five days"})
    store.put(("memories", "u-8"), "k", {"text": "a user's memory"})
    assert store.get(("docs",), "faq").namespace == ("docs",)
    assert client.item_namespaces(("agents", "graph")) == [("docs",)]
    assert [h.key for h in store.search(("docs",), query="refund")] == ["faq"]
    assert store.list_namespaces() == [("docs",)]  # the agent's: agentmem never lists across users
    assert store.get(("users", "u-8", "memories", "u-8"), "k") is not None  # owner-prefixed names still work


def test_the_stores_index_fields_are_what_a_put_without_index_embeds_each_scored_on_its_own(served):
    _, client = served
    store = AgentMemStore(client, agent="fields", index={"dims": 384, "fields": ["title", "meta.tags[*]"]})
    store.put(("docs",), "d1", {"title": "volcano", "body": "walrus", "meta": {"tags": ["kiwi", "otter"]}})
    store.put(("docs",), "d2", {"title": "banana", "body": "volcano"})
    [top, other] = store.search(("docs",), query="volcano")
    assert (top.key, round(top.score, 4)) == ("d1", 1.0)  # an exact match of one indexed field
    assert other.score < 0.9  # d2's body says "volcano" too, but the body is not indexed
    assert store.search(("docs",), query="otter", limit=1)[0].key == "d1"
    assert store.index_config["fields"] == ["title", "meta.tags[*]"]
