"""The record store port: runs, feedback and lessons (memories), per tenant and agent.

Shaped for DynamoDB as much as for SQLite: every call names the tenant, listing
is by opaque cursor, and writes that two callers could race are conditional.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from agentmem.domain.errors import InvalidInput
from agentmem.domain.models import Feedback, Memory, MemoryStatus, Run, VerdictFilter

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing; `next_cursor` is None on the last page."""

    items: list[T]
    next_cursor: str | None


class RecordStore(Protocol):
    """Durable records of runs, feedback and memories."""

    def put_run(self, run: Run) -> None:
        """Store a new run. Raises Conflict if the run id exists."""

    def get_run(self, tenant: str, agent_id: str, run_id: str) -> Run | None: ...

    def set_run_output(self, tenant: str, agent_id: str, run_id: str, output: str) -> None:
        """Raises NotFound for an unknown run."""

    def delete_runs_of_user(self, tenant: str, user_id: str) -> int:
        """Delete every run made for `user_id` (of every agent); returns how many. Idempotent.

        Their feedback and lessons stay: they are the agents', and hold only tokens of the user,
        dead once the user's data key is destroyed.
        """

    def list_runs(
        self,
        tenant: str,
        agent_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        verdict: VerdictFilter = "any",
    ) -> Page[Run]:
        """Runs of an agent, newest first (ties by run id), filtered by verdict.

        A cursor belongs to its filter: InvalidInput for one this store did not return for it.
        """

    def add_feedback(self, feedback: Feedback, memory: Memory) -> tuple[Feedback, bool]:
        """Store feedback and the memory it creates, atomically, once per feedback id.

        Returns (stored feedback, created). When the feedback id exists already
        (an idempotent retry) nothing is written and the stored one is returned.
        The run's verdict becomes the feedback's rating.
        """

    def get_memory(self, tenant: str, agent_id: str, memory_id: str) -> Memory | None: ...

    def get_memories(self, tenant: str, agent_id: str, memory_ids: Sequence[str]) -> list[Memory]:
        """The memories that exist among `memory_ids`, in no particular order."""

    def list_memories(
        self, tenant: str, agent_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[Memory]:
        """Memories of an agent, newest first, deleted ones left out. Raises InvalidInput for a bad cursor."""

    def list_agents_with_memories(self, tenant: str) -> list[str]:
        """Every agent that has at least one memory (for the wall and reindexing)."""

    def update_memory(
        self,
        tenant: str,
        agent_id: str,
        memory_id: str,
        *,
        importance: float | None = None,
        status: MemoryStatus | None = None,
        comment_vector: bytes | None = None,
        group_id: str | None = None,
    ) -> Memory:
        """Change a memory's importance and/or status, and store its comment's vector and group when given.

        Raises NotFound when it does not exist or is deleted: deletion is final,
        so an indexer that races a delete cannot bring the lesson back.
        """

    def record_injections(self, tenant: str, agent_id: str, memory_ids: Sequence[str]) -> None:
        """Count one more injection for each memory (best effort, for the wall)."""

    def list_memories_of_subject(self, tenant: str, subject: str) -> list[Memory]:
        """Every live lesson (of any agent) made from a run of `subject` (a userId): what erase walks."""

    def forget_run_text(self, tenant: str, agent_id: str, memory_id: str, digest: str) -> None:
        """Replace a lesson's digest by `digest` (its editor's words alone), forget its subject and
        mark it pending, so it is embedded again without the run's text. A deleted or missing lesson
        is left as it is. No earlier image of the old digest stays in the store's files."""

    def list_memories_by_status(self, tenant: str, status: MemoryStatus, *, limit: int) -> list[Memory]:
        """Memories in a status across agents (to find lessons still waiting to be indexed)."""

    def list_memories_created_before(
        self, tenant: str, agent_id: str, before: float, *, limit: int
    ) -> list[Memory]:
        """An agent's live (not deleted) memories created before `before`, oldest first: the expired ones.

        DynamoDB keeps an expired lesson's item a grace period past its age limit, so the sweep finds it.
        """

    def purge_runs_created_before(self, tenant: str, before: float) -> int:
        """Remove runs and feedback created before `before`; returns how many runs went.

        SQLite deletes them here. DynamoDB writes `ttl` (created + retentionDays) on every run and
        feedback item and its TTL deletes them, so this removes nothing there and returns 0.
        """


def encode_run_cursor(verdict: VerdictFilter, created_at: float, run_id: str) -> str:
    """An opaque cursor: the `verdict` listing goes on with runs older than (created_at, run_id)."""
    raw = json.dumps({"v": verdict, "at": created_at, "run": run_id}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_run_cursor(cursor: str, verdict: VerdictFilter) -> tuple[float, str]:
    """The position a cursor of the `verdict` listing stands for; InvalidInput for anything else."""
    try:
        plain = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        at, run_id = plain["at"], plain["run"]
        if (
            plain["v"] == verdict
            and isinstance(at, int | float)
            and not isinstance(at, bool)
            and isinstance(run_id, str)
        ):
            return float(at), run_id
    except (ValueError, TypeError, KeyError, binascii.Error):
        pass
    raise InvalidInput(
        "invalid cursor", [{"field": "cursor", "message": "not a cursor this API returned for this feedback filter"}]
    )
