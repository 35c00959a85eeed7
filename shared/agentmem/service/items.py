"""Key-addressed items of a user or an agent: stored whole, masked under a user, found by meaning.

What LangGraph's `BaseStore` runs on (integrations/langgraph_store.py). Item values are masked like
turns (their string leaves) before they are stored or embedded: a user's with the user's tokens, an
agent's with the tokens of the agent's own subject (`_agent:<id>`, as its runs without a user), and a
search's query likewise before it is embedded, so personal data reaches neither store, index nor
embedder, and a query naming a value finds the items holding its token. An indexed item's text (its
string leaves, or the top-level fields named at put) is embedded into the vector index, kind "item".

An item may have a TTL in minutes (LangGraph's `ttl`): it expires that long after it was written or,
when a read refreshes it (the default, LangGraph's `refresh_ttl`), after it was last read. Expired items
are never read; the stores delete them later (DynamoDB's TTL, SQLite on write), their vectors with
the owner or when the key is written again (a search skips a vector whose item is gone).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from agentmem.domain.errors import InvalidInput, NotFound
from agentmem.domain.item_filter import matches
from agentmem.domain.pii import AGENT_SUBJECT_PREFIX, agent_subject
from agentmem.ports.clock import now
from agentmem.ports.embedder import Embedder
from agentmem.ports.items import Item, ItemStore, OwnerKind, vector_owner
from agentmem.ports.vectors import VectorIndex, VectorItem, VectorQuery

# How many nearest vectors a semantic search reads before the namespace prefix and filter narrow them
# (S3 Vectors' top-k limit).
SEARCH_CANDIDATES = 100


@dataclass(frozen=True)
class ItemHit:
    item: Item
    score: float | None  # cosine similarity for a query, None for a plain listing


@dataclass
class ItemService:
    tenant: str
    store: ItemStore
    vectors: VectorIndex
    embedder: Embedder
    masker: Callable[[str, str], str] | None = None
    clock: Callable[[], float] = field(default=now)

    def put(
        self,
        owner_kind: OwnerKind,
        owner_id: str,
        namespace: Sequence[str],
        key: str,
        value: dict[str, Any],
        index: bool | Sequence[str] = True,
        ttl_minutes: float | None = None,
    ) -> Item:
        value = _map_strings(value, lambda text: self._mask(owner_kind, owner_id, text))
        at = self.clock()
        expires = None if ttl_minutes is None else at + ttl_minutes * 60
        item = self.store.put(
            Item(self.tenant, owner_kind, owner_id, tuple(namespace), key, value, at, at, expires, ttl_minutes)
        )
        vector_id = _vector_id(item.namespace, key)
        text = _index_text(value, index)
        if text:
            vector = self.embedder.embed([text])[0]
            owner = vector_owner(owner_kind, owner_id)
            self.vectors.upsert([VectorItem(self.tenant, "item", owner, vector_id, vector, item.created_at)])
        else:
            self.vectors.delete(self.tenant, "item", vector_owner(owner_kind, owner_id), [vector_id])
        return item

    def get(
        self, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str, *, refresh_ttl: bool = True
    ) -> Item:
        now = self.clock()
        item = self.store.get(self.tenant, owner_kind, owner_id, namespace, key, now=now)
        if item is None:
            raise NotFound(f"no item {key!r} in that namespace")
        return self._refreshed([item], now)[0] if refresh_ttl else item

    def delete(self, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> bool:
        owner = vector_owner(owner_kind, owner_id)
        self.vectors.delete(self.tenant, "item", owner, [_vector_id(tuple(namespace), key)])
        return self.store.delete(self.tenant, owner_kind, owner_id, namespace, key)

    def search(
        self,
        owner_kind: OwnerKind,
        owner_id: str,
        prefix: Sequence[str],
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool = True,
    ) -> list[ItemHit]:
        """Items under `prefix` whose top-level fields equal `filter`'s; by similarity to `query` if given."""
        hits = self._search(owner_kind, owner_id, tuple(prefix), query, filter, limit, offset)
        if refresh_ttl:
            fresh = self._refreshed([hit.item for hit in hits], self.clock())
            hits = [ItemHit(item, hit.score) for item, hit in zip(fresh, hits, strict=True)]
        return hits

    def _search(
        self, owner_kind: OwnerKind, owner_id: str, prefix: tuple[str, ...], query: str | None,
        filter: dict[str, Any] | None, limit: int, offset: int,
    ) -> list[ItemHit]:
        now = self.clock()
        if not query:
            # Filtered listings read the owner's items in pages until enough match.
            hits: list[ItemHit] = []
            start = 0
            while len(hits) < offset + limit:
                page = self.store.list_items(
                    self.tenant, owner_kind, owner_id, prefix, limit=100, offset=start, now=now
                )
                hits += [ItemHit(item, None) for item in page if matches(item.value, filter)]
                if len(page) < 100:
                    break
                start += 100
            return hits[offset : offset + limit]
        # The query is masked like the values: its personal data reaches no embedder, and becomes the
        # owner's token, as in the items that hold it.
        vector = self.embedder.embed([self._mask(owner_kind, owner_id, query)])[0]
        return self._nearest(owner_kind, owner_id, vector, prefix, filter, now)[offset : offset + limit]

    def nearest(self, owner_kind: OwnerKind, owner_id: str, vector: np.ndarray, limit: int) -> list[ItemHit]:
        """The owner's indexed items most similar to `vector` (a query masked and embedded by the caller),
        best first; reading them does not restart their TTL."""
        return self._nearest(owner_kind, owner_id, vector, (), None, self.clock())[:limit]

    def _nearest(
        self, owner_kind: OwnerKind, owner_id: str, vector: np.ndarray, prefix: tuple[str, ...],
        filter: dict[str, Any] | None, now: float,
    ) -> list[ItemHit]:
        found = self.vectors.search(VectorQuery(
            tenant=self.tenant, kind="item", owner_id=vector_owner(owner_kind, owner_id), vector=vector,
            k=SEARCH_CANDIDATES,
        ))
        ids = [_parse_vector_id(hit.item_id) for hit in found]
        wanted = [(ns, key) for ns, key in ids if ns[: len(prefix)] == prefix]
        found_items = self.store.get_many(self.tenant, owner_kind, owner_id, wanted, now=now)
        items = {(i.namespace, i.key): i for i in found_items}
        scored = [
            ItemHit(items[ident], hit.similarity)
            for hit, ident in zip(found, ids, strict=True)
            if ident in items and matches(items[ident].value, filter)
        ]
        return scored

    def namespaces(self, owner_kind: OwnerKind, owner_id: str) -> list[tuple[str, ...]]:
        return self.store.namespaces(self.tenant, owner_kind, owner_id, now=self.clock())

    def erase_user(self, tenant: str, subject: str) -> None:
        """A subject's items and their vectors (a `ConversationService` user eraser).

        The subject is a user, or an agent's own subject (`_agent:<id>`, erased by
        `DELETE /v1/agents/{agentId}/personal-data`): then the agent's items go.
        """
        owner_kind: OwnerKind = "agents" if subject.startswith(AGENT_SUBJECT_PREFIX) else "users"
        owner_id = subject.removeprefix(AGENT_SUBJECT_PREFIX) if owner_kind == "agents" else subject
        self.vectors.delete_owner(tenant, "item", vector_owner(owner_kind, owner_id))
        self.store.delete_owner(tenant, owner_kind, owner_id)

    def _mask(self, owner_kind: OwnerKind, owner_id: str, text: str) -> str:
        if self.masker is None:
            return text
        return self.masker(owner_id if owner_kind == "users" else agent_subject(owner_id), text)

    def _refreshed(self, items: list[Item], now: float) -> list[Item]:
        """`items` with their TTL restarted at `now` (those that have one), as stored."""
        fresh = []
        for item in items:
            if item.ttl_minutes is not None:
                expires = now + item.ttl_minutes * 60
                self.store.set_expiry(self.tenant, item.owner_kind, item.owner_id, item.namespace, item.key, expires)
                item = replace(item, expires_at=expires)
            fresh.append(item)
        return fresh


def _vector_id(namespace: tuple[str, ...], key: str) -> str:
    return json.dumps([list(namespace), key], separators=(",", ":"))


def _parse_vector_id(vector_id: str) -> tuple[tuple[str, ...], str]:
    namespace, key = json.loads(vector_id)
    return tuple(namespace), key


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, change) for v in value]
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _index_text(value: dict[str, Any], index: bool | Sequence[str]) -> str:
    if index is False:
        return ""
    if index is True:
        return "\n".join(_strings(value)).strip()
    if isinstance(index, str):
        raise InvalidInput("index must be true, false or a list of field names")
    return "\n".join(s for name in index for s in _strings(value.get(name))).strip()

