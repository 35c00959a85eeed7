"""S3VectorsIndex at its boundary: the signed requests it sends, how it lives with the service's limits.

moto holds the vectors; QueryVectors is answered by tests/contract/fake_s3vectors_query.py, which
sees the request as it would go on the wire.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from agentmem.adapters.aws import s3vectors_layout as layout
from agentmem.adapters.aws.s3vectors_index import S3VectorsIndex, key_ref
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vectors import VectorItem, VectorQuery

from tests.contract.conftest import REGION, S3VECTORS_BUCKET, VECTOR_DIMENSION
from tests.contract.fake_s3vectors_query import FakeS3VectorsQuery, Refused, check_filter, evaluate

# QueryVectors is tests/contract/fake_s3vectors_query.py, a double written here.
pytestmark = pytest.mark.double

T0 = 1_750_000_000.25


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(VECTOR_DIMENSION).astype(np.float32)
    return v / np.linalg.norm(v)


def lesson(item_id: str, seed: int, *, owner: str = "agent-a", at: float = T0) -> VectorItem:
    return VectorItem("acme", "lesson", owner, item_id, unit(seed), at)


def count_calls(index: S3VectorsIndex, operation: str) -> list[dict[str, Any]]:
    """The bodies of every `operation` request the adapter's client sends (moto still answers them)."""
    bodies: list[dict[str, Any]] = []

    def record(request: Any, **_: Any) -> None:
        bodies.append(json.loads(request.body or b"{}"))

    index.client.meta.events.register(f"before-send.s3vectors.{operation}", record)
    return bodies


def test_the_client_is_built_on_first_use_not_before() -> None:
    index = S3VectorsIndex("agentmem-acme-vectors", dimension=VECTOR_DIMENSION)
    assert not index._client.built


def test_a_query_is_signed_and_asks_for_pre_filtering_by_owner(
    s3vectors_index: S3VectorsIndex, s3vectors_query_server: FakeS3VectorsQuery
) -> None:
    s3vectors_index.upsert([lesson("m1", 1)])
    s3vectors_index.search(VectorQuery("acme", "lesson", "agent-a", unit(1), k=3))
    (query,) = s3vectors_query_server.queries
    assert query.url == f"https://s3vectors.{REGION}.api.aws/QueryVectors"
    assert re.match(
        rf"AWS4-HMAC-SHA256 Credential=testing/\d{{8}}/{REGION}/s3vectors/aws4_request, ",
        query.headers["Authorization"],
    )
    assert query.body["indexName"] == "acme-lesson"
    assert query.body["queryMode"] == "ENHANCED"
    assert query.body["filter"] == {"owner": {"$eq": "agent-a"}}
    assert query.body["topK"] == 3


def test_created_after_becomes_a_millisecond_filter_beside_the_owner(
    s3vectors_index: S3VectorsIndex, s3vectors_query_server: FakeS3VectorsQuery
) -> None:
    s3vectors_index.search(VectorQuery("acme", "fact", "user-1", unit(1), k=5, created_after=T0))
    (query,) = s3vectors_query_server.queries
    assert query.body["filter"] == {"$and": [{"owner": {"$eq": "user-1"}}, {"createdAt": {"$gt": 1_750_000_000_250}}]}
    assert query.body["indexName"] == "acme-fact"


def test_k_above_the_service_limit_pages_past_the_100_nearest_excluding_what_was_returned(
    s3vectors_index: S3VectorsIndex, s3vectors_query_server: FakeS3VectorsQuery
) -> None:
    s3vectors_index.upsert([lesson(f"m{n}", n) for n in range(120)])
    hits = s3vectors_index.search(VectorQuery("acme", "lesson", "agent-a", unit(3), k=150))
    first, second = s3vectors_query_server.queries[:2]
    assert first.body["topK"] == layout.MAX_TOP_K
    # The next page repeats the query without the keys the first returned (their digests, `ref $nin`).
    excluded = next(c["ref"]["$nin"] for c in second.body["filter"]["$and"] if "ref" in c)
    assert len(excluded) == layout.MAX_TOP_K
    assert len(hits) == 120 and len({h.item_id for h in hits}) == 120
    assert hits[0].item_id == "m3"


def test_writes_are_chunked_to_the_service_limits(s3vectors_index: S3VectorsIndex) -> None:
    puts = count_calls(s3vectors_index, "PutVectors")
    deletes = count_calls(s3vectors_index, "DeleteVectors")
    s3vectors_index.upsert([lesson(f"m{n}", n) for n in range(1_100)])
    assert [len(body["vectors"]) for body in puts] == [500, 500, 100]
    s3vectors_index.delete("acme", "lesson", "agent-a", [f"m{n}" for n in range(600)])
    assert [len(body["keys"]) for body in deletes] == [500, 100]
    remaining = s3vectors_index.search(VectorQuery("acme", "lesson", "agent-a", unit(700), k=10))
    assert remaining[0].item_id == "m700"
    assert all(int(hit.item_id[1:]) >= 600 for hit in remaining)


def test_stored_metadata_is_the_filter_fields_and_the_item_id_only(s3vectors_index: S3VectorsIndex) -> None:
    puts = count_calls(s3vectors_index, "PutVectors")
    s3vectors_index.upsert([lesson("m/1 ü", 1, owner="agent:a@x")])
    (vector,) = puts[0]["vectors"]
    assert vector["metadata"] == {"owner": "agent:a@x", "createdAt": 1_750_000_000_250, "itemId": "m/1 ü",
                                  "ref": key_ref(vector["key"])}
    assert layout.split_key(vector["key"]) == ("agent:a@x", "m/1 ü")
    assert len(json.dumps({k: vector["metadata"][k] for k in ("owner", "createdAt")})) < layout.MAX_FILTERABLE_BYTES
    hits = s3vectors_index.search(VectorQuery("acme", "lesson", "agent:a@x", unit(1), k=1))
    assert [h.item_id for h in hits] == ["m/1 ü"]


def test_writing_to_an_index_that_does_not_exist_is_a_backend_error(s3vectors_index: S3VectorsIndex) -> None:
    with pytest.raises(BackendUnavailable):
        s3vectors_index.upsert([VectorItem("initech", "lesson", "agent-a", "m1", unit(1), T0)])


def test_a_wrong_dimension_is_refused_before_any_call(s3vectors_index: S3VectorsIndex) -> None:
    with pytest.raises(ValueError, match="dimension"):
        s3vectors_index.upsert([VectorItem("acme", "lesson", "agent-a", "m1", np.ones(3, np.float32), T0)])


# The double's filter language, checked against the documented semantics it implements.


def test_the_double_refuses_a_filter_on_a_non_filterable_key() -> None:
    with pytest.raises(Refused, match="not filterable"):
        check_filter({"itemId": "m1"}, {"itemId"})


def test_the_double_refuses_more_than_100_constraints() -> None:
    check_filter({"$or": [{"owner": f"a{n}"} for n in range(100)]}, set())
    with pytest.raises(Refused, match="101 constraints"):
        check_filter({"$or": [{"owner": f"a{n}"} for n in range(101)]}, set())


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ({"genre": "drama"}, True),
        ({"genre": {"$eq": "comedy"}}, True),  # $eq on a list matches any element
        ({"genre": {"$nin": ["comedy"]}}, False),
        ({"year": {"$gte": 2020, "$lt": 2021}}, True),
        ({"year": {"$gt": 2020}}, False),
        ({"$or": [{"year": {"$lt": 2000}}, {"rating": {"$exists": False}}]}, True),
        ({"$and": [{"year": 2020}, {"genre": {"$in": ["horror"]}}]}, False),
        ({"missing": {"$ne": "x"}}, True),
    ],
)
def test_the_double_evaluates_filters_as_documented(expression: dict[str, Any], expected: bool) -> None:
    metadata = {"genre": ["drama", "comedy"], "year": 2020}
    check_filter(expression, set())
    assert evaluate(expression, metadata) is expected


def test_the_bucket_named_by_the_fixture_is_the_one_queried(
    s3vectors_index: S3VectorsIndex, s3vectors_query_server: FakeS3VectorsQuery
) -> None:
    s3vectors_index.search(VectorQuery("acme", "turn", "user-1", unit(1), k=1))
    assert s3vectors_query_server.queries[0].body["vectorBucketName"] == S3VECTORS_BUCKET


def test_erasing_an_owner_pages_through_every_key_and_deletes_only_that_owners() -> None:
    """moto returns ListVectors in one page; the service pages by 1,000: botocore's Stubber plays those pages."""
    import boto3
    from botocore.stub import Stubber

    client = boto3.client(
        "s3vectors", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
    )
    index = S3VectorsIndex("agentmem-acme-vectors", dimension=VECTOR_DIMENSION, client=client)
    mine = [layout.vector_key("user-1", f"t{n}") for n in range(3)]
    theirs = [layout.vector_key("user-10", "t0"), layout.vector_key("user-2", "t1")]
    listing = {"vectorBucketName": "agentmem-acme-vectors", "indexName": "acme-turn", "maxResults": 1000}
    with Stubber(client) as stub:
        stub.add_response(
            "list_vectors", {"vectors": [{"key": k} for k in [mine[0], *theirs]], "nextToken": "page-2"}, listing
        )
        stub.add_response(
            "list_vectors", {"vectors": [{"key": k} for k in mine[1:]]}, {**listing, "nextToken": "page-2"}
        )
        stub.add_response(
            "delete_vectors", {}, {"vectorBucketName": "agentmem-acme-vectors", "indexName": "acme-turn", "keys": mine}
        )
        index.delete_owner("acme", "turn", "user-1")
        stub.assert_no_pending_responses()
