"""OpenSearchVectorIndex at its boundary: the signed HTTP requests it sends and the bodies in them.

The fake server (tests/contract/fake_opensearch.py) sits where the network
would be, so what is asserted here is what would go on the wire.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np
import pytest
from agentmem.adapters.aws import opensearch_index
from agentmem.adapters.aws.opensearch_index import (
    OWNER_FIELD,
    OpenSearchVectorIndex,
    region_of,
)
from agentmem.adapters.aws.vector_mapping import KEYWORD_FIELDS, index_body
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vectors import VectorItem, VectorQuery

from tests.contract.conftest import COLLECTION_ENDPOINT, INDEX_NAME, REGION, VECTOR_DIMENSION
from tests.contract.fake_opensearch import FakeOpenSearchServer

# OpenSearch Serverless is tests/contract/fake_opensearch.py, a double written here.
pytestmark = pytest.mark.double

T0 = 1_750_000_000.25


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(VECTOR_DIMENSION).astype(np.float32)
    return v / np.linalg.norm(v)


def lesson(item_id: str, seed: int, at: float = T0) -> VectorItem:
    return VectorItem("acme", "lesson", "agent-a", item_id, unit(seed), at)


def test_the_client_is_built_on_first_use_not_before(aws_credentials: None) -> None:
    index = OpenSearchVectorIndex(COLLECTION_ENDPOINT, INDEX_NAME, dimension=VECTOR_DIMENSION)
    assert not index._client.built
    assert index.client is index.client


def test_every_request_is_signed_with_sigv4_for_aoss_over_the_body_sent(
    opensearch_index: OpenSearchVectorIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    opensearch_index.upsert([lesson("m1", 1)])
    opensearch_index.search(VectorQuery("acme", "lesson", "agent-a", unit(1), k=3))
    assert len(opensearch_server.requests) >= 2
    for request in opensearch_server.requests:
        assert request.url.startswith(f"https://abc123example.{REGION}.aoss.amazonaws.com:443/")
        authorization = request.headers["Authorization"]
        assert re.match(
            rf"AWS4-HMAC-SHA256 Credential=testing/\d{{8}}/{REGION}/aoss/aws4_request, SignedHeaders=\S+, "
            r"Signature=[0-9a-f]{64}$",
            authorization,
        ), authorization
        signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
        assert {"host", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"} <= set(signed)
        assert request.headers["x-amz-content-sha256"] == hashlib.sha256(request.body).hexdigest()


def test_upsert_indexes_without_document_ids_and_only_mapped_fields(
    opensearch_index: OpenSearchVectorIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    opensearch_index.upsert([lesson("m1", 1, at=T0), lesson("m2", 2, at=T0 + 1)])
    bulk = opensearch_server.requests[0]
    assert (bulk.method, bulk.url.split(":443")[1]) == ("POST", "/_bulk")
    lines = bulk.json_lines()
    assert lines[0] == {"index": {"_index": INDEX_NAME}}  # no _id: Serverless vector collections refuse one
    assert lines[1] == {
        "vector": pytest.approx([float(x) for x in unit(1)], abs=1e-6),
        "tenant": "acme",
        "kind": "lesson",
        "agentId": "agent-a",
        "memoryId": "m1",
        "createdAt": 1_750_000_000_250,
    }
    assert lines[3]["memoryId"] == "m2" and lines[3]["createdAt"] == 1_750_000_001_250
    assert all("refresh" not in r.url for r in opensearch_server.requests)


def test_every_field_the_adapter_writes_or_filters_on_is_in_the_mapping() -> None:
    properties = index_body(VECTOR_DIMENSION)["mappings"]["properties"]
    assert properties["vector"]["type"] == "knn_vector"
    assert properties["createdAt"]["type"] == "date"
    for name in {"tenant", "kind", "memoryId", *OWNER_FIELD.values()}:
        assert name in KEYWORD_FIELDS and properties[name]["type"] == "keyword", name


def test_search_is_one_knn_query_with_the_filter_inside_the_knn_clause(
    opensearch_index: OpenSearchVectorIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    query_vector = unit(5)
    opensearch_index.search(
        VectorQuery("acme", "fact", "user-7", query_vector * 4.0, k=3, created_after=1_700_000_000.9)
    )
    (request,) = opensearch_server.requests
    assert (request.method, request.url.split(":443")[1]) == ("POST", f"/{INDEX_NAME}/_search")
    (body,) = request.json_lines()
    knn = body["query"]["knn"]["vector"]
    assert body["size"] == knn["k"] == 6  # k plus a margin for duplicate documents of one item
    assert body["_source"] == ["memoryId"]
    assert knn["vector"] == pytest.approx([float(x) for x in query_vector], abs=1e-6)  # sent as a unit vector
    assert knn["filter"] == {
        "bool": {
            "filter": [
                {"term": {"tenant": "acme"}},
                {"term": {"kind": "fact"}},
                {"term": {"userId": "user-7"}},
                {"range": {"createdAt": {"gt": 1_700_000_000_900}}},
            ]
        }
    }
    assert set(body["query"]) == {"knn"}  # no post-filter that could leave fewer than k hits


def test_replacing_an_item_indexes_the_new_document_before_deleting_the_old(
    opensearch_index: OpenSearchVectorIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    opensearch_index.upsert([lesson("m1", 1)])
    (old_id,) = opensearch_server.indexes[INDEX_NAME].docs
    opensearch_server.requests.clear()
    opensearch_index.upsert([lesson("m1", 2, at=T0 + 5)])
    paths = [(r.method, r.url.split(":443")[1].split("?")[0]) for r in opensearch_server.requests]
    assert paths == [("POST", "/_bulk"), ("POST", f"/{INDEX_NAME}/_search"), ("POST", "/_bulk")]
    assert opensearch_server.requests[2].json_lines() == [{"delete": {"_index": INDEX_NAME, "_id": old_id}}]
    (remaining,) = opensearch_server.indexes[INDEX_NAME].docs.values()
    assert remaining["createdAt"] == int((T0 + 5) * 1000)


def test_delete_owner_pages_through_every_document_before_deleting(
    opensearch_index: OpenSearchVectorIndex,
    opensearch_server: FakeOpenSearchServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(opensearch_index_module(), "LOOKUP_PAGE", 3)
    opensearch_index.upsert([lesson(f"m{n}", n, at=T0 + n) for n in range(8)])
    opensearch_server.requests.clear()
    opensearch_index.delete_owner("acme", "lesson", "agent-a")
    searches = [r.json_lines()[0] for r in opensearch_server.requests if r.url.endswith("/_search")]
    assert len(searches) == 3
    assert "search_after" not in searches[0] and searches[1]["search_after"] and searches[2]["search_after"]
    assert all(s["_source"] is False and s["size"] == 3 for s in searches)
    assert opensearch_server.indexes[INDEX_NAME].docs == {}
    assert not any("_delete_by_query" in r.url for r in opensearch_server.requests)


def opensearch_index_module() -> Any:
    return opensearch_index


@pytest.mark.parametrize("status", [403, 429, 500, 503])
def test_a_failing_server_is_backend_unavailable_for_vectors(
    opensearch_index: OpenSearchVectorIndex, opensearch_server: FakeOpenSearchServer, status: int
) -> None:
    opensearch_server.failures = [status] * 5  # more than the client's own retries
    with pytest.raises(BackendUnavailable) as caught:
        opensearch_index.search(VectorQuery("acme", "lesson", "agent-a", unit(1), k=3))
    assert caught.value.part == "vectors"


def test_an_overloaded_server_is_retried_by_the_client(
    opensearch_index: OpenSearchVectorIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    opensearch_index.upsert([lesson("m1", 1)])
    opensearch_server.failures = [429, 503]
    hits = opensearch_index.search(VectorQuery("acme", "lesson", "agent-a", unit(1), k=3))
    assert [h.item_id for h in hits] == ["m1"]


def test_a_rejected_document_fails_the_upsert(
    opensearch_index: OpenSearchVectorIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    # A mapping without `agentId` (say, a stale index) rejects the lesson under `dynamic: strict`.
    del opensearch_server.indexes[INDEX_NAME].mapping["properties"]["agentId"]
    with pytest.raises(BackendUnavailable, match="strict_dynamic_mapping_exception"):
        opensearch_index.upsert([lesson("m1", 1)])


def test_a_vector_of_the_wrong_dimension_is_refused_before_any_request(
    opensearch_index: OpenSearchVectorIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    with pytest.raises(ValueError, match="dimension"):
        opensearch_index.upsert([VectorItem("acme", "lesson", "agent-a", "m1", np.ones(3), T0)])
    assert opensearch_server.requests == []


def test_the_region_comes_from_the_collection_endpoint() -> None:
    assert region_of("abc123.eu-west-1.aoss.amazonaws.com") == "eu-west-1"
    assert region_of("localhost") is None
