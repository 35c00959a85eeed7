"""Key-addressed items of a user or an agent: stored whole, masked under a user, found by meaning.

What LangGraph's `BaseStore` runs on (integrations/langgraph_store.py). Item values are masked like
turns (their string leaves) before they are stored or embedded: a user's with the user's tokens, an
agent's with the tokens of the agent's own subject (`_agent:<id>`, as its runs without a user), and a
search's query likewise before it is embedded, so personal data reaches neither store, index nor
embedder, and a query naming a value finds the items holding its token. An indexed item is embedded
into the vector index, kind "item": its string leaves as one text, or with `index` paths (LangGraph's
`a.b`, `a[*].b`, ...; domain/item_paths.py) one vector per text they name, and a search scores an item
by its best vector, as LangGraph does. Each vector is tagged with the digests of its namespace's
prefixes, so a search below a prefix is filtered inside the vector index; a filter is applied to the
items found, and the search reads further neighbours until the page is full or none are left, so
every match is found in rank order. Items under the prefix without a vector follow the ranked ones
(score None), as in LangGraph's in-memory store.

An item may have a TTL in minutes (LangGraph's `ttl`): it expires that long after it was written or,
when a read refreshes it (the default, LangGraph's `refresh_ttl`), after it was last read. Expired items
are never read; the stores delete them later (DynamoDB's TTL, SQLite on write), their vectors with
the owner or when the key is written again (a search skips a vector whose item is gone).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentmem.domain.errors import InvalidInput, NotFound
from agentmem.domain.item_filter import matches
from agentmem.domain.item_paths import texts_at_path
from agentmem.domain.pii import AGENT_SUBJECT_PREFIX, agent_subject
from agentmem.ports.clock import now
from agentmem.ports.embedder import Embedder
from agentmem.ports.items import Item, ItemStore, OwnerKind, vector_owner
from agentmem.ports.vectors import MAX_K, VectorIndex, VectorItem, VectorQuery

# An item has at most this many vectors; further texts its `index` paths name join the last one.
MAX_ITEM_VECTORS = 32
LISTING_PAGE = 100


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
        owner = vector_owner(owner_kind, owner_id)
        texts = _index_texts(value, index)
        if texts:
            tags = scope_tags(item.namespace)
            self.vectors.upsert([
                VectorItem(self.tenant, "item", owner, _vector_id(item.namespace, key, n), vector, item.created_at,
                           tags)
                for n, vector in enumerate(self.embedder.embed(texts))
            ])
        # The vectors of fields the value no longer has (or of an earlier, whole-value embedding).
        self.vectors.delete(self.tenant, "item", owner, _vector_ids_from(item.namespace, key, len(texts)))
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
        self.vectors.delete(self.tenant, "item", owner, _vector_ids_from(tuple(namespace), key, 0))
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
        wanted = offset + limit
        if not query:
            hits: list[ItemHit] = []
            for item in self._listed(owner_kind, owner_id, prefix, filter, now):
                hits.append(ItemHit(item, None))
                if len(hits) >= wanted:
                    break
            return hits[offset:wanted]
        # The query is masked like the values: its personal data reaches no embedder, and becomes the
        # owner's token, as in the items that hold it.
        vector = self.embedder.embed([self._mask(owner_kind, owner_id, query)])[0]
        owner = vector_owner(owner_kind, owner_id)
        tags = scope_tags(prefix)[-1:]
        known: dict[tuple[tuple[str, ...], str], Item | None] = {}
        k = min(max(2 * wanted, 20), MAX_K)
        while True:
            found = self.vectors.search(VectorQuery(self.tenant, "item", owner, vector, k, tags=tags))
            best: dict[tuple[tuple[str, ...], str], float] = {}
            for hit in found:  # most similar first: an item's first vector is its best
                best.setdefault(_parse_vector_id(hit.item_id), hit.similarity)
            unknown = [ident for ident in best if ident not in known]
            known.update(dict.fromkeys(unknown))
            for fetched in self.store.get_many(self.tenant, owner_kind, owner_id, unknown, now=now):
                known[(fetched.namespace, fetched.key)] = fetched
            ranked: list[ItemHit] = []
            for ident, similarity in best.items():
                candidate = known[ident]
                # The prefix again: a tag is a digest, and an item may have moved since its vector was written.
                if (
                    candidate is not None and candidate.namespace[: len(prefix)] == prefix
                    and matches(candidate.value, filter)
                ):
                    ranked.append(ItemHit(candidate, similarity))
            exhausted = len(found) < k
            if len(ranked) >= wanted or exhausted or k >= MAX_K:
                break
            k = min(4 * k, MAX_K)
        if len(ranked) < wanted and exhausted:
            for item in self._listed(owner_kind, owner_id, prefix, filter, now):
                if (item.namespace, item.key) not in best:
                    ranked.append(ItemHit(item, None))
                    if len(ranked) >= wanted:
                        break
        return ranked[offset:wanted]

    def _listed(
        self, owner_kind: OwnerKind, owner_id: str, prefix: tuple[str, ...], filter: dict[str, Any] | None,
        now: float,
    ) -> Iterator[Item]:
        """The owner's items under `prefix` that match `filter`, most recently updated first, read in pages."""
        start = 0
        while True:
            page = self.store.list_items(
                self.tenant, owner_kind, owner_id, prefix, limit=LISTING_PAGE, offset=start, now=now
            )
            yield from (item for item in page if matches(item.value, filter))
            if len(page) < LISTING_PAGE:
                return
            start += LISTING_PAGE

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


def scope_tags(namespace: Sequence[str]) -> tuple[str, ...]:
    """The vector tags of an item in `namespace`: a digest of each of its non-empty prefixes, shortest first.

    A search below a prefix requires that prefix's digest (the last of its own tags).
    """
    return tuple(
        "ns:" + hashlib.sha256(json.dumps(list(namespace[:depth])).encode()).hexdigest()[:24]
        for depth in range(1, len(namespace) + 1)
    )


def _vector_id(namespace: tuple[str, ...], key: str, n: int) -> str:
    return json.dumps([list(namespace), key, n], separators=(",", ":"))


def _vector_ids_from(namespace: tuple[str, ...], key: str, first: int) -> list[str]:
    """An item's possible vector ids from the `first`-th on, and the one of a whole-value embedding before them."""
    legacy = json.dumps([list(namespace), key], separators=(",", ":"))
    return [legacy, *(_vector_id(namespace, key, n) for n in range(first, MAX_ITEM_VECTORS))]


def _parse_vector_id(vector_id: str) -> tuple[tuple[str, ...], str]:
    namespace, key = json.loads(vector_id)[:2]
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


def _index_texts(value: dict[str, Any], index: bool | Sequence[str]) -> list[str]:
    """The texts an item is embedded as: its string leaves together, or each text its `index` paths name."""
    if index is False:
        return []
    if index is True:
        whole = "\n".join(_strings(value)).strip()
        return [whole] if whole else []
    if isinstance(index, str):
        raise InvalidInput("index must be true, false or a list of field paths")
    texts = [text for path in index for text in texts_at_path(value, path) if text.strip()]
    if len(texts) > MAX_ITEM_VECTORS:
        texts[MAX_ITEM_VECTORS - 1 :] = ["\n".join(texts[MAX_ITEM_VECTORS - 1 :])]
    return texts

