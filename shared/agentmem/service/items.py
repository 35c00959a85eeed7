"""Key-addressed items of a user or an agent: stored whole, masked under a user, found by meaning.

What LangGraph's `BaseStore` runs on (integrations/langgraph_store.py). A user's item values are
masked like turns (their string leaves, with the user's tokens) before they are stored or embedded;
an agent's are stored as given, like lessons. An indexed item's text (its string leaves, or the
top-level fields named at put) is embedded into the vector index, kind "item".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentmem.domain.errors import InvalidInput, NotFound
from agentmem.domain.item_filter import matches
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
    ) -> Item:
        if owner_kind == "users" and self.masker is not None:
            masker = self.masker
            value = _map_strings(value, lambda text: masker(owner_id, text))
        at = self.clock()
        item = self.store.put(Item(self.tenant, owner_kind, owner_id, tuple(namespace), key, value, at, at))
        vector_id = _vector_id(item.namespace, key)
        text = _index_text(value, index)
        if text:
            vector = self.embedder.embed([text])[0]
            owner = vector_owner(owner_kind, owner_id)
            self.vectors.upsert([VectorItem(self.tenant, "item", owner, vector_id, vector, item.created_at)])
        else:
            self.vectors.delete(self.tenant, "item", vector_owner(owner_kind, owner_id), [vector_id])
        return item

    def get(self, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> Item:
        item = self.store.get(self.tenant, owner_kind, owner_id, namespace, key)
        if item is None:
            raise NotFound(f"no item {key!r} in that namespace")
        return item

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
    ) -> list[ItemHit]:
        """Items under `prefix` whose top-level fields equal `filter`'s; by similarity to `query` if given."""
        prefix = tuple(prefix)
        if not query:
            # Filtered listings read the owner's items in pages until enough match.
            hits: list[ItemHit] = []
            start = 0
            while len(hits) < offset + limit:
                page = self.store.list_items(self.tenant, owner_kind, owner_id, prefix, limit=100, offset=start)
                hits += [ItemHit(item, None) for item in page if matches(item.value, filter)]
                if len(page) < 100:
                    break
                start += 100
            return hits[offset : offset + limit]
        vector = self.embedder.embed([query])[0]
        found = self.vectors.search(VectorQuery(
            tenant=self.tenant, kind="item", owner_id=vector_owner(owner_kind, owner_id), vector=vector,
            k=SEARCH_CANDIDATES,
        ))
        ids = [_parse_vector_id(hit.item_id) for hit in found]
        wanted = [(ns, key) for ns, key in ids if ns[: len(prefix)] == prefix]
        items = {(i.namespace, i.key): i for i in self.store.get_many(self.tenant, owner_kind, owner_id, wanted)}
        scored = [
            ItemHit(items[ident], hit.similarity)
            for hit, ident in zip(found, ids, strict=True)
            if ident in items and matches(items[ident].value, filter)
        ]
        return scored[offset : offset + limit]

    def namespaces(self, owner_kind: OwnerKind, owner_id: str) -> list[tuple[str, ...]]:
        return self.store.namespaces(self.tenant, owner_kind, owner_id)

    def erase_user(self, tenant: str, user_id: str) -> None:
        """A user's items and their vectors (a `ConversationService` user eraser)."""
        self.vectors.delete_owner(tenant, "item", vector_owner("users", user_id))
        self.store.delete_owner(tenant, "users", user_id)


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

