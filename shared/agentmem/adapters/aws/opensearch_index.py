"""The vector index on Amazon OpenSearch Serverless (a VECTORSEARCH collection), signed with SigV4.

What Serverless changes, and how this adapter lives with it:

- VECTORSEARCH collections assign document ids themselves: an index or bulk
  action that names an `_id` is rejected. A vector is therefore known by its
  fields (tenant, kind, owner, memoryId). `upsert` indexes the new document
  first, then deletes the older documents of the same item, so the item never
  disappears from search while it is being replaced.
- There is no `refresh` and no `_delete_by_query`: deletes are a search for
  the documents' ids followed by a bulk delete. Writes become searchable after
  the collection's own refresh, so a delete issued within about a second of
  the upsert it undoes may miss the document; `search` also drops duplicate
  hits of one item, which can exist for the same short window.
- Every search is a k-NN query with an efficient filter (a `bool` filter
  inside the `knn` clause): the engine filters by tenant, kind, owner, age and
  tags while it walks the graph, so a tenant's k neighbours are always k of its
  own (a post-filter could return fewer than k, or none), and a scoped query
  gets the k nearest of its scope. `k` is at most the result window (10,000).

HTTP goes through `requests` (opensearch-py's RequestsHttpConnection) with
RequestsAWSV4SignerAuth for service `aoss`. Chosen over urllib3 because the
signer then signs the exact prepared request that is sent (body hash in
`x-amz-content-sha256` included), and the session's transport adapter is the
one seam where tests can see signed requests without monkeypatching.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlparse

import numpy as np

from agentmem.adapters.aws.lazy import LazyClient
from agentmem.adapters.aws.vector_mapping import (
    CREATED_AT_FIELD,
    TEXT_KIND_SUFFIX,
    VECTOR_FIELD,
    cosine_from_score,
)
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vectors import MAX_K, VectorHit, VectorItem, VectorKind, VectorQuery

SERVICE = "aoss"
# Field names come from the index mapping CloudFormation creates (vector_mapping), which is
# `dynamic: strict`: a document with any other field is rejected.
FIELD_TENANT = "tenant"
FIELD_KIND = "kind"
FIELD_ITEM = "memoryId"  # the item's id, whatever its kind (a lesson's memory id, a fact's id)
FIELD_TAGS = "tags"
# The owner of a vector is an agent for lessons and a user for everything else; an item's owner is
# `users/<id>` or `agents/<id>` (ports/items.vector_owner), kept in `userId` as the mapping is strict.
OWNER_FIELD: dict[str, str] = {"lesson": "agentId", "fact": "userId", "turn": "userId", "item": "userId"}
# A kind's keyword documents (opensearch_lexical) have the same owner field.
OWNER_FIELD.update({kind + TEXT_KIND_SUFFIX: field for kind, field in list(OWNER_FIELD.items())})
BULK_CHUNK = 100  # documents per bulk request: ~1 MB at 1024 dimensions
LOOKUP_PAGE = 500
MAX_LOOKUP_IDS = 500  # item ids per `terms` filter
# Extra neighbours fetched so that duplicate documents of one item (see the module
# docstring) cannot push a distinct item out of the top k.
DUPLICATE_MARGIN = 10


def build_client(endpoint: str, region: str | None = None, credentials: Any = None) -> Any:
    """An opensearch-py client for one Serverless collection endpoint, signing every request (SigV4, aoss)."""
    import boto3
    from opensearchpy import OpenSearch, RequestsAWSV4SignerAuth, RequestsHttpConnection

    host = urlparse(endpoint).hostname if "://" in endpoint else endpoint.split("/")[0]
    if not host:
        raise ValueError(f"not an OpenSearch endpoint: {endpoint!r}")
    session = boto3.Session()
    region = region or region_of(host) or session.region_name
    if not region:
        raise ValueError("the region of the OpenSearch collection is unknown: pass region=")
    credentials = credentials or session.get_credentials()
    if credentials is None:
        raise BackendUnavailable("vectors", "no AWS credentials to sign OpenSearch requests with")
    return OpenSearch(
        hosts=[{"host": host, "port": 443}],
        http_auth=RequestsAWSV4SignerAuth(credentials, region, SERVICE),
        use_ssl=True,
        verify_certs=True,
        connection_class=RequestsHttpConnection,
        timeout=10,
        max_retries=2,
        retry_on_timeout=True,
        retry_on_status=(429, 502, 503, 504),
        pool_maxsize=10,
    )


def region_of(host: str) -> str | None:
    """The region in a collection endpoint `<id>.<region>.aoss.amazonaws.com`, if it is one."""
    parts = host.split(".")
    if len(parts) >= 4 and parts[-3] == SERVICE:
        return parts[-4]
    return None


def to_millis(seconds: float) -> int:
    return int(seconds * 1000)


def owner_filter(tenant: str, kind: str, owner_id: str) -> list[dict[str, Any]]:
    """The filter confining a query to one owner's vectors of one kind in one tenant."""
    return [
        {"term": {FIELD_TENANT: tenant}},
        {"term": {FIELD_KIND: kind}},
        {"term": {OWNER_FIELD[kind]: owner_id}},
    ]


def knn_query_body(query: VectorQuery, vector: Sequence[float], size: int) -> dict[str, Any]:
    """The search body: k-NN on `vector` with the owner (and age) filter applied inside the k-NN walk."""
    filters = owner_filter(query.tenant, query.kind, query.owner_id)
    if query.created_after is not None:
        filters.append({"range": {CREATED_AT_FIELD: {"gt": to_millis(query.created_after)}}})
    filters += [{"term": {FIELD_TAGS: tag}} for tag in query.tags]
    return {
        "size": size,
        "_source": [FIELD_ITEM],
        "query": {"knn": {VECTOR_FIELD: {"vector": list(vector), "k": size, "filter": {"bool": {"filter": filters}}}}},
    }


def document(item: VectorItem, vector: Sequence[float]) -> dict[str, Any]:
    """The indexed document of one vector: the vector and the fields searches filter on, no text."""
    doc: dict[str, Any] = {
        VECTOR_FIELD: list(vector),
        FIELD_TENANT: item.tenant,
        FIELD_KIND: item.kind,
        OWNER_FIELD[item.kind]: item.owner_id,
        FIELD_ITEM: item.item_id,
        CREATED_AT_FIELD: to_millis(item.created_at),
    }
    if item.tags:
        doc[FIELD_TAGS] = list(item.tags)
    return doc


class OpenSearchVectorIndex:
    """VectorIndex on one index of an OpenSearch Serverless VECTORSEARCH collection."""

    def __init__(
        self,
        endpoint: str,
        index_name: str,
        region: str | None = None,
        client: Any = None,
        dimension: int = 1024,
    ):
        self.endpoint = endpoint
        self.index_name = index_name
        self.region = region
        self.dimension = dimension
        self._client = LazyClient(lambda: build_client(self.endpoint, self.region), client)

    @property
    def client(self) -> Any:
        """The signed OpenSearch client, built on first use."""
        return self._client()

    def upsert(self, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        vectors = [self._unit(item.vector) for item in items]
        new_ids: set[str] = set()
        for start in range(0, len(items), BULK_CHUNK):
            chunk = range(start, min(start + BULK_CHUNK, len(items)))
            actions: list[dict[str, Any]] = []
            for i in chunk:
                # No `_id`: VECTORSEARCH collections reject custom document ids.
                actions += [{"index": {"_index": self.index_name}}, document(items[i], vectors[i])]
            new_ids.update(self._bulk(actions))
        # Only now remove what the new documents replace, so a search never finds the item missing.
        groups: dict[tuple[str, str, str], list[str]] = {}
        for item in items:
            groups.setdefault((item.tenant, item.kind, item.owner_id), []).append(item.item_id)
        stale = [
            doc_id
            for (tenant, kind, owner), ids in groups.items()
            for doc_id in self._document_ids(tenant, kind, owner, ids)
            if doc_id not in new_ids
        ]
        self._bulk_delete(stale)

    def delete(self, tenant: str, kind: VectorKind, owner_id: str, item_ids: Sequence[str]) -> None:
        if item_ids:
            self._bulk_delete(list(self._document_ids(tenant, kind, owner_id, list(item_ids))))

    def delete_owner(self, tenant: str, kind: VectorKind, owner_id: str) -> None:
        # Collect every id first: searching again after each delete would find the same
        # documents until the collection refreshes.
        self._bulk_delete(list(self._document_ids(tenant, kind, owner_id, None)))

    def search(self, query: VectorQuery) -> list[VectorHit]:
        if query.k <= 0:
            return []
        vector = self._unit(query.vector)
        size = min(query.k + min(query.k, DUPLICATE_MARGIN), MAX_K)
        body = knn_query_body(query, vector, size)
        response = self._call(lambda: self.client.search(index=self.index_name, body=body))
        hits: list[VectorHit] = []
        seen: set[str] = set()
        # Hits come best first; the first one of an item is its best.
        for hit in response.get("hits", {}).get("hits", []):
            item_id = hit.get("_source", {}).get(FIELD_ITEM)
            if item_id is None or item_id in seen:
                continue
            seen.add(item_id)
            hits.append(VectorHit(item_id, cosine_from_score(float(hit["_score"]))))
        return hits[: query.k]

    # Internals

    def _unit(self, vector: np.ndarray) -> list[float]:
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if len(v) != self.dimension:
            raise ValueError(f"vector dimension {len(v)} does not match the index's {self.dimension}")
        norm = float(np.linalg.norm(v))
        return [float(x) for x in (v / norm if norm > 0 else v)]

    def _bulk(self, actions: list[dict[str, Any]]) -> list[str]:
        """Send one bulk request; the ids of the documents it indexed. Any failed action fails the call."""
        if not actions:
            return []
        body = "".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions)
        response = self._call(lambda: self.client.bulk(body=body))
        ids = []
        failures = []
        for entry in response.get("items", []):
            result = next(iter(entry.values()))
            status = int(result.get("status", 500))
            if "index" in entry and status < 300:
                ids.append(str(result["_id"]))
            elif "delete" in entry and (status < 300 or status == 404):
                continue  # already gone is what a delete wants
            elif status >= 300:
                failures.append(f"{status} {result.get('error', {}).get('type', '')}".strip())
        if failures:
            raise BackendUnavailable("vectors", f"OpenSearch bulk: {len(failures)} failed: {failures[0]}...")
        return ids

    def _bulk_delete(self, doc_ids: Iterable[str]) -> None:
        ids = list(dict.fromkeys(doc_ids))
        for start in range(0, len(ids), BULK_CHUNK):
            chunk = ids[start : start + BULK_CHUNK]
            self._bulk([{"delete": {"_index": self.index_name, "_id": doc_id}} for doc_id in chunk])

    def _document_ids(self, tenant: str, kind: str, owner_id: str, item_ids: list[str] | None) -> Iterator[str]:
        """Ids of the owner's documents (of `item_ids` only, when given), paged with search_after."""
        chunks: list[list[str] | None] = (
            [None]
            if item_ids is None
            else [item_ids[i : i + MAX_LOOKUP_IDS] for i in range(0, len(item_ids), MAX_LOOKUP_IDS)]
        )
        for chunk in chunks:
            filters = owner_filter(tenant, kind, owner_id)
            if chunk is not None:
                filters.append({"terms": {FIELD_ITEM: chunk}})
            body: dict[str, Any] = {
                "size": LOOKUP_PAGE,
                "_source": False,
                "query": {"bool": {"filter": filters}},
                "sort": [{CREATED_AT_FIELD: "asc"}, {FIELD_ITEM: "asc"}],
            }
            while True:
                page = self._call(lambda body=body: self.client.search(index=self.index_name, body=body))
                hits = page.get("hits", {}).get("hits", [])
                for hit in hits:
                    yield str(hit["_id"])
                if len(hits) < LOOKUP_PAGE:
                    break
                body = {**body, "search_after": hits[-1]["sort"]}

    def _call(self, request: Any) -> dict[str, Any]:
        from opensearchpy.exceptions import ImproperlyConfigured, TransportError

        try:
            response: dict[str, Any] = request()
        except TransportError as exc:
            raise BackendUnavailable("vectors", f"OpenSearch: {exc.status_code} {exc.error}") from exc
        except ImproperlyConfigured as exc:
            raise BackendUnavailable("vectors", f"OpenSearch client: {exc}") from exc
        return response
