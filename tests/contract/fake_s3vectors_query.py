"""A test double of the S3 Vectors SERVER's QueryVectors, the one operation moto lacks.

moto answers every other S3 Vectors call the adapter makes (PutVectors, ListVectors, DeleteVectors,
CreateIndex) and keeps the vectors. `FakeS3VectorsQuery` is registered on a boto3 client's
`before-send.s3vectors.QueryVectors` event: it receives the fully serialised and SigV4-signed HTTP
request the adapter sends, records it, and answers it by executing the query over the vectors moto
holds, with the semantics the S3 Vectors documentation gives (read 2026-12-01):

- request: `vectorBucketName` + `indexName` (or `indexArn`), `topK` 1-100, `queryVector.float32` of the
  index's dimension, optional `filter`, `queryMode` (`ENHANCED` filters before the search;
  `CLASSIC` is refused on an ENHANCED index, and every index here is ENHANCED, as indexes in buckets
  created since 2026-09-30 are), `returnMetadata`, `returnDistance`;
- filter language (metadata-filtering page): `$eq` (implicit for a bare value; on a list value it
  matches any element), `$ne`, `$gt`, `$gte`, `$lt`, `$lte` (numbers only), `$in`, `$nin` (non-empty
  arrays), `$exists`, `$and`, `$or` (non-empty arrays of filters), several keys in one object = AND;
  at most 100 constraints; a key declared non-filterable at index creation cannot be filtered on;
- answer: the topK nearest of the vectors matching the filter (exact search: the double stands for
  ENHANCED's pre-filtering, so recall is 1), `distance` = 1 - cosine for the `cosine` metric;
- errors: `ValidationException` (400) for a malformed request or filter, `NotFoundException` (404)
  for a missing bucket or index, as moto answers the other operations.

Anything it does not understand is a 400, so the adapter cannot drift into requests the double
silently ignores. Index declarations (non-filterable keys) are read from the CreateIndex requests that
pass through the same client on their way to moto.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from botocore.awsrequest import AWSPreparedRequest, AWSResponse

MAX_TOP_K = 100
MAX_CONSTRAINTS = 100
COMPARISONS = {"$gt", "$gte", "$lt", "$lte"}
ALL_OPERATORS = {"$eq", "$ne", "$in", "$nin", "$exists", *COMPARISONS}
ACCOUNT_ID = "123456789012"  # moto's default account


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class RecordedQuery:
    url: str
    headers: dict[str, str]
    body: dict[str, Any]


class _RawBody:
    """The file-like body botocore reads a response from."""

    def __init__(self, data: bytes):
        self._data = data

    def stream(self, **_: Any) -> Any:
        yield self._data

    def read(self, *_: Any, **__: Any) -> bytes:
        data, self._data = self._data, b""
        return data


def _validation(message: str) -> Refused:
    return Refused(400, "ValidationException", message)


class FakeS3VectorsQuery:
    """QueryVectors over moto's stored vectors; see the module docstring."""

    def __init__(self) -> None:
        self.queries: list[RecordedQuery] = []
        # (bucket, index) -> keys declared non-filterable when the index was created.
        self.non_filterable: dict[tuple[str, str], set[str]] = {}

    def register_on(self, client: Any) -> None:
        client.meta.events.register("before-send.s3vectors.QueryVectors", self._on_query)
        client.meta.events.register("before-send.s3vectors.CreateIndex", self._on_create_index)

    # botocore event handlers

    def _on_create_index(self, request: AWSPreparedRequest, **_: Any) -> None:
        body = json.loads(request.body or b"{}")
        keys = set((body.get("metadataConfiguration") or {}).get("nonFilterableMetadataKeys", []))
        self.non_filterable[(body.get("vectorBucketName", ""), body.get("indexName", ""))] = keys
        return None  # moto creates the index

    def _on_query(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse:
        try:
            if "authorization" not in {k.lower() for k in request.headers}:
                raise Refused(403, "AccessDeniedException", "the request is not signed")
            body = json.loads(request.body or b"{}")
            headers = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in request.headers.items()}
            self.queries.append(RecordedQuery(request.url, headers, body))
            status, payload = 200, self.query(body)
        except Refused as refused:
            status, payload = refused.status, {"message": refused.message}
            error_headers = {"Content-Type": "application/json", "x-amzn-ErrorType": refused.code}
            return AWSResponse(request.url, status, error_headers, _RawBody(json.dumps(payload).encode()))
        return AWSResponse(
            request.url, status, {"Content-Type": "application/json"}, _RawBody(json.dumps(payload).encode())
        )

    # The service

    def query(self, body: dict[str, Any]) -> dict[str, Any]:
        known = {
            "vectorBucketName", "indexName", "indexArn", "topK", "queryVector", "filter",
            "queryMode", "returnMetadata", "returnDistance",
        }  # fmt: skip
        unknown = sorted(set(body) - known)
        if unknown:
            raise _validation(f"the double does not implement {', '.join(unknown)}")
        bucket, name = self._index_name(body)
        index = self._index(bucket, name)
        top_k = body.get("topK")
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
            raise _validation(f"topK must be an integer between 1 and {MAX_TOP_K}")
        if body.get("queryMode", "ENHANCED") != "ENHANCED":
            raise _validation("queryMode CLASSIC cannot be used on an ENHANCED index")
        vector = (body.get("queryVector") or {}).get("float32")
        if not isinstance(vector, list) or len(vector) != index.dimension:
            raise _validation(f"queryVector.float32 must have {index.dimension} values")
        matches = lambda metadata: True  # noqa: E731
        if "filter" in body:
            check_filter(body["filter"], self.non_filterable.get((bucket, name), set()))
            matches = lambda metadata: evaluate(body["filter"], metadata)  # noqa: E731
        q = np.asarray(vector, dtype=np.float64)
        scored = []
        for stored in index.vectors.values():
            metadata = stored.metadata or {}
            if not matches(metadata):
                continue
            v = np.asarray(stored.data["float32"], dtype=np.float64)
            denominator = float(np.linalg.norm(q) * np.linalg.norm(v))
            cosine = float(q @ v) / denominator if denominator else 0.0
            scored.append((1.0 - cosine, stored.key, metadata))
        scored.sort(key=lambda entry: (entry[0], entry[1]))
        out = []
        for distance, key, metadata in scored[:top_k]:
            entry: dict[str, Any] = {"key": key}
            if body.get("returnDistance"):
                entry["distance"] = distance
            if body.get("returnMetadata"):
                entry["metadata"] = metadata
            out.append(entry)
        return {"vectors": out, "distanceMetric": index.distance_metric}

    def _index_name(self, body: dict[str, Any]) -> tuple[str, str]:
        if "indexArn" in body:
            resource = str(body["indexArn"]).split(":", 5)[-1]  # bucket/<bucket>/index/<index>
            parts = resource.split("/")
            if len(parts) != 4 or parts[0] != "bucket" or parts[2] != "index":
                raise _validation("indexArn is not an index ARN")
            return parts[1], parts[3]
        if not body.get("vectorBucketName") or not body.get("indexName"):
            raise _validation("name the index by indexArn, or by vectorBucketName and indexName")
        return str(body["vectorBucketName"]), str(body["indexName"])

    def _index(self, bucket: str, name: str) -> Any:
        from moto.s3vectors.models import s3vectors_backends

        backend = s3vectors_backends[ACCOUNT_ID]["aws"]
        for vector_bucket in backend.vector_buckets.values():
            if vector_bucket.vector_bucket_name == bucket:
                for index in vector_bucket.indexes.values():
                    if index.index_name == name:
                        return index
                raise Refused(404, "NotFoundException", "The specified index could not be found")
        raise Refused(404, "NotFoundException", "The specified vector bucket could not be found")


def check_filter(expression: Any, non_filterable: set[str]) -> None:
    """Refuse what the service refuses: malformed operators, non-filterable keys, over 100 constraints."""
    count = _check(expression, non_filterable)
    if count > MAX_CONSTRAINTS:
        raise _validation(f"the filter has {count} constraints; at most {MAX_CONSTRAINTS}")


def _check(expression: Any, non_filterable: set[str]) -> int:
    if not isinstance(expression, dict) or not expression:
        raise _validation("a filter is a non-empty object")
    count = 0
    for key, value in expression.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list) or not value:
                raise _validation(f"{key} takes a non-empty array of filters")
            count += sum(_check(sub, non_filterable) for sub in value)
        elif key.startswith("$"):
            raise _validation(f"unknown logical operator {key}")
        else:
            if key in non_filterable:
                raise _validation(f"metadata key {key!r} is not filterable")
            count += _check_condition(key, value)
    return count


def _check_condition(key: str, condition: Any) -> int:
    if not isinstance(condition, dict):
        if isinstance(condition, (str, int, float, bool)):
            return 1
        raise _validation(f"{key}: a bare value must be a string, number or boolean")
    if not condition:
        raise _validation(f"{key}: an empty condition")
    for operator, operand in condition.items():
        if operator not in ALL_OPERATORS:
            raise _validation(f"{key}: unknown operator {operator}")
        if operator in COMPARISONS and (isinstance(operand, bool) or not isinstance(operand, (int, float))):
            raise _validation(f"{key}: {operator} takes a number")
        if operator in ("$in", "$nin") and (not isinstance(operand, list) or not operand):
            raise _validation(f"{key}: {operator} takes a non-empty array")
        if operator == "$exists" and not isinstance(operand, bool):
            raise _validation(f"{key}: $exists takes a boolean")
        if operator in ("$eq", "$ne") and not isinstance(operand, (str, int, float, bool)):
            raise _validation(f"{key}: {operator} takes a string, number or boolean")
    return len(condition)


def evaluate(expression: dict[str, Any], metadata: dict[str, Any]) -> bool:
    results = []
    for key, value in expression.items():
        if key == "$and":
            results.append(all(evaluate(sub, metadata) for sub in value))
        elif key == "$or":
            results.append(any(evaluate(sub, metadata) for sub in value))
        else:
            condition = value if isinstance(value, dict) else {"$eq": value}
            results.append(all(_holds(operator, operand, key, metadata) for operator, operand in condition.items()))
    return all(results)


def _holds(operator: str, operand: Any, key: str, metadata: dict[str, Any]) -> bool:
    if operator == "$exists":
        return (key in metadata) is operand
    if key not in metadata:
        return operator in ("$ne", "$nin")
    value = metadata[key]
    values = value if isinstance(value, list) else [value]
    if operator == "$eq":
        return operand in values
    if operator == "$ne":
        return operand not in values
    if operator == "$in":
        return any(v in operand for v in values)
    if operator == "$nin":
        return not any(v in operand for v in values)
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    compare = {
        "$gt": lambda v: v > operand,
        "$gte": lambda v: v >= operand,
        "$lt": lambda v: v < operand,
        "$lte": lambda v: v <= operand,
    }[operator]
    return any(compare(v) for v in numbers)
