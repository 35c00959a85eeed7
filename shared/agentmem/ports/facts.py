"""The fact store port: a user's facts with their validity, superseded ones kept."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Protocol

from agentmem.domain.errors import InvalidInput
from agentmem.domain.facts import Fact
from agentmem.ports.records import Page


class FactStore(Protocol):
    """Facts per tenant and user. The vectors live in the VectorIndex (kind "fact", owner = user)."""

    def add(self, fact: Fact, supersedes: Sequence[str] = ()) -> bool:
        """Store a new active fact and mark the facts `supersedes` superseded by it, atomically.

        A superseded fact gets `status="superseded"`, `valid_to=fact.valid_from` and
        `superseded_by=fact.fact_id`; ids that are not active facts any more are left alone.
        Returns False, writing nothing, when `fact.fact_id` exists already (a retried event).
        """

    def get(self, tenant: str, user_id: str, fact_id: str) -> Fact | None: ...

    def get_many(self, tenant: str, user_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        """The facts that exist among `fact_ids`, in no particular order."""

    def list_facts(
        self,
        tenant: str,
        user_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        include_superseded: bool = False,
    ) -> Page[Fact]:
        """Facts newest first. Raises InvalidInput for a cursor this store did not return."""

    def subjects(self, tenant: str, user_id: str) -> list[str]:
        """The distinct subjects of the user's active facts."""

    def set_text(self, tenant: str, user_id: str, fact_id: str, text: str) -> Fact | None:
        """Replace a fact's text (everything else stays, superseded or not); the fact as now stored,
        or None, writing nothing, when there is no such fact."""

    def delete(self, tenant: str, user_id: str, fact_id: str) -> bool:
        """Remove a fact for good; False when there was none."""

    def delete_user(self, tenant: str, user_id: str) -> int:
        """Remove every fact of the user; returns how many."""


def encode_fact_cursor(created_at: float, fact_id: str) -> str:
    """An opaque cursor: the listing goes on with facts older than (created_at, fact_id)."""
    raw = json.dumps([created_at, fact_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_fact_cursor(cursor: str) -> tuple[float, str]:
    """The position a cursor from `encode_fact_cursor` stands for; InvalidInput for anything else."""
    try:
        created_at, fact_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if isinstance(fact_id, str) and isinstance(created_at, int | float):
            return float(created_at), fact_id
    except (ValueError, TypeError, binascii.Error):
        pass
    raise InvalidInput("invalid cursor", [{"field": "cursor", "message": "not a cursor this API returned"}])
