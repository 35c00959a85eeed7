"""The vector index port: nearest neighbours, always filtered by tenant and owner first.

A vector may carry tags: short opaque labels (an item's namespace prefixes, as digests) that a query can
require, so a search scoped by them is filtered inside the index, before the k nearest are chosen, and
never misses a match that lies beyond some first page of the owner's neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

VectorKind = Literal["lesson", "fact", "turn", "item"]
# The most neighbours one search returns (OpenSearch's default result window).
MAX_K = 10_000


@dataclass(frozen=True)
class VectorItem:
    """One vector with the fields searches filter on. No text: that stays in the record store."""

    tenant: str
    kind: VectorKind
    owner_id: str  # the agent (lessons) or the user (facts, turns)
    item_id: str
    vector: np.ndarray
    created_at: float
    tags: tuple[str, ...] = ()  # what a query's `tags` are matched against; at most 16 of 32 characters each


@dataclass(frozen=True)
class VectorQuery:
    """A k-NN search inside one tenant, one kind and one owner, optionally by age and by tags."""

    tenant: str
    kind: VectorKind
    owner_id: str
    vector: np.ndarray
    k: int
    created_after: float | None = None
    tags: tuple[str, ...] = ()  # only vectors carrying every one of these


@dataclass(frozen=True)
class VectorHit:
    item_id: str
    similarity: float  # cosine similarity in [-1, 1]


class VectorIndex(Protocol):
    """Exact (local) or approximate (OpenSearch Serverless) cosine search.

    Raises `BackendUnavailable("vectors", ...)` when the index cannot be reached.
    """

    def upsert(self, items: Sequence[VectorItem]) -> None: ...

    def delete(self, tenant: str, kind: VectorKind, owner_id: str, item_ids: Sequence[str]) -> None: ...

    def delete_owner(self, tenant: str, kind: VectorKind, owner_id: str) -> None:
        """Remove every vector of one owner (erasing a user)."""

    def search(self, query: VectorQuery) -> list[VectorHit]:
        """The `k` most similar items matching the query's filters, most similar first.

        Any `k` up to `MAX_K` is honoured (an adapter whose service answers fewer per call pages), so
        fewer than `k` hits means there are no more matches.
        """
