"""Searching one user's memory by meaning: their facts, recalled turns and items, with no run recorded.

`retrieve` searches the same memory for an agent's run and records that run; this is the user's
(or an application's) own look-up: nothing is written but what masking the query needs. The query
is masked with the user's tokens before it reaches the embedder, so personal data it names never
leaves the vault and a query naming a value finds the texts holding its token. It is embedded once
for every kind. Each kind degrades on its own, named in `degraded`, as in `retrieve`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.log_ids import log_id
from agentmem.ports.embedder import Embedder
from agentmem.service.facts import FactService
from agentmem.service.items import ItemHit, ItemService
from agentmem.service.turn_recall import RecalledTurn, TurnRecallService

log = logging.getLogger(__name__)

SearchKind = Literal["facts", "turns", "items"]
SEARCH_KINDS: tuple[SearchKind, ...] = ("facts", "turns", "items")


@dataclass(frozen=True)
class UserSearchResult:
    """What a search found, best first within each kind (a kind not asked for is empty)."""

    facts: list[dict[str, Any]] = field(default_factory=list)
    turns: list[RecalledTurn] = field(default_factory=list)
    items: list[ItemHit] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)


@dataclass
class UserSearchService:
    """A user's facts, recalled turns and items found by meaning (masked query, one embedding)."""

    masker: Callable[[str, str], str]
    embedder: Embedder
    facts: FactService
    recall: TurnRecallService
    items: ItemService

    def search(
        self, user_id: str, query: str, limit: int, kinds: Sequence[SearchKind] = SEARCH_KINDS
    ) -> UserSearchResult:
        """At most `limit` hits of each kind in `kinds`; the query's personal data is masked first.

        A failure to mask is not degraded but raised (BackendUnavailable): an unmasked query never
        reaches an index. A backend down for one kind leaves that kind empty and named in `degraded`.
        """
        masked = self.masker(user_id, query)
        degraded: list[str] = []
        vector: np.ndarray | None
        try:
            vector = self.embedder.embed([masked])[0]
        except BackendUnavailable:
            vector = None
        result = UserSearchResult(degraded=degraded)
        if "facts" in kinds:
            result.facts.extend(self._part("facts", degraded, lambda: self._facts(user_id, vector, limit)))
        if "turns" in kinds:
            result.turns.extend(self._part("turns", degraded, lambda: self._turns(user_id, masked, vector, limit)))
        if "items" in kinds:
            result.items.extend(self._part("items", degraded, lambda: self._items(user_id, vector, limit)))
        if degraded:
            log.warning("user search degraded", extra={"userHash": log_id(user_id), "degraded": degraded})
        return result

    def _facts(self, user_id: str, vector: np.ndarray | None, limit: int) -> list[dict[str, Any]]:
        if vector is None:
            raise BackendUnavailable("facts", "no fact search without the embedder")
        return self.facts.facts_for(user_id, vector, limit)

    def _turns(self, user_id: str, masked: str, vector: np.ndarray | None, limit: int) -> list[RecalledTurn]:
        # Without a vector the keyword index still answers (when there is one).
        return self.recall.recall(user_id, masked, vector, limit)

    def _items(self, user_id: str, vector: np.ndarray | None, limit: int) -> list[ItemHit]:
        if vector is None:
            raise BackendUnavailable("items", "no item search without the embedder")
        return self.items.nearest("users", user_id, vector, limit)

    @staticmethod
    def _part(kind: str, degraded: list[str], call: Callable[[], list[Any]]) -> list[Any]:
        try:
            return call()
        except BackendUnavailable:
            degraded.append(kind)
            return []
