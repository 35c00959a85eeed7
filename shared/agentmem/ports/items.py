"""The item store port: JSON values under a key, in a namespace owned by one user or one agent.

This is the key-addressed memory LangGraph's `BaseStore` needs. An owner is ("users", id) or
("agents", id); below it a namespace is a tuple of labels, e.g. ("memories",). Vectors of indexed
items live in the VectorIndex (kind "item", owner = `vector_owner(owner_kind, owner_id)`).

An item may expire (LangGraph's TTL): `expires_at` (epoch seconds) is honoured on every read, given the
reader's `now`: an expired item is neither got, listed, searched nor counted in the namespaces, before any
store removes it (DynamoDB's TTL on the table's `ttl` attribute, SQLite on the next write).
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
    expires_at: float | None = None  # epoch seconds; None: never
    ttl_minutes: float | None = None  # what a read that refreshes the TTL adds to its time

    def expired(self, now: float | None) -> bool:
        return now is not None and self.expires_at is not None and self.expires_at <= now


def vector_owner(owner_kind: OwnerKind, owner_id: str) -> str:
    """The VectorIndex owner of an owner's items ("/" is never part of an id, so the two kinds never meet)."""
    return f"{owner_kind}/{owner_id}"


class ItemStore(Protocol):
    """Items per tenant and owner; (namespace, key) is unique within an owner."""

    def put(self, item: Item) -> Item:
        """Insert or replace; a replaced item keeps its `created_at`. Returns the stored item."""

    def get(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str,
        *, now: float | None = None,
    ) -> Item | None:
        """The item, unless there is none or it expired at `now`."""

    def get_many(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, ids: Sequence[tuple[tuple[str, ...], str]],
        *, now: float | None = None,
    ) -> list[Item]:
        """The items that exist (unexpired at `now`) among (namespace, key) pairs, in no particular order."""

    def set_expiry(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str, expires_at: float
    ) -> None:
        """Move an existing item's expiry (a read refreshing its TTL); nothing for an item that is gone."""

    def delete(self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> bool:
        """False when there was none."""

    def list_items(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, prefix: Sequence[str], *, limit: int, offset: int,
        now: float | None = None,
    ) -> list[Item]:
        """Items (unexpired at `now`) whose namespace starts with `prefix`, most recently updated first."""

    def namespaces(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, *, now: float | None = None
    ) -> list[tuple[str, ...]]:
        """The distinct namespaces holding at least one item (unexpired at `now`), sorted."""

    def delete_owner(self, tenant: str, owner_kind: OwnerKind, owner_id: str) -> int:
        """Remove every item of the owner; returns how many."""
