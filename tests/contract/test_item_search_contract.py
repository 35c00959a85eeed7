"""LangGraph's store search, on each pair of backends agentmem runs it on: ItemService over SQLite and the
local vector index, and over DynamoDB (moto) with S3 Vectors or OpenSearch (their server doubles).

Each case is one LangGraph's in-memory store answers: a namespace prefix and a filter narrow the search
before the k nearest are chosen, limit and offset page through the full ranking, nested `index` paths are
embedded, and an item scores by its best indexed text.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from agentmem.service.items import ItemService

from tests.contract.conftest import TABLE_NAME, VECTOR_DIMENSION, aws_client, create_table


class WordEmbedder:
    """Each word a fixed random direction, a text the normalised sum of its words': shared words are near."""

    model_id = "test/words"
    dimension = VECTOR_DIMENSION

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row] += np.random.default_rng(zlib.crc32(word.encode())).standard_normal(self.dimension)
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-9)
        return out


@pytest.fixture
def masker(tmp_path: Path) -> Iterator[Any]:
    """The real masking step (ConversationService on the embedded vault, the regex detector): the same
    for every pair of item store and index, since masking is not what these tests compare."""
    from agentmem.adapters.local.event_bus import SqliteEventBus
    from agentmem.adapters.local.key_file import LocalKeyFile
    from agentmem.adapters.local.key_store import SqliteKeyStore
    from agentmem.adapters.local.pii_regex import RegexPiiDetector
    from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
    from agentmem.adapters.local.vault_store import SqliteVaultStore
    from agentmem.adapters.local.vector_index import LocalVectorIndex
    from agentmem.service.conversations import ConversationService

    folder = tmp_path / "vault"
    folder.mkdir()
    parts = [SqliteTranscriptStore(folder / "transcripts.db"), SqliteVaultStore(folder / "vault.db"),
             SqliteKeyStore(folder / "keys.db"), SqliteEventBus(folder / "events.db"),
             LocalVectorIndex(folder / "vectors.db")]
    transcripts, vault, key_store, bus, vectors = parts
    yield ConversationService(
        tenant="acme", transcripts=transcripts, vault=vault, key_store=key_store,
        keys=LocalKeyFile(folder / "vault.key"), detector=RegexPiiDetector(), bus=bus, vectors=vectors,
    )
    for part in parts:
        part.close()


@pytest.fixture(params=["local", "dynamodb+s3vectors", "dynamodb+opensearch"])
def items(request: pytest.FixtureRequest, tmp_path: Path, masker: Any) -> Iterator[ItemService]:
    if request.param == "local":
        from agentmem.adapters.local.item_store import SqliteItemStore
        from agentmem.adapters.local.vector_index import LocalVectorIndex

        store, vectors = SqliteItemStore(tmp_path / "items.db"), LocalVectorIndex(tmp_path / "vectors.db")
        yield ItemService("acme", store, vectors, WordEmbedder(), masker)
        store.close()
        vectors.close()
        return
    from agentmem.adapters.aws.dynamodb_items import DynamoDbItemStore

    request.getfixturevalue("moto")
    create_table()
    vectors = request.getfixturevalue(f"{request.param.split('+')[1]}_index")
    store = DynamoDbItemStore(TABLE_NAME, client=aws_client("dynamodb"))
    yield ItemService("acme", store, vectors, WordEmbedder(), masker)


def keys(hits: list[Any]) -> list[str]:
    return [hit.item.key for hit in hits]


def test_a_query_below_a_small_namespace_finds_its_item_beside_120_nearer_items_elsewhere(items):
    for n in range(120):
        items.put("users", "u", ("big",), f"b{n}", {"text": f"apple w{n}"})
    items.put("users", "u", ("small",), "only", {"text": "pear"})
    assert keys(items.search("users", "u", ("small",), query="apple")) == ["only"]
    assert len(items.search("users", "u", ("big",), query="apple", limit=200)) == 120


def test_a_query_with_a_filter_finds_the_match_beyond_the_owners_nearest_100(items):
    for n in range(120):
        items.put("users", "u", ("m",), f"a{n}", {"text": f"apple w{n}", "kind": "fruit"})
    items.put("users", "u", ("m",), "odd", {"text": "pear", "kind": "other", "year": 2025})
    assert keys(items.search("users", "u", (), query="apple", filter={"kind": "other"})) == ["odd"]
    assert keys(items.search("users", "u", ("m",), query="apple", filter={"year": {"$gte": 2024}})) == ["odd"]


def test_limit_and_offset_page_through_the_whole_ranking_past_100(items):
    for n in range(130):
        items.put("agents", "a", ("m",), f"k{n}", {"text": f"apple w{n}" + " apple" * (n % 3)})
    everything = items.search("agents", "a", ("m",), query="apple", limit=1000)
    assert len(everything) == 130 and len(set(keys(everything))) == 130
    scores = [hit.score for hit in everything]
    assert scores == sorted(scores, reverse=True)
    assert keys(items.search("agents", "a", ("m",), query="apple", limit=30, offset=100)) == keys(everything[100:])
    assert items.search("agents", "a", ("m",), query="apple", offset=130) == []


def test_nested_index_paths_are_embedded_and_found_by_a_query(items):
    items.put("users", "u", ("docs",), "d1", {"meta": {"title": "volcano"}, "body": "kiwi"}, index=["meta.title"])
    items.put("users", "u", ("docs",), "d2", {"steps": [{"say": "walrus"}, {"say": "otter"}]}, index=["steps[*].say"])
    items.put("users", "u", ("docs",), "d3", {"meta": {"title": "banana"}}, index=["meta.title"])
    assert keys(items.search("users", "u", ("docs",), query="volcano", limit=1)) == ["d1"]
    [otter] = items.search("users", "u", ("docs",), query="otter", limit=1)
    assert otter.item.key == "d2" and otter.score == pytest.approx(1.0, abs=1e-5)


def test_an_item_scores_by_its_best_indexed_field_and_unindexed_fields_do_not_count(items):
    fields = ["key0", "key1", "key3"]  # key0 is missing from doc1: not an error
    items.put("users", "u", ("t",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"}, index=fields)
    items.put("users", "u", ("t",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"}, index=fields)
    both = items.search("users", "u", ("t",), query="xxx")
    assert sorted(keys(both)) == ["doc1", "doc2"]
    assert [hit.score for hit in both] == pytest.approx([1.0, 1.0], abs=1e-5)  # an exact field match each
    [first, second] = items.search("users", "u", ("t",), query="uuu")
    assert first.item.key == "doc2" and first.score == pytest.approx(1.0, abs=1e-5) and second.score < 0.99
    assert all(hit.score < 0.99 for hit in items.search("users", "u", ("t",), query="www"))


def test_reindexing_with_fewer_fields_or_deleting_drops_the_items_other_vectors(items):
    items.put("users", "u", ("t",), "doc", {"a": "walrus", "b": "volcano"}, index=["a", "b"])
    items.put("users", "u", ("t",), "other", {"a": "kiwi"})
    items.put("users", "u", ("t",), "doc", {"a": "walrus", "b": "volcano"}, index=["a"])
    [hit, _] = items.search("users", "u", ("t",), query="volcano")
    assert hit.score is not None and hit.score < 0.99
    items.delete("users", "u", ("t",), "doc")
    assert keys(items.search("users", "u", (), query="walrus")) == ["other"]


def test_items_without_vectors_follow_the_ranked_ones_with_no_score(items):
    items.put("users", "u", ("t",), "ranked", {"text": "apple"})
    items.put("users", "u", ("t",), "plain", {"text": "apple"}, index=False)
    hits = items.search("users", "u", ("t",), query="apple")
    assert [(hit.item.key, hit.score is None) for hit in hits] == [("ranked", False), ("plain", True)]
    assert keys(items.search("users", "u", ("t",), query="apple", offset=1)) == ["plain"]
