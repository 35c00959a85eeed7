"""Key-addressed items of a user or an agent: stored whole, masked under a user, found by meaning.

What LangGraph's `BaseStore` runs on (integrations/langgraph_store.py). Everything of an item that a
client writes is masked like turns before it is stored or embedded: the namespace's labels, the key,
the value's object keys and string leaves, and its integers that are a card or a phone number
(domain/personal_numbers.py), which become token strings. A user's get the user's tokens, an agent's
the tokens of the agent's own subject (`_agent:<id>`, as its runs without a user). Reads, deletes and
searches mask what names an item (namespace, key, prefix, filter, index fields, query) the same way:
masking is consistent (one value, one token of its subject), so the masked name finds the masked item,
and personal data reaches neither store, index nor embedder.

An indexed item is embedded into the vector index, kind "item": its string leaves as one text, or with
`index` paths (LangGraph's `a.b`, `a[*].b`, ...; domain/item_paths.py) one vector per text they name,
and a search scores an item by its best vector, as LangGraph does. Each vector is tagged with the
digests of its namespace's prefixes, so a search below a prefix is filtered inside the vector index; a
filter is applied to the items found, and the search reads further neighbours until the page is full or
none are left, so every match is found in rank order. Items under the prefix without a vector follow
the ranked ones (score None), as in LangGraph's in-memory store.

An item may have a TTL in minutes (LangGraph's `ttl`): it expires that long after it was written or,
when a read refreshes it (the default, LangGraph's `refresh_ttl`), after it was last read. Expired items
are never read; the stores delete them later (DynamoDB's TTL, SQLite on write), their vectors with
the owner or when the key is written again (a search skips a vector whose item is gone).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from agentmem.domain.errors import InvalidInput, NotFound
from agentmem.domain.item_filter import matches
from agentmem.domain.item_paths import texts_at_path
from agentmem.domain.personal_numbers import personal_number_type
from agentmem.domain.pii import AGENT_SUBJECT_PREFIX, TOKEN_PATTERN, agent_subject
from agentmem.ports.clock import now
from agentmem.ports.embedder import Embedder
from agentmem.ports.items import Item, ItemStore, OwnerKind, vector_owner
from agentmem.ports.vectors import MAX_K, VectorIndex, VectorItem, VectorQuery

# An item has at most this many vectors; further texts its `index` paths name join the last one.
MAX_ITEM_VECTORS = 32
LISTING_PAGE = 100


class ItemMasker(Protocol):
    """The PII vault's masking step (ConversationService): texts, and values whose type is known."""

    def mask_texts(self, subject: str, texts: Sequence[str]) -> list[str]: ...

    def tokens_for_values(self, subject: str, entity_type_by_value: dict[str, str]) -> dict[str, str]: ...


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
    # Required: an item service that could store a client's text unmasked cannot be built.
    masker: ItemMasker
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
        masking = self._masking(owner_kind, owner_id, [*namespace, key], [value], index)
        namespace, key = masking.labels(namespace), masking.text(key)
        value, index = masking.value(value), masking.index(index)
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
        namespace, key = self._masked_address(owner_kind, owner_id, namespace, key)
        now = self.clock()
        item = self.store.get(self.tenant, owner_kind, owner_id, namespace, key, now=now)
        if item is None:
            raise NotFound(f"no item {key!r} in that namespace")
        return self._refreshed([item], now)[0] if refresh_ttl else item

    def delete(self, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> bool:
        namespace, key = self._masked_address(owner_kind, owner_id, namespace, key)
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
        # The query is masked like the values: its personal data reaches no embedder, and becomes the
        # owner's token, as in the items that hold it; the filter's names and values likewise.
        masking = self._masking(owner_kind, owner_id, [*prefix, *([query] if query else [])], [filter or {}], True)
        prefix = masking.labels(prefix)
        query = masking.text(query) if query else query
        filter = masking.value(filter) if filter else filter
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
        # `search` masked the query like the values: its personal data reaches no embedder.
        vector = self.embedder.embed([query])[0]
        return self._ranked(owner_kind, owner_id, vector, prefix, filter, wanted, now, unindexed=True)[offset:wanted]

    def nearest(self, owner_kind: OwnerKind, owner_id: str, vector: np.ndarray, limit: int) -> list[ItemHit]:
        """The owner's indexed items most similar to `vector` (a query masked and embedded by the caller),
        best first; reading them does not restart their TTL."""
        return self._ranked(owner_kind, owner_id, vector, (), None, limit, self.clock(), unindexed=False)[:limit]

    def _ranked(
        self, owner_kind: OwnerKind, owner_id: str, vector: np.ndarray, prefix: tuple[str, ...],
        filter: dict[str, Any] | None, wanted: int, now: float, *, unindexed: bool,
    ) -> list[ItemHit]:
        """At least `wanted` hits under `prefix` matching `filter`, best first, while there are that many;
        with `unindexed`, the items without a vector after the ranked ones (score None)."""
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
        if unindexed and len(ranked) < wanted and exhausted:
            for item in self._listed(owner_kind, owner_id, prefix, filter, now):
                if (item.namespace, item.key) not in best:
                    ranked.append(ItemHit(item, None))
                    if len(ranked) >= wanted:
                        break
        return ranked

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

    def _masking(
        self, owner_kind: OwnerKind, owner_id: str, texts: Sequence[str], values: Sequence[Any],
        index: bool | Sequence[str],
    ) -> _Masking:
        """One vault round trip for every text of a request: `texts`, index field names, and each
        value's object keys, string leaves and personal numbers."""
        strings: dict[str, None] = dict.fromkeys(texts)
        numbers: dict[str, str] = {}
        for value in values:
            _collect(value, strings, numbers)
        if not isinstance(index, bool):
            strings.update(dict.fromkeys(index))
        subject = owner_id if owner_kind == "users" else agent_subject(owner_id)
        ordered = [text for text in strings if text]
        masked = dict(zip(ordered, self.masker.mask_texts(subject, ordered), strict=True)) if ordered else {}
        return _Masking(masked, self.masker.tokens_for_values(subject, numbers) if numbers else {})

    def _masked_address(
        self, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str
    ) -> tuple[tuple[str, ...], str]:
        masking = self._masking(owner_kind, owner_id, [*namespace, key], [], False)
        return masking.labels(namespace), masking.text(key)

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


@dataclass(frozen=True)
class _Masking:
    """The masked form of every text and personal number of one request."""

    texts: dict[str, str]
    numbers: dict[str, str]  # str(number) -> token

    def text(self, text: str) -> str:
        return self.texts.get(text, text)

    def labels(self, labels: Sequence[str]) -> tuple[str, ...]:
        return tuple(self.text(label) for label in labels)

    def index(self, index: bool | Sequence[str]) -> bool | Sequence[str]:
        return index if isinstance(index, bool) else tuple(self.text(name) for name in index)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self._field(k, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if personal_number_type(value) is not None:
            return self.numbers.get(str(value), value)
        return value

    def _field(self, key: str, value: Any) -> Any:
        """A field's value masked as read after its key; as read alone when the key itself was masked.

        An integer its key names as an identifier ({"pin": 4471}, {"account_number": 88112233}) becomes
        its token, a string, as a card or a phone number does alone; any other number stays a number.
        """
        if isinstance(value, str) and value:
            prefix = _key_words(key)
            masked = self.texts.get(_in_context(key, value), "")
            return masked[len(prefix) :] if masked.startswith(prefix) else self.text(value)
        if _may_be_named(value) and personal_number_type(value) is None:
            named = self.texts.get(_in_context(key, str(value)), "")
            token = TOKEN_PATTERN.fullmatch(named.removeprefix(_key_words(key)))
            if token is not None and token["type"] in _NAMED_NUMBER_TOKENS:
                return token.group()
        return self.value(value)


# The token types an integer field may become by its key: identifiers, never compared as numbers (an
# age or an amount stays a number, so a filter such as {"age": {"$gt": 30}} still works).
_NAMED_NUMBER_TOKENS = frozenset(
    {"BANK_ACCOUNT", "ROUTING", "PIN", "NATIONAL_ID", "SSN", "PASSPORT", "DRIVER_LICENSE", "PASSWORD", "PHONE",
     "CREDIT_CARD"}
)


def _may_be_named(value: Any) -> bool:
    """An integer of four digits or more: a PIN or an identifier could be it; a count or a flag cannot."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1000


def _key_words(key: str) -> str:
    """An object key as the words a detector reads before its value ("account_number" -> "account number: ")."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])|[_-]+", " ", key) + ": "


def _in_context(key: str, value: str) -> str:
    """A string field read after its key, so that a value named only by its key ({"password": "Zq9!..."},
    {"account_number": "88112233"}) is found by the rules that need a name before it."""
    return _key_words(key) + value


def _collect(value: Any, strings: dict[str, None], numbers: dict[str, str]) -> None:
    """Gather the object keys and string leaves of `value` into `strings`, its personal numbers into `numbers`."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings.setdefault(item, None)
        elif isinstance(item, dict):
            strings.update(dict.fromkeys(k for k in item if isinstance(k, str)))
            # Each string field also as read after its key (`_Masking._field`), the bare value as a fallback.
            strings.update(dict.fromkeys(_in_context(k, v) for k, v in item.items() if isinstance(v, str) and v))
            strings.update(dict.fromkeys(_in_context(k, str(v)) for k, v in item.items() if _may_be_named(v)))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            entity_type = personal_number_type(item)
            if entity_type is not None:
                numbers.setdefault(str(item), entity_type)


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

