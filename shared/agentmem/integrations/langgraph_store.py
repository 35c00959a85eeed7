"""agentmem as LangGraph's long-term memory store (the `langgraph` extra): `AgentMemStore(client)`.

A LangGraph `BaseStore` whose items live in agentmem, per user or per agent. Which owner a namespace
belongs to (docs/integrations.md has the table):

- `("users", user_id, *rest)` is the user's namespace `rest`, `("agents", agent_id, *rest)` the agent's;
- with `user_at=i`, a namespace whose label `i` is a user id belongs to that user, kept whole:
  `AgentMemStore(client, user_at=1)` files LangGraph's `("memories", user_id)` under the user;
- with `agent=id`, every other namespace belongs to that agent, kept whole (`("docs",)`, `("test",)`);
- anything else raises `InvalidNamespaceError` (agentmem keys every item to a user or an agent).

A user's values are masked like turns (their personal data replaced by the user's tokens) and erased
with the user (`DELETE /v1/users/{id}`). `put` embeds the value's text (or each text the `index` paths
name, an item scoring by its best) with agentmem's embedder; `search(query=...)` ranks by similarity
through agentmem's vector index, scoped to the prefix and filtered (LangGraph's operators) inside it.
A search or `list_namespaces` reads one owner: the prefix must name it (a prefix that stops before
`user_at` reads the `agent`'s namespaces; agentmem never searches across users).
TTLs are supported (`put(..., ttl=minutes)`, `AgentMemStore(client, ttl=TTLConfig(...))`): agentmem stores
the expiry and never reads an expired item; `refresh_ttl` (default `refresh_on_read`, true) restarts it on
`get` and `search`. `omit_expired` is always in effect, and the stores delete expired items themselves
(DynamoDB's TTL; SQLite on write), so `sweep_interval_minutes` is not needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from agentmem.client import MemoryClient, StoredItem

OwnerKind = Literal["users", "agents"]
Owner = tuple[OwnerKind, str]
OWNER_KINDS = ("users", "agents")


class AgentMemStore(BaseStore):
    """LangGraph's `BaseStore` over agentmem's HTTP API: `graph.compile(store=AgentMemStore(client))`.

    `user_at`: the position of the user id in namespaces that do not start with "users"/"agents";
    `agent`: the agent owning the namespaces that name no owner (see the module docstring);
    `index`: LangGraph's index config; its `fields` are what a put without `index=` embeds (default: all
    the value's text). `dims` and `embed` are not used: agentmem embeds with its own embedder, server-side.
    """

    supports_ttl = True

    def __init__(
        self, client: MemoryClient, *, ttl: TTLConfig | None = None, user_at: int | None = None,
        agent: str | None = None, index: Mapping[str, Any] | None = None,
    ) -> None:
        if user_at is not None and user_at < 0:
            raise ValueError("user_at is a position in the namespace: 0 or more")
        self.client = client
        self.ttl_config = ttl
        self.owners = NamespaceOwners(user_at, agent)
        self.index_config = dict(index) if index is not None else None  # as LangGraph's stores keep it
        fields = list((index or {}).get("fields") or ["$"])
        self.default_index: bool | list[str] = True if fields == ["$"] else fields

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # The client is synchronous: each batch runs on a worker thread so the event loop goes on.
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            place = self.owners.place(op.namespace)
            found = self.client.get_item(place.owner, place.stored, op.key, refresh_ttl=op.refresh_ttl)
            return None if found is None else Item(**_fields(place, found))
        if isinstance(op, PutOp):
            place = self.owners.place(op.namespace)
            if op.value is None:
                self.client.delete_item(place.owner, place.stored, op.key)
            else:
                index: bool | Sequence[str] = self.default_index if op.index is None else op.index
                self.client.put_item(place.owner, place.stored, op.key, op.value, index=index, ttl=op.ttl)
            return None
        if isinstance(op, SearchOp):
            place = self.owners.place(op.namespace_prefix, prefix=True)
            found_items = self.client.search_items(
                place.owner, place.stored, query=op.query, filter=op.filter, limit=op.limit, offset=op.offset,
                refresh_ttl=op.refresh_ttl,
            )
            return [SearchItem(**_fields(place, found), score=found.score) for found in found_items]
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation: {type(op).__name__}")

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefixes = [c.path for c in op.match_conditions or () if c.match_type == "prefix"]
        place = None
        for path in prefixes or [()]:
            try:
                place = self.owners.place(path, prefix=True)
                break
            except InvalidNamespaceError:
                continue
        if place is None:
            raise InvalidNamespaceError(
                "agentmem lists the namespaces of one owner: add a prefix ('users', id) or ('agents', id)"
                + (f", or one with the user id at position {self.owners.user_at}" if self.owners.user_at else "")
            )
        full = [place.namespace(ns) for ns in self.client.item_namespaces(place.owner)]
        kept = [ns for ns in full if all(_does_match(c, ns) for c in op.match_conditions or ())]
        kept = sorted({ns[: op.max_depth] for ns in kept} if op.max_depth is not None else set(kept))
        return kept[op.offset : op.offset + op.limit]


@dataclass(frozen=True)
class Placement:
    """Where a LangGraph namespace lives in agentmem: an owner, and the labels stored below it."""

    owner: Owner
    stored: tuple[str, ...]
    owner_prefixed: bool  # ("users", id, *stored): the owner's two labels are not stored

    def namespace(self, stored: Sequence[str]) -> tuple[str, ...]:
        """The LangGraph namespace of labels stored below this owner."""
        return (*self.owner, *stored) if self.owner_prefixed else tuple(stored)


@dataclass(frozen=True)
class NamespaceOwners:
    """Which owner a namespace belongs to: the rules of the module docstring, in that order."""

    user_at: int | None = None
    agent: str | None = None

    def place(self, namespace: Sequence[str], *, prefix: bool = False) -> Placement:
        """The namespace's owner (a search's or a listing's `prefix` may stop before the user id: the agent's)."""
        namespace = tuple(namespace)
        if len(namespace) >= 2 and namespace[0] in OWNER_KINDS and namespace[1] != "*":
            kind: OwnerKind = "users" if namespace[0] == "users" else "agents"
            return Placement((kind, namespace[1]), namespace[2:], True)
        at = self.user_at
        if at is not None and len(namespace) > at and namespace[at] != "*":
            return Placement(("users", namespace[at]), namespace, False)
        if self.agent is not None:
            return Placement(("agents", self.agent), namespace, False)
        raise InvalidNamespaceError(
            f"agentmem namespaces start with ('users', user_id) or ('agents', agent_id), not {namespace}"
            " (AgentMemStore(user_at=..., agent=...) maps other shapes; see docs/integrations.md)"
        )


def split_namespace(namespace: tuple[str, ...]) -> tuple[Owner, tuple[str, ...]]:
    """`("users", "u-1", "memories")` -> `(("users", "u-1"), ("memories",))`; others are invalid here."""
    place = NamespaceOwners().place(namespace)
    return place.owner, place.stored


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path, strict=False) if condition.match_type == "prefix" else zip(
        reversed(namespace), reversed(path), strict=False
    )
    return all(p == "*" or n == p for n, p in pairs)


def _fields(place: Placement, found: StoredItem) -> dict[str, Any]:
    return {
        "namespace": place.namespace(found.namespace), "key": found.key, "value": found.value,
        "created_at": found.created_at, "updated_at": found.updated_at,
    }
