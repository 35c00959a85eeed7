"""The lexical index port: BM25 keyword search, grouped like the vector index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class LexicalIndex(Protocol):
    """A keyword index with the VectorIndex's grouping: every call names tenant, kind and owner.

    Local: `agentmem.adapters.local.bm25_index.LocalBm25Index`.
    """

    def upsert(self, tenant: str, kind: str, owner_id: str, documents: Sequence[tuple[str, str]]) -> None:
        """Add or replace `(item_id, text)` documents."""

    def delete(self, tenant: str, kind: str, owner_id: str, item_ids: Sequence[str]) -> None:
        """Remove these documents of one owner (unknown ids are ignored)."""

    def delete_owner(self, tenant: str, kind: str, owner_id: str) -> None: ...

    def search(self, tenant: str, kind: str, owner_id: str, query: str, k: int) -> Sequence[tuple[str, float]]:
        """Up to `k` `(item_id, score)` pairs, best first, only documents sharing a term with `query`."""
