"""The LexicalIndex contract: LocalBm25Index, OpenSearchLexicalIndex (against the fake server) and
DynamoDbLexicalIndex (S3 Vectors tenants' keyword side, on moto) agree.

The texts avoid what the two analysers treat differently (stop words and plurals: the local index drops
and stems them, OpenSearch's standard analyzer does neither), so the same behaviour is asked of both.
"""

from __future__ import annotations

from typing import Any

import pytest

T, K, U = "acme", "turn", "u-1"


def ids(hits: Any) -> list[str]:
    return [item_id for item_id, _ in hits]


def test_only_documents_sharing_a_term_are_found(lexical_index: Any) -> None:
    lexical_index.upsert(T, K, U, [("a", "hiking trip to Yosemite"), ("b", "baking bread at home")])
    assert ids(lexical_index.search(T, K, U, "Yosemite camping", 10)) == ["a"]
    assert lexical_index.search(T, K, U, "chess", 10) == []


def test_scores_are_positive_and_best_first(lexical_index: Any) -> None:
    lexical_index.upsert(
        T, K, U,
        [
            ("weak", "pottery class pottery wheel glaze kiln clay studio evening"),
            ("strong", "Melanie pottery"),
            ("other", "violin lesson"),
            ("rare", "Melanie violin"),
        ],
    )
    hits = lexical_index.search(T, K, U, "Melanie pottery", 10)
    assert ids(hits)[0] == "strong"
    assert set(ids(hits)) == {"strong", "weak", "rare"}
    scores = [score for _, score in hits]
    assert all(score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)


def test_k_limits_the_hits(lexical_index: Any) -> None:
    lexical_index.upsert(T, K, U, [(f"d{n}", f"guitar song number{n}") for n in range(5)])
    assert len(lexical_index.search(T, K, U, "guitar", 3)) == 3
    assert lexical_index.search(T, K, U, "guitar", 0) == []


def test_search_sees_only_its_tenant_kind_and_owner(lexical_index: Any) -> None:
    lexical_index.upsert(T, K, U, [("mine", "adoption agency meeting")])
    lexical_index.upsert(T, K, "u-2", [("theirs", "adoption agency meeting")])
    lexical_index.upsert("globex", K, U, [("other-tenant", "adoption agency meeting")])
    lexical_index.upsert(T, "fact", U, [("other-kind", "adoption agency meeting")])
    assert ids(lexical_index.search(T, K, U, "adoption", 10)) == ["mine"]


def test_upserting_an_existing_id_replaces_its_text(lexical_index: Any) -> None:
    lexical_index.upsert(T, K, U, [("a", "charity race downtown")])
    lexical_index.upsert(T, K, U, [("a", "camping weekend")])
    assert lexical_index.search(T, K, U, "charity", 10) == []
    assert ids(lexical_index.search(T, K, U, "camping", 10)) == ["a"]


def test_delete_owner_removes_that_owners_documents_only(lexical_index: Any) -> None:
    lexical_index.upsert(T, K, U, [("a", "painting sunrise lake")])
    lexical_index.upsert(T, K, "u-2", [("b", "painting sunrise lake")])
    lexical_index.delete_owner(T, K, U)
    assert lexical_index.search(T, K, U, "painting", 10) == []
    assert ids(lexical_index.search(T, K, "u-2", "painting", 10)) == ["b"]


def test_delete_removes_those_documents_of_that_owner_only(lexical_index: Any) -> None:
    lexical_index.upsert(T, K, U, [("t#1", "kayak river trip"), ("t#2", "kayak lake trip"), ("t#3", "kayak sea")])
    lexical_index.upsert(T, K, "u-2", [("t#2", "kayak lake trip")])
    lexical_index.delete(T, K, U, ["t#2", "t#3", "never-indexed"])
    assert ids(lexical_index.search(T, K, U, "kayak", 10)) == ["t#1"]
    assert ids(lexical_index.search(T, K, "u-2", "kayak", 10)) == ["t#2"]
    lexical_index.delete(T, K, U, [])
    assert ids(lexical_index.search(T, K, U, "kayak", 10)) == ["t#1"]


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_finds_nothing(lexical_index: Any, query: str) -> None:
    lexical_index.upsert(T, K, U, [("a", "anything at all")])
    assert lexical_index.search(T, K, U, query, 10) == []


def test_upsert_of_nothing_is_a_no_op(lexical_index: Any) -> None:
    lexical_index.upsert(T, K, U, [])
    assert lexical_index.search(T, K, U, "anything", 10) == []
