"""DynamoDbLexicalIndex on moto: what its segment design must keep true beyond the port's contract.

Scores equal the local index's through any mix of writes, deletes and merges; deltas fold into the base;
concurrent writers and a merge racing a merge, a read or an erase lose nothing and bring nothing back; a
large user's base spans chunks; an erase leaves no item; a search costs one request warm, two cold.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.adapters.aws.dynamodb_lexical import (
    BASE_PREFIX,
    DELTA_PREFIX,
    HEAD_SK,
    DynamoDbLexicalIndex,
    lexical_pk,
)
from agentmem.adapters.local.bm25_index import LocalBm25Index

from tests.contract.conftest import TABLE_NAME, aws_client, create_table

T, K, U = "acme", "turn", "u-1"
WORDS = (
    "hiking", "trip", "yosemite", "baking", "bread", "pottery", "class", "violin", "lesson", "adoption",
    "agency", "meeting", "camping", "weekend", "painting", "sunrise", "lake", "kayak", "river", "charity",
    "race", "guitar", "song", "sister", "concert", "tuesday", "melanie", "caroline", "support", "group",
    "rainbow", "flag", "beach", "sunset", "puppies", "horse", "dinosaur", "museum", "library", "book",
    "novel",
)


@pytest.fixture
def table(moto: None) -> None:
    create_table()


def new_index(**options: Any) -> DynamoDbLexicalIndex:
    """An adapter with a client of its own (its own request hooks and base cache), as one Lambda container."""
    return DynamoDbLexicalIndex(TABLE_NAME, client=aws_client("dynamodb"), **options)


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalBm25Index]:
    index = LocalBm25Index(tmp_path / "lexical.db")
    yield index
    index.close()


def partition(owner: str = U) -> list[str]:
    """The sort keys of every item of the owner's keyword partition."""
    items = aws_client("dynamodb").query(
        TableName=TABLE_NAME, KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": lexical_pk(T, K, owner)}},
    )["Items"]
    return [item["sk"]["S"] for item in items]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))


def count_requests(index: DynamoDbLexicalIndex) -> list[str]:
    """The DynamoDB operations the adapter's client sends from now on, in order."""
    sent: list[str] = []
    index.client.meta.events.register("before-call.dynamodb", lambda model, **_: sent.append(model.name))
    return sent


@pytest.mark.parametrize("seed", range(6))
def test_scores_and_order_equal_the_local_index_through_writes_deletes_and_merges(
    table: None, local: LocalBm25Index, seed: int
) -> None:
    rng = random.Random(seed)
    remote = new_index(merge_after_deltas=rng.choice([1, 3, 7, 1000]), merge_after_bytes=10**9)
    ids = [f"t#{n}" for n in range(40)]
    for _ in range(60):
        if rng.random() < 0.7:
            documents = [(rng.choice(ids), sentence(rng)) for _ in range(rng.randint(1, 6))]
            local.upsert(T, K, U, documents)
            remote.upsert(T, K, U, documents)
        else:
            doomed = rng.sample(ids, rng.randint(1, 5))
            local.delete(T, K, U, doomed)
            remote.delete(T, K, U, doomed)
        query = sentence(rng)
        expected = local.search(T, K, U, query, 10)
        found = remote.search(T, K, U, query, 10)
        assert [hit.item_id for hit in found] == [hit.item_id for hit in expected]
        assert [hit.score for hit in found] == pytest.approx([hit.score for hit in expected], rel=1e-12)


def test_pending_deltas_fold_into_one_base_past_the_threshold(table: None) -> None:
    index = new_index(merge_after_deltas=4)
    for n in range(3):
        index.upsert(T, K, U, [(f"t#{n}", f"kayak river number{n}")])
    assert sum(sk.startswith(DELTA_PREFIX) for sk in partition()) == 3
    assert not any(sk.startswith(BASE_PREFIX) for sk in partition())
    index.upsert(T, K, U, [("t#3", "kayak lake")])
    keys = partition()
    assert not any(sk.startswith(DELTA_PREFIX) for sk in keys)
    assert sum(sk.startswith(BASE_PREFIX) for sk in keys) == 1 and HEAD_SK in keys
    assert {hit.item_id for hit in new_index().search(T, K, U, "kayak", 10)} == {"t#0", "t#1", "t#2", "t#3"}


def test_a_merge_leaves_the_ranking_as_it_was(table: None) -> None:
    index = new_index(merge_after_deltas=1000)
    rng = random.Random(7)
    index.upsert(T, K, U, [(f"t#{n}", sentence(rng)) for n in range(50)])
    index.delete(T, K, U, [f"t#{n}" for n in range(0, 50, 3)])  # merged at once
    index.upsert(T, K, U, [(f"t#{n}", sentence(rng)) for n in range(40, 60)])  # pending: replaced and new
    queries = [sentence(rng) for _ in range(20)]
    before = [index.search(T, K, U, query, 10) for query in queries]
    assert index.merge(lexical_pk(T, K, U))
    assert [new_index().search(T, K, U, query, 10) for query in queries] == before


class AtomicRequests:
    """A client whose requests moto applies one at a time, as DynamoDB applies each request atomically.

    moto runs a request in unlocked steps (a conditional update checks, then writes; an update of a new
    item creates it, then updates it), so two threads inside moto at once can both pass one condition:
    that would test moto, not the adapter. The requests of different writers still interleave freely.
    """

    lock = threading.Lock()

    def __init__(self, client: Any):
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return attribute(*args, **kwargs)

        return call


def test_concurrent_writers_to_one_user_lose_no_document(table: None) -> None:
    writers = [
        DynamoDbLexicalIndex(TABLE_NAME, client=AtomicRequests(aws_client("dynamodb")), merge_after_deltas=3)
        for _ in range(4)
    ]

    def write(number: int) -> None:
        for n in range(12):
            writers[number].upsert(T, K, U, [(f"w{number}#{n}", f"guitar song writer{number}")])

    threads = [threading.Thread(target=write, args=(number,)) for number in range(len(writers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert any(sk.startswith(BASE_PREFIX) for sk in partition())  # merges ran among the writes
    found = {hit.item_id for hit in new_index().search(T, K, U, "guitar", 100)}
    assert found == {f"w{number}#{n}" for number in range(4) for n in range(12)}


def test_a_merge_that_loses_the_race_deletes_what_it_wrote_and_loses_nothing(table: None) -> None:
    slow, fast = new_index(merge_after_deltas=1000), new_index(merge_after_deltas=1000)
    slow.upsert(T, K, U, [("a", "violin lesson"), ("b", "violin concert")])
    raced = []

    def meanwhile(params: dict[str, Any], **_: Any) -> None:
        if "ConditionExpression" in params and not raced:  # the slow merge's move of HEAD, about to be sent
            raced.append(True)
            fast.upsert(T, K, U, [("c", "violin song")])
            assert fast.merge(lexical_pk(T, K, U))

    slow.client.meta.events.register("provide-client-params.dynamodb.UpdateItem", meanwhile)
    assert slow.merge(lexical_pk(T, K, U)) is False
    keys = partition()
    assert sum(sk.startswith(BASE_PREFIX) for sk in keys) == 1  # the winner's base only
    assert {hit.item_id for hit in new_index().search(T, K, U, "violin", 10)} == {"a", "b", "c"}


def test_a_search_that_straddles_a_merge_reads_again_and_finds_everything(table: None) -> None:
    writer, reader = new_index(merge_after_deltas=1000), new_index(merge_after_deltas=1000)
    writer.upsert(T, K, U, [("a", "rainbow flag"), ("b", "rainbow beach")])
    writer.merge(lexical_pk(T, K, U))
    merged = []

    def meanwhile(params: dict[str, Any], **_: Any) -> None:
        reading_base = "begins_with" in params.get("KeyConditionExpression", "")
        if reading_base and not merged:  # HEAD read, its base not yet: a merge commits and cleans up now
            merged.append(True)
            writer.upsert(T, K, U, [("c", "rainbow sunset")])
            assert writer.merge(lexical_pk(T, K, U))

    reader.client.meta.events.register("provide-client-params.dynamodb.Query", meanwhile)
    assert {hit.item_id for hit in reader.search(T, K, U, "rainbow", 10)} == {"a", "b", "c"}
    assert merged


def test_a_merge_racing_an_erase_brings_nothing_back(table: None) -> None:
    index = new_index(merge_after_deltas=1000)
    index.upsert(T, K, U, [("a", "adoption agency")])

    def erase_first(params: dict[str, Any], **_: Any) -> None:
        if "ConditionExpression" in params:
            new_index().delete_owner(T, K, U)

    index.client.meta.events.register("provide-client-params.dynamodb.UpdateItem", erase_first)
    assert index.merge(lexical_pk(T, K, U)) is False
    assert partition() == []


def test_a_large_user_spans_chunks_and_ranks_as_the_local_index(table: None, local: LocalBm25Index) -> None:
    rng = random.Random(3)
    documents = [(f"session-{n // 30}#{n % 30}", sentence(rng) + f" unique{n}") for n in range(3000)]
    index = new_index(merge_after_deltas=1000, chunk_bytes=20_000)
    for start in range(0, len(documents), 500):
        index.upsert(T, K, U, documents[start : start + 500])
        local.upsert(T, K, U, documents[start : start + 500])
    index.merge(lexical_pk(T, K, U))
    assert sum(sk.startswith(BASE_PREFIX) for sk in partition()) > 3
    cold = new_index()
    for query in ["guitar concert melanie", "unique2999 sister", "yosemite hiking trip", "museum dinosaur"]:
        expected = local.search(T, K, U, query, 25)
        found = cold.search(T, K, U, query, 25)
        assert [hit.item_id for hit in found] == [hit.item_id for hit in expected]
        assert [hit.score for hit in found] == pytest.approx([hit.score for hit in expected], rel=1e-12)


def test_a_batch_bigger_than_an_item_is_split_into_several_deltas(table: None) -> None:
    index = new_index(merge_after_deltas=1000, merge_after_bytes=10**9, chunk_bytes=2_000)
    index.upsert(T, K, U, [(f"t#{n}", f"beach sunset word{n} other{n * 7}") for n in range(400)])
    assert sum(sk.startswith(DELTA_PREFIX) for sk in partition()) > 1
    assert len(index.search(T, K, U, "beach", 500)) == 400


def test_an_erase_leaves_no_item_of_the_owner_and_keeps_the_others(table: None) -> None:
    index = new_index(merge_after_deltas=3)
    for n in range(10):
        index.upsert(T, K, U, [(f"t#{n}", "painting sunrise lake")])
        index.upsert(T, K, "u-2", [(f"t#{n}", "painting sunrise lake")])
    index.delete(T, K, U, ["t#1"])
    index.upsert(T, K, U, [("t#11", "painting sunrise lake")])
    assert any(sk.startswith(BASE_PREFIX) for sk in partition()) and any(
        sk.startswith(DELTA_PREFIX) for sk in partition()
    )
    index.delete_owner(T, K, U)
    assert partition() == []
    scanned = aws_client("dynamodb").scan(TableName=TABLE_NAME)["Items"]
    assert not [item for item in scanned if item["pk"]["S"] == lexical_pk(T, K, U)]
    assert index.search(T, K, U, "painting", 10) == []
    assert len(index.search(T, K, "u-2", "painting", 20)) == 10


def test_a_warm_search_is_one_query_and_a_cold_one_two(table: None) -> None:
    writer = new_index(merge_after_deltas=2)
    for n in range(5):
        writer.upsert(T, K, U, [(f"t#{n}", "library book novel")])
    reader = new_index()
    sent = count_requests(reader)
    assert len(reader.search(T, K, U, "novel", 10)) == 5
    assert sent == ["Query", "Query"]  # deltas and HEAD, then the base
    sent.clear()
    assert len(reader.search(T, K, U, "book", 10)) == 5
    assert sent == ["Query"]  # the base is this container's already


def test_an_upsert_is_one_delta_put_and_one_head_update_below_the_threshold(table: None) -> None:
    index = new_index(merge_after_deltas=1000)
    sent = count_requests(index)
    index.upsert(T, K, U, [("a", "horse museum")])
    assert sent == ["PutItem", "UpdateItem"]


def stored_terms() -> set[str]:
    """Every term any item of the owner's partition holds, base and deltas decoded."""
    from agentmem.adapters.aws.lexical_segments import decode_base, decode_delta

    items = aws_client("dynamodb").query(
        TableName=TABLE_NAME, KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": lexical_pk(T, K, U)}},
    )["Items"]
    terms: set[str] = set()
    chunks = b"".join(bytes(i["d"]["B"]) for i in items if i["sk"]["S"].startswith(BASE_PREFIX))
    if chunks:
        terms |= set(decode_base(chunks).terms)
    for item in items:
        if item["sk"]["S"].startswith(DELTA_PREFIX):
            terms |= {term for _, counts in decode_delta(bytes(item["d"]["B"]))[0] for term in counts}
    return terms


def test_a_deleted_documents_terms_leave_the_table_with_the_delete(table: None) -> None:
    index = new_index(merge_after_deltas=1000)
    index.upsert(T, K, U, [("a", "horse museum"), ("b", "library novel")])
    index.merge(lexical_pk(T, K, U))
    index.upsert(T, K, U, [("c", "dinosaur")])
    assert {"hors", "dinosaur"} <= stored_terms()
    index.delete(T, K, U, ["a", "c"])
    assert stored_terms() == {"librari", "novel"}
    assert index.search(T, K, U, "horse dinosaur", 10) == []


@pytest.mark.parametrize("merge_between", [False, True])
def test_a_document_deleted_and_put_again_loses_its_place_among_ties_as_in_the_local_index(
    table: None, local: LocalBm25Index, merge_between: bool
) -> None:
    index = new_index(merge_after_deltas=1000)
    for lexical in (index, local):
        lexical.upsert(T, K, U, [("a", "dinosaur museum"), ("b", "dinosaur museum"), ("c", "dinosaur museum")])
    index.merge(lexical_pk(T, K, U))
    for lexical in (index, local):
        lexical.delete(T, K, U, ["a"])
    if merge_between:
        index.merge(lexical_pk(T, K, U))
    for lexical in (index, local):
        lexical.upsert(T, K, U, [("a", "dinosaur museum"), ("b", "dinosaur museum")])  # b replaced: keeps its place
    expected = [hit.item_id for hit in local.search(T, K, U, "dinosaur", 10)]
    assert expected == ["b", "c", "a"]
    assert [hit.item_id for hit in index.search(T, K, U, "dinosaur", 10)] == expected
    index.merge(lexical_pk(T, K, U))
    assert [hit.item_id for hit in new_index().search(T, K, U, "dinosaur", 10)] == expected


def test_deleting_ids_the_owner_does_not_hold_writes_nothing(table: None) -> None:
    index = new_index()
    index.delete(T, K, U, [f"thread#{seq}" for seq in range(1, 200)])
    assert partition() == []
    index.upsert(T, K, U, [("thread#1", "charity race")])
    sent = count_requests(index)
    index.delete(T, K, U, ["thread#2", "thread#3"])
    assert sent == ["Query"]  # read to see what the owner holds; nothing to delete, nothing written
    assert len(index.search(T, K, U, "charity", 10)) == 1


def test_the_base_cache_keeps_what_its_memory_budget_allows(table: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentmem.adapters.aws.dynamodb_lexical as module

    writer = new_index(merge_after_deltas=1)
    for owner in ("u-a", "u-b"):
        writer.upsert(T, K, owner, [("t#1", "rainbow flag")])

    def queries_for_three_searches() -> int:
        reader = new_index()
        sent = count_requests(reader)
        for owner in ("u-a", "u-b", "u-a"):
            assert len(reader.search(T, K, owner, "rainbow", 10)) == 1
        return sent.count("Query")

    assert queries_for_three_searches() == 2 + 2 + 1  # both bases read once, then u-a's from the cache
    monkeypatch.setattr(module, "CACHED_BASE_BYTES", 1)  # room for the newest base only
    assert queries_for_three_searches() == 2 + 2 + 2  # u-b's base pushed u-a's out
