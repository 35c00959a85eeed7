"""The item store port: JSON values under a key, in a namespace owned by one user or one agent.

This is the key-addressed memory LangGraph's `BaseStore` needs. An owner is ("users", id) or
("agents", id); below it a namespace is a tuple of labels, e.g. ("memories",). Vectors of indexed
items live in the VectorIndex (kind "item", owner = `vector_owner(owner_kind, owner_id)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

OwnerKind = Literal["users", "agents"]
OWNER_KINDS: tuple[OwnerKind, ...] = ("users", "agents")


@dataclass(frozen=True)
class Item:
    tenant: str
    owner_kind: OwnerKind
    owner_id: str
    namespace: tuple[str, ...]  # below the owner
    key: str
    value: dict[str, Any]
    created_at: float
    updated_at: float


def vector_owner(owner_kind: OwnerKind, owner_id: str) -> str:
    """The VectorIndex owner of an owner's items ("/" is never part of an id, so the two kinds never meet)."""
    return f"{owner_kind}/{owner_id}"


class ItemStore(Protocol):
    """Items per tenant and owner; (namespace, key) is unique within an owner."""

    def put(self, item: Item) -> Item:
        """Insert or replace; a replaced item keeps its `created_at`. Returns the stored item."""

    def get(self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> Item | None:
        ...

    def get_many(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, ids: Sequence[tuple[tuple[str, ...], str]]
    ) -> list[Item]:
        """The items that exist among (namespace, key) pairs, in no particular order."""

    def delete(self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> bool:
        """False when there was none."""

    def list_items(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, prefix: Sequence[str], *, limit: int, offset: int
    ) -> list[Item]:
        """Items whose namespace starts with `prefix`, most recently updated first."""

    def namespaces(self, tenant: str, owner_kind: OwnerKind, owner_id: str) -> list[tuple[str, ...]]:
        """The distinct namespaces holding at least one item, sorted."""

    def delete_owner(self, tenant: str, owner_kind: OwnerKind, owner_id: str) -> int:
        """Remove every item of the owner; returns how many."""
