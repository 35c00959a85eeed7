"""The VectorIndex contract: LocalVectorIndex and OpenSearchVectorIndex (against the fake server) agree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from agentmem.ports.vectors import VectorItem, VectorKind, VectorQuery

from tests.contract.conftest import VECTOR_DIMENSION

T0 = 1_750_000_000.0


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(VECTOR_DIMENSION).astype(np.float32)
    return v / np.linalg.norm(v)


def blend(a: np.ndarray, b: np.ndarray, weight_of_b: float) -> np.ndarray:
    v = (1 - weight_of_b) * a + weight_of_b * b
    return (v / np.linalg.norm(v)).astype(np.float32)


def item(
    item_id: str,
    vector: np.ndarray,
    *,
    tenant: str = "acme",
    kind: VectorKind = "lesson",
    owner: str = "agent-a",
    at: float = T0,
) -> VectorItem:
    return VectorItem(tenant=tenant, kind=kind, owner_id=owner, item_id=item_id, vector=vector, created_at=at)


def query(
    vector: np.ndarray,
    k: int = 5,
    *,
    tenant: str = "acme",
    kind: VectorKind = "lesson",
    owner: str = "agent-a",
    created_after: float | None = None,
) -> VectorQuery:
    return VectorQuery(tenant=tenant, kind=kind, owner_id=owner, vector=vector, k=k, created_after=created_after)


def ids(hits: list[Any]) -> list[str]:
    return [h.item_id for h in hits]


def test_search_returns_the_nearest_first_with_their_cosine(vector_index: Any) -> None:
    target, other = unit(1), unit(2)
    vector_index.upsert(
        [
            item("far", other),
            item("near", blend(target, other, 0.2)),
            item("exact", target),
            item("middle", blend(target, other, 0.6)),
        ]
    )
    hits = vector_index.search(query(target, k=3))
    assert ids(hits) == ["exact", "near", "middle"]
    expected = [1.0, float(blend(target, other, 0.2) @ target), float(blend(target, other, 0.6) @ target)]
    assert [h.similarity for h in hits] == pytest.approx(expected, abs=1e-5)


def test_similarity_is_the_cosine_even_for_vectors_that_are_not_unit_length(vector_index: Any) -> None:
    target = unit(3)
    opposite = -target
    vector_index.upsert([item("same-direction", 7.5 * target), item("opposite", 0.2 * opposite)])
    hits = vector_index.search(query(3.0 * target, k=2))
    assert ids(hits) == ["same-direction", "opposite"]
    assert [h.similarity for h in hits] == pytest.approx([1.0, -1.0], abs=1e-5)


def test_k_larger_than_the_number_of_items_returns_them_all(vector_index: Any) -> None:
    vector_index.upsert([item(f"i{n}", unit(n)) for n in range(3)])
    assert sorted(ids(vector_index.search(query(unit(0), k=10)))) == ["i0", "i1", "i2"]


def test_an_empty_index_answers_no_hits(vector_index: Any) -> None:
    assert vector_index.search(query(unit(0))) == []


def test_search_sees_only_its_tenant_kind_and_owner(vector_index: Any) -> None:
    v = unit(10)
    vector_index.upsert(
        [
            item("mine", blend(v, unit(11), 0.5)),
            item("other-tenant", v, tenant="globex"),
            item("other-agent", v, owner="agent-b"),
            item("a-fact", v, kind="fact", owner="agent-a"),
        ]
    )
    assert ids(vector_index.search(query(v, k=10))) == ["mine"]
    assert ids(vector_index.search(query(v, k=10, tenant="globex"))) == ["other-tenant"]
    assert ids(vector_index.search(query(v, k=10, owner="agent-b"))) == ["other-agent"]
    assert ids(vector_index.search(query(v, k=10, kind="fact"))) == ["a-fact"]
    assert vector_index.search(query(v, k=10, tenant="initech")) == []


def test_the_owner_filter_holds_even_when_other_owners_are_all_closer(vector_index: Any) -> None:
    v = unit(20)
    vector_index.upsert([item(f"theirs-{n}", blend(v, unit(100 + n), 0.05), owner="agent-b") for n in range(12)])
    vector_index.upsert([item("mine-1", blend(v, unit(21), 0.7)), item("mine-2", blend(v, unit(22), 0.8))])
    assert ids(vector_index.search(query(v, k=2))) == ["mine-1", "mine-2"]


def test_created_after_keeps_only_younger_items(vector_index: Any) -> None:
    v = unit(30)
    vector_index.upsert(
        [
            item("old", v, at=T0 - 100 * 86_400),
            item("boundary", blend(v, unit(31), 0.1), at=T0),
            item("young", blend(v, unit(32), 0.3), at=T0 + 60),
        ]
    )
    assert ids(vector_index.search(query(v, k=10, created_after=T0 - 1))) == ["boundary", "young"]
    assert ids(vector_index.search(query(v, k=10, created_after=T0 + 1))) == ["young"]
    assert ids(vector_index.search(query(v, k=10))) == ["old", "boundary", "young"]


def test_a_window_older_than_every_item_or_none_finds_them_all_and_a_deleted_one_never(vector_index: Any) -> None:
    v = unit(33)
    vector_index.upsert([item(f"i{n}", blend(v, unit(34 + n), 0.1 * n), at=T0 + n) for n in range(4)])
    everything = ["i0", "i1", "i2", "i3"]
    assert ids(vector_index.search(query(v, k=10, created_after=T0 - 1))) == everything
    assert ids(vector_index.search(query(v, k=10))) == everything
    assert ids(vector_index.search(query(v, k=2, created_after=T0 - 1))) == ["i0", "i1"]
    vector_index.delete("acme", "lesson", "agent-a", ["i1"])
    assert ids(vector_index.search(query(v, k=10, created_after=T0 - 1))) == ["i0", "i2", "i3"]
    vector_index.upsert([item("i1", blend(v, unit(35), 0.1), at=T0 + 9)])
    assert ids(vector_index.search(query(v, k=10, created_after=T0 + 2))) == ["i1", "i3"]
    assert ids(vector_index.search(query(v, k=10))) == everything


def test_upserting_an_existing_id_replaces_its_vector(vector_index: Any) -> None:
    first, second = unit(40), unit(41)
    vector_index.upsert([item("x", first), item("y", blend(first, second, 0.5))])
    vector_index.upsert([item("x", second, at=T0 + 10)])
    hits = vector_index.search(query(second, k=10))
    assert ids(hits) == ["x", "y"]
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    # Searching with the old vector finds x once, at the new vector's distance: the old one is gone.
    by_old = vector_index.search(query(first, k=10))
    assert ids(by_old).count("x") == 1
    (x_hit,) = [h for h in by_old if h.item_id == "x"]
    assert x_hit.similarity == pytest.approx(float(first @ second), abs=1e-5)


def test_delete_removes_only_the_named_items(vector_index: Any) -> None:
    v = unit(50)
    vector_index.upsert([item(f"i{n}", blend(v, unit(51 + n), 0.1 * n)) for n in range(4)])
    vector_index.upsert([item("i1", v, owner="agent-b")])
    vector_index.delete("acme", "lesson", "agent-a", ["i1", "i3", "never-existed"])
    assert ids(vector_index.search(query(v, k=10))) == ["i0", "i2"]
    assert ids(vector_index.search(query(v, k=10, owner="agent-b"))) == ["i1"]
    vector_index.delete("acme", "lesson", "agent-a", [])
    assert ids(vector_index.search(query(v, k=10))) == ["i0", "i2"]


def test_delete_owner_removes_every_vector_of_that_owner_and_kind_only(vector_index: Any) -> None:
    v = unit(60)
    vector_index.upsert([item(f"t{n}", unit(60 + n), kind="turn", owner="user-1") for n in range(7)])
    vector_index.upsert(
        [
            item("f1", v, kind="fact", owner="user-1"),
            item("t-other-user", v, kind="turn", owner="user-2"),
            item("t-other-tenant", v, kind="turn", owner="user-1", tenant="globex"),
        ]
    )
    vector_index.delete_owner("acme", "turn", "user-1")
    assert vector_index.search(query(v, k=10, kind="turn", owner="user-1")) == []
    assert ids(vector_index.search(query(v, k=10, kind="fact", owner="user-1"))) == ["f1"]
    assert ids(vector_index.search(query(v, k=10, kind="turn", owner="user-2"))) == ["t-other-user"]
    assert ids(vector_index.search(query(v, k=10, kind="turn", owner="user-1", tenant="globex"))) == ["t-other-tenant"]


def test_upsert_of_nothing_is_a_no_op(vector_index: Any) -> None:
    vector_index.upsert([])
    assert vector_index.search(query(unit(0))) == []


def test_a_query_with_tags_ranks_only_the_vectors_carrying_every_tag(vector_index: Any) -> None:
    v = unit(70)
    # The closest vectors carry other tags: a filter applied after the top k would find none of the scope.
    vector_index.upsert([
        VectorItem("acme", "item", "users/u", f"big-{n}", blend(v, unit(200 + n), 0.05), T0, ("t-big",))
        for n in range(12)
    ])
    vector_index.upsert([
        VectorItem("acme", "item", "users/u", "small-far", blend(v, unit(71), 0.9), T0, ("t-small", "t-x")),
        VectorItem("acme", "item", "users/u", "small-near", blend(v, unit(72), 0.6), T0, ("t-small",)),
    ])
    scoped = vector_index.search(
        VectorQuery(tenant="acme", kind="item", owner_id="users/u", vector=v, k=2, tags=("t-small",))
    )
    assert ids(scoped) == ["small-near", "small-far"]
    both = VectorQuery(tenant="acme", kind="item", owner_id="users/u", vector=v, k=10, tags=("t-small", "t-x"))
    assert ids(vector_index.search(both)) == ["small-far"]
    untagged = VectorQuery(tenant="acme", kind="item", owner_id="users/u", vector=v, k=20)
    assert len(vector_index.search(untagged)) == 14


def test_k_above_a_services_page_returns_the_k_nearest_in_order(vector_index: Any) -> None:
    target = unit(80)
    vectors = [blend(target, unit(300 + n), 0.3 + 0.5 * n / 250) for n in range(250)]
    vector_index.upsert([item(f"i{n:03d}", vectors[n]) for n in range(250)])
    expected = sorted(range(250), key=lambda n: -float(vectors[n] @ target))
    hits = vector_index.search(query(target, k=230))
    assert ids(hits) == [f"i{n:03d}" for n in expected[:230]]
    assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)
    assert len(vector_index.search(query(target, k=400))) == 250
