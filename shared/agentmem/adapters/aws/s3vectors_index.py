"""The vector index on Amazon S3 Vectors: pay per use, nothing to pay at rest but storage.

Layout (bucket, one index per tenant and kind, keys, metadata) and the service's limits:
`agentmem.adapters.aws.s3vectors_layout`. How this adapter lives with them:

- top-k: QueryVectors returns at most 100 neighbours. A `VectorQuery` asking for more is paged: the
  next call repeats the query with the keys already returned excluded (`ref $nin [...]`, the digests
  the vectors carry), so each page is the next nearest, until `k` or no more matches.
- filters: every query filters on `owner` (and `createdAt > created_after` when given, each required
  tag `tags $eq t`, and when paging the exclusion), a few constraints against the service's 100.
  The query asks for `queryMode: ENHANCED`, which applies the
  filter *before* the vector search, so an owner with few vectors in a large index still gets its k
  nearest (CLASSIC mode filters during the search and can return fewer than k).
- writes: PutVectors replaces a key in place, so `upsert` needs no delete of an older copy;
  PutVectors and DeleteVectors take 500 vectors per call, sent in chunks.
- erasing an owner (`delete_owner`): the service has no delete-by-filter, and a query is approximate,
  so the adapter lists every key of the index (1,000 per page) and deletes the owner's: exact, and
  erasure is rare.
- the tenant is the index: a search in an index that does not exist (a tenant or kind never written)
  finds nothing; a write to one is an error.

Vectors are stored unit length (the cosine metric ignores length, but float32 precision is best there);
no text is stored, only the filter fields and the item id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from agentmem.adapters.aws.lazy import LazyClient
from agentmem.adapters.aws.s3vectors_layout import (
    CREATED_AT_KEY,
    DATA_TYPE,
    ITEM_KEY,
    LIST_PAGE,
    MAX_DELETE,
    MAX_DIMENSION,
    MAX_PUT,
    MAX_TOP_K,
    OWNER_KEY,
    REF_KEY,
    TAGS_KEY,
    index_name,
    split_key,
    vector_key,
)
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vectors import VectorHit, VectorItem, VectorKind, VectorQuery

NOT_FOUND = "NotFoundException"


def build_client(region: str | None = None) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3vectors",
        region_name=region,
        config=Config(retries={"mode": "adaptive", "max_attempts": 4}, connect_timeout=3, read_timeout=10),
    )


def to_millis(seconds: float) -> int:
    return int(seconds * 1000)


def key_ref(key: str) -> str:
    """The short filterable digest of a vector's key (what a paged query excludes)."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def query_filter(query: VectorQuery, exclude: Sequence[str] = ()) -> dict[str, Any]:
    """The metadata filter confining a query to one owner and its filters, less the `exclude`d refs."""
    constraints: list[dict[str, Any]] = [{OWNER_KEY: {"$eq": query.owner_id}}]
    if query.created_after is not None:
        constraints.append({CREATED_AT_KEY: {"$gt": to_millis(query.created_after)}})
    constraints += [{TAGS_KEY: {"$eq": tag}} for tag in query.tags]
    if exclude:
        constraints.append({REF_KEY: {"$nin": list(exclude)}})
    return constraints[0] if len(constraints) == 1 else {"$and": constraints}


class S3VectorsIndex:
    """VectorIndex on the indexes of one S3 Vectors bucket (`<tenant>-<kind>` each)."""

    def __init__(self, bucket: str, *, dimension: int = 1024, region: str | None = None, client: Any = None):
        if not 1 <= dimension <= MAX_DIMENSION:
            raise ValueError(f"S3 Vectors takes dimensions 1-{MAX_DIMENSION}, not {dimension}")
        self.bucket = bucket
        self.dimension = dimension
        self._client = LazyClient(lambda: build_client(region), client)

    @property
    def client(self) -> Any:
        return self._client()

    def upsert(self, items: Sequence[VectorItem]) -> None:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for item in items:
            key = vector_key(item.owner_id, item.item_id)
            metadata: dict[str, Any] = {
                OWNER_KEY: item.owner_id, CREATED_AT_KEY: to_millis(item.created_at), ITEM_KEY: item.item_id,
                REF_KEY: key_ref(key),
            }
            if item.tags:
                metadata[TAGS_KEY] = list(item.tags)
            groups.setdefault((item.tenant, item.kind), []).append(
                {"key": key, "data": {DATA_TYPE: self._unit(item.vector)}, "metadata": metadata}
            )
        for (tenant, kind), vectors in groups.items():
            index = index_name(tenant, kind)
            for start in range(0, len(vectors), MAX_PUT):
                chunk = vectors[start : start + MAX_PUT]
                self._call(
                    lambda chunk=chunk, index=index: self.client.put_vectors(
                        vectorBucketName=self.bucket, indexName=index, vectors=chunk
                    )
                )

    def delete(self, tenant: str, kind: VectorKind, owner_id: str, item_ids: Sequence[str]) -> None:
        self._delete_keys(tenant, kind, [vector_key(owner_id, item_id) for item_id in dict.fromkeys(item_ids)])

    def delete_owner(self, tenant: str, kind: VectorKind, owner_id: str) -> None:
        # Collect first, then delete: deleting while paging could shift the pages.
        keys = [key for key in self._keys(tenant, kind) if split_key(key)[0] == owner_id]
        self._delete_keys(tenant, kind, keys)

    def search(self, query: VectorQuery) -> list[VectorHit]:
        hits: list[VectorHit] = []
        seen: set[str] = set()
        while len(hits) < query.k:
            top_k = min(query.k - len(hits), MAX_TOP_K)
            request = {
                "vectorBucketName": self.bucket,
                "indexName": index_name(query.tenant, query.kind),
                "topK": top_k,
                "queryVector": {DATA_TYPE: self._unit(query.vector)},
                "filter": query_filter(query, [key_ref(key) for key in seen]),
                "queryMode": "ENHANCED",
                "returnMetadata": True,
                "returnDistance": True,
            }
            response = self._call(lambda request=request: self.client.query_vectors(**request), missing_ok=True)
            page = (response or {}).get("vectors", [])
            fresh = [vector for vector in page if vector["key"] not in seen]
            for vector in fresh:
                seen.add(vector["key"])
                metadata = vector.get("metadata") or {}
                owner, item_from_key = split_key(vector["key"])
                if owner != query.owner_id:  # the filter already guarantees it; never return another owner's id
                    continue
                similarity = max(-1.0, min(1.0, 1.0 - float(vector["distance"])))
                hits.append(VectorHit(str(metadata.get(ITEM_KEY, item_from_key)), similarity))
            # A short page is the last; a page of nothing new (vectors written before `ref` existed
            # escape the exclusion) ends the paging too.
            if len(page) < top_k or not fresh:
                break
        return hits[: query.k]

    # Internals

    def _unit(self, vector: np.ndarray) -> list[float]:
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if len(v) != self.dimension:
            raise ValueError(f"vector dimension {len(v)} does not match the index's {self.dimension}")
        norm = float(np.linalg.norm(v))
        return [float(x) for x in (v / norm if norm > 0 else v)]

    def _keys(self, tenant: str, kind: str) -> Iterator[str]:
        request: dict[str, Any] = {
            "vectorBucketName": self.bucket,
            "indexName": index_name(tenant, kind),
            "maxResults": LIST_PAGE,
        }
        while True:
            page = self._call(lambda request=request: self.client.list_vectors(**request), missing_ok=True)
            if page is None:
                return
            for vector in page.get("vectors", []):
                yield str(vector["key"])
            token = page.get("nextToken")
            if not token:
                return
            request = {**request, "nextToken": token}

    def _delete_keys(self, tenant: str, kind: str, keys: list[str]) -> None:
        index = index_name(tenant, kind)
        for start in range(0, len(keys), MAX_DELETE):
            chunk = keys[start : start + MAX_DELETE]
            self._call(
                lambda chunk=chunk: self.client.delete_vectors(
                    vectorBucketName=self.bucket, indexName=index, keys=chunk
                ),
                missing_ok=True,
            )

    def _call(self, request: Any, *, missing_ok: bool = False) -> dict[str, Any] | None:
        """Run one API call; a missing index is None when `missing_ok`, any other failure BackendUnavailable."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response: dict[str, Any] = request()
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if missing_ok and code == NOT_FOUND:
                return None
            raise BackendUnavailable("vectors", f"S3 Vectors: {code or 'error'}") from exc
        except BotoCoreError as exc:
            raise BackendUnavailable("vectors", f"S3 Vectors client: {type(exc).__name__}") from exc
        return response
