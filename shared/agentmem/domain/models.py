"""The records agentmem keeps about agents: runs, feedback and the lessons it becomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Rating = Literal["up", "down"]
MemoryStatus = Literal["pending", "indexed", "deleted"]
# Which runs a listing shows: "none" those awaiting a verdict, "up"/"down" those whose newest
# feedback has that rating, "any" every run.
VerdictFilter = Literal["none", "up", "down", "any"]


@dataclass
class Run:
    """One run of an agent: what it was given, what it answered, and which lessons it was shown."""

    tenant: str
    agent_id: str
    run_id: str
    input: str
    created_at: float
    output: str | None = None
    user_id: str | None = None
    thread_id: str | None = None
    injected_memory_ids: list[str] = field(default_factory=list)
    feedback_ids: list[str] = field(default_factory=list)
    # The rating of the newest feedback; None while the run awaits an editor's verdict.
    verdict: Rating | None = None
    # Input and output were masked with the run's subject before they were stored (every run recorded
    # since masking covered the agent side). False for older runs and imported ones, whose texts a
    # lesson's digest must mask again.
    masked: bool = False


@dataclass
class Feedback:
    """An editor's verdict on a run."""

    tenant: str
    agent_id: str
    run_id: str
    feedback_id: str
    rating: Rating
    comment: str | None
    created_at: float
    memory_id: str
    idempotency_key: str | None = None
    request_hash: str | None = None


@dataclass
class Memory:
    """A lesson: feedback on a run, digested so that similar future runs can find it."""

    tenant: str
    agent_id: str
    memory_id: str
    run_id: str
    feedback_id: str
    rating: Rating
    comment: str | None
    digest: str
    importance: float
    created_at: float
    status: MemoryStatus = "pending"
    injected_count: int = 0
    updated_at: float | None = None
    # The editor's words embedded (float32 bytes), written by the indexer with the digest's vector, so
    # near-duplicates are compared without a model call (service/lesson_groups.py). None until indexed,
    # and for lessons indexed before it was kept.
    comment_vector: bytes | None = field(default=None, repr=False)
    # Whose run the lesson was made from: the run's userId, or the agent's own subject for a run
    # without one (domain/pii.py `run_subject`). Decides who may see the run's excerpt; None for a
    # lesson stored before it was kept, and once the user is erased (the run text is gone then too).
    subject: str | None = None
    # The group of lessons teaching the same thing, given when the lesson is indexed (domain/lessons.py
    # `assign_group`); None until then, and for lessons indexed before groups were kept.
    group_id: str | None = None


@dataclass(frozen=True)
class ScoredLesson:
    """A lesson chosen for a run, with why it was chosen."""

    memory: Memory
    similarity: float
    score: float
