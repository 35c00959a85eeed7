"""agentmem as LangGraph's long-term memory store (the `langgraph` extra): `AgentMemStore(client)`.

A LangGraph `BaseStore` whose items live in agentmem, per user or per agent:

- a namespace `("users", user_id, *rest)` is the user's namespace `rest`, `("agents", agent_id, *rest)`
  the agent's; a user's values are masked like turns (their personal data replaced by the user's
  tokens) and erased with the user (`DELETE /v1/users/{id}`);
- `put` embeds the value's text (or the `index` fields) with agentmem's embedder, and `search(query=...)`
  ranks by similarity through agentmem's vector index; `filter` takes LangGraph's operators;
- `list_namespaces` answers for one owner: a prefix condition must name it, e.g. `("users", "u-1")`.

Other namespaces raise `InvalidNamespaceError` (agentmem keys every item to a user or an agent).
TTLs are supported (`put(..., ttl=minutes)`, `AgentMemStore(client, ttl=TTLConfig(...))`): agentmem stores
the expiry and never reads an expired item; `refresh_ttl` (default `refresh_on_read`, true) restarts it on
`get` and `search`. `omit_expired` is always in effect, and the stores delete expired items themselves
(DynamoDB's TTL; SQLite on write), so `sweep_interval_minutes` is not needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
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
    """LangGraph's `BaseStore` over agentmem's HTTP API: `graph.compile(store=AgentMemStore(client))`."""

    supports_ttl = True

    def __init__(self, client: MemoryClient, *, ttl: TTLConfig | None = None) -> None:
        self.client = client
        self.ttl_config = ttl

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # The client is synchronous: each batch runs on a worker thread so the event loop goes on.
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            owner, rest = split_namespace(op.namespace)
            found = self.client.get_item(owner, rest, op.key, refresh_ttl=op.refresh_ttl)
            return None if found is None else _item(owner, found)
        if isinstance(op, PutOp):
            owner, rest = split_namespace(op.namespace)
            if op.value is None:
                self.client.delete_item(owner, rest, op.key)
            else:
                index: bool | Sequence[str] = True if op.index is None else op.index
                self.client.put_item(owner, rest, op.key, op.value, index=index, ttl=op.ttl)
            return None
        if isinstance(op, SearchOp):
            owner, rest = split_namespace(op.namespace_prefix)
            found_items = self.client.search_items(
                owner, rest, query=op.query, filter=op.filter, limit=op.limit, offset=op.offset,
                refresh_ttl=op.refresh_ttl,
            )
            return [_search_item(owner, found) for found in found_items]
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation: {type(op).__name__}")

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefixes = [c.path for c in op.match_conditions or () if c.match_type == "prefix"]
        owner = next((_owner_of(p) for p in prefixes if _owner_of(p) is not None), None)
        if owner is None:
            raise InvalidNamespaceError(
                "agentmem lists the namespaces of one owner: add a prefix ('users', id) or ('agents', id)"
            )
        full = [(owner[0], owner[1], *ns) for ns in self.client.item_namespaces(owner)]
        kept = [ns for ns in full if all(_does_match(c, ns) for c in op.match_conditions or ())]
        kept = sorted({ns[: op.max_depth] for ns in kept} if op.max_depth is not None else set(kept))
        return kept[op.offset : op.offset + op.limit]


def split_namespace(namespace: tuple[str, ...]) -> tuple[Owner, tuple[str, ...]]:
    """`("users", "u-1", "memories")` -> `(("users", "u-1"), ("memories",))`; others are invalid here."""
    owner = _owner_of(namespace)
    if owner is None:
        raise InvalidNamespaceError(
            f"agentmem namespaces start with ('users', user_id) or ('agents', agent_id), not {namespace}"
        )
    return owner, tuple(namespace[2:])


def _owner_of(namespace: tuple[str, ...]) -> Owner | None:
    if len(namespace) < 2 or namespace[0] not in OWNER_KINDS or namespace[1] == "*":
        return None
    kind: OwnerKind = "users" if namespace[0] == "users" else "agents"
    return kind, namespace[1]


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path, strict=False) if condition.match_type == "prefix" else zip(
        reversed(namespace), reversed(path), strict=False
    )
    return all(p == "*" or n == p for n, p in pairs)


def _fields(owner: Owner, found: StoredItem) -> dict[str, Any]:
    return {
        "namespace": (owner[0], owner[1], *found.namespace), "key": found.key, "value": found.value,
        "created_at": found.created_at, "updated_at": found.updated_at,
    }


def _item(owner: Owner, found: StoredItem) -> Item:
    return Item(**_fields(owner, found))


def _search_item(owner: Owner, found: StoredItem) -> SearchItem:
    return SearchItem(**_fields(owner, found), score=found.score)
