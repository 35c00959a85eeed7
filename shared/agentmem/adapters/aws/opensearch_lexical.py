"""The lexical index on OpenSearch Serverless: the keyword side of turn recall, BM25 scored by OpenSearch.

Each `(item_id, text)` becomes its own document in the vector index's collection: the tenant, owner and
item id in the keyword fields, the (already masked) text in the `text` field (`agentmem_english`), no
vector, and `kind` set to the caller's kind plus `TEXT_KIND_SUFFIX` so the vector adapter's look-ups and
deletes never touch these documents (and a k-NN search cannot find them: they have no vector). A
separate document, not the text on the turn's vector document, because the two ports write different
text: the lexical document is the turn preceded by the turn before it (`turn_search.lexical_text`).

`search` is a `match` query (OR of the query's terms) in a `bool` whose `filter` confines it to the
tenant, kind and owner; the scores are OpenSearch's BM25. Unlike `LocalBm25Index`, OpenSearch computes
BM25's statistics (document count, average length, document frequencies) over the whole index, not
per owner: another owner's texts can change a score, never which documents a caller can see.
Its analyser drops the same stop words and stems with the same Snowball English algorithm as the local
index's (`vector_mapping.text_analysis`; what still differs is said there).

Writes follow the vector adapter's rules for VECTORSEARCH collections (no custom ids, no refresh, no
delete-by-query), and reuse its bulk and look-up code.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from agentmem.adapters.aws.opensearch_index import (
    DUPLICATE_MARGIN,
    FIELD_ITEM,
    FIELD_KIND,
    FIELD_TENANT,
    OWNER_FIELD,
    OpenSearchVectorIndex,
    owner_filter,
    to_millis,
)
from agentmem.adapters.aws.vector_mapping import CREATED_AT_FIELD, TEXT_FIELD, TEXT_KIND_SUFFIX

__all__ = ["OpenSearchLexicalIndex", "match_query_body"]


def text_kind(kind: str) -> str:
    return kind + TEXT_KIND_SUFFIX


def match_query_body(tenant: str, kind: str, owner_id: str, query: str, size: int) -> dict[str, Any]:
    """A BM25 `match` on the text field, filtered (unscored) to one tenant, kind and owner."""
    return {
        "size": size,
        "_source": [FIELD_ITEM],
        "query": {
            "bool": {
                "filter": owner_filter(tenant, text_kind(kind), owner_id),
                "must": [{"match": {TEXT_FIELD: {"query": query}}}],
            }
        },
    }


class OpenSearchLexicalIndex:
    """LexicalIndex on the index of an OpenSearch Serverless collection the vector adapter also uses."""

    def __init__(self, endpoint: str, index_name: str, region: str | None = None, client: Any = None):
        # The vector adapter is the transport: signed client, bulk with failure checks, id look-ups.
        self._index = OpenSearchVectorIndex(endpoint, index_name, region=region, client=client)
        self.index_name = index_name

    @classmethod
    def beside(cls, vectors: OpenSearchVectorIndex) -> OpenSearchLexicalIndex:
        """The keyword side in the same index as `vectors`, over the same (lazily built) client."""
        lexical = cls(vectors.endpoint, vectors.index_name, region=vectors.region)
        lexical._index = vectors
        return lexical

    def upsert(self, tenant: str, kind: str, owner_id: str, documents: Sequence[tuple[str, str]]) -> None:
        if not documents:
            return
        stored = text_kind(kind)
        created = to_millis(time.time())
        new_ids: set[str] = set()
        chunk_size = 100
        for start in range(0, len(documents), chunk_size):
            actions: list[dict[str, Any]] = []
            for item_id, text in documents[start : start + chunk_size]:
                actions += [
                    {"index": {"_index": self.index_name}},
                    {
                        FIELD_TENANT: tenant,
                        FIELD_KIND: stored,
                        OWNER_FIELD[stored]: owner_id,
                        FIELD_ITEM: item_id,
                        CREATED_AT_FIELD: created,
                        TEXT_FIELD: text,
                    },
                ]
            new_ids.update(self._index._bulk(actions))
        # As for vectors: the replaced documents go only once their successors are in.
        item_ids = list(dict.fromkeys(item_id for item_id, _ in documents))
        stale = [d for d in self._index._document_ids(tenant, stored, owner_id, item_ids) if d not in new_ids]
        self._index._bulk_delete(stale)

    def delete(self, tenant: str, kind: str, owner_id: str, item_ids: Sequence[str]) -> None:
        if item_ids:
            stored = text_kind(kind)
            self._index._bulk_delete(list(self._index._document_ids(tenant, stored, owner_id, list(item_ids))))

    def delete_owner(self, tenant: str, kind: str, owner_id: str) -> None:
        self._index._bulk_delete(list(self._index._document_ids(tenant, text_kind(kind), owner_id, None)))

    def search(self, tenant: str, kind: str, owner_id: str, query: str, k: int) -> list[tuple[str, float]]:
        if k <= 0 or not query.strip():
            return []
        body = match_query_body(tenant, kind, owner_id, query, k + min(k, DUPLICATE_MARGIN))
        response = self._index._call(lambda: self._index.client.search(index=self.index_name, body=body))
        hits: list[tuple[str, float]] = []
        seen: set[str] = set()
        for hit in response.get("hits", {}).get("hits", []):
            item_id = hit.get("_source", {}).get(FIELD_ITEM)
            score = hit.get("_score")
            if item_id is None or item_id in seen or not score or score <= 0:
                continue
            seen.add(item_id)
            hits.append((item_id, float(score)))
        return hits[:k]

    def close(self) -> None:
        pass
