"""The contract's answers as typed results (camelCase on the wire, snake_case in Python).

Every model ignores fields it does not know, so a newer server never breaks an older client.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Role = Literal["system", "user", "assistant"]
Rating = Literal["up", "down"]
VerdictFilter = Literal["none", "up", "down", "any"]
Importance = Literal["important", "unimportant", "neutral"] | float


class ApiModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class Message(ApiModel):
    role: Role
    content: str

    def as_dict(self) -> dict[str, str]:
        """The plain chat-completions form, `{"role", "content"}`."""
        return {"role": self.role, "content": self.content}


class Lesson(ApiModel):
    """A lesson retrieved for a run: what an editor's feedback on a similar run taught."""

    memory_id: str
    rating: Rating
    text: str
    similarity: float
    score: float
    created_at: datetime | None = None


ItemOwnerKind = Literal["users", "agents"]


class StoredItem(ApiModel):
    """A JSON value under a key in a user's or an agent's namespace; `score` when found by a query."""

    namespace: list[str]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    score: float | None = None


class Fact(ApiModel):
    """A fact about a user. In a retrieve it carries its `score`; listed, its history (validity, source turns)."""

    fact_id: str
    text: str
    score: float | None = None
    subject: str | None = None
    status: str | None = None
    thread_id: str | None = None
    source_seqs: list[int] = Field(default_factory=list)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    created_at: datetime | None = None


class RecalledTurn(ApiModel):
    """One of the user's past turns found relevant to a retrieve's input (`score`: higher is better)."""

    thread_id: str
    seq: int
    role: str
    content: str
    score: float
    created_at: datetime | None = None


class RetrieveResult(ApiModel):
    """The memory for the run about to be made; `messages` go in front of the agent's own prompt."""

    run_id: str
    memory: Literal["enabled", "disabled"]
    lessons: list[Lesson] = Field(default_factory=list)
    profile: str | None = None
    facts: list[Fact] = Field(default_factory=list)
    recalled: list[RecalledTurn] = Field(default_factory=list)
    history: list[Message] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    tokens: int = 0
    degraded: list[str] = Field(default_factory=list)

    @property
    def chat_messages(self) -> list[dict[str, str]]:
        """`messages` as plain dicts, ready for any chat-completions API."""
        return [m.as_dict() for m in self.messages]

    @property
    def system_prompt(self) -> str:
        """The system messages joined, for APIs that take the system prompt apart (Bedrock Converse)."""
        return "\n\n".join(m.content for m in self.messages if m.role == "system")


class RunFeedback(ApiModel):
    feedback_id: str
    memory_id: str | None = None
    rating: Rating
    comment: str | None = None
    # The status of the lesson this feedback became: "pending" until indexed (then retrievable).
    lesson_status: str | None = None
    created_at: datetime | None = None


class Run(ApiModel):
    run_id: str
    agent_id: str
    input: str
    output: str | None = None
    user_id: str | None = None
    thread_id: str | None = None
    injected_memory_ids: list[str] = Field(default_factory=list)
    feedback: list[RunFeedback] = Field(default_factory=list)
    verdict: Rating | None = None
    created_at: datetime | None = None


class FeedbackReceipt(ApiModel):
    feedback_id: str
    memory_id: str | None = None
    status: str
    # Not part of the answer: the key this client sent, so a caller can resend the same verdict safely.
    idempotency_key: str | None = Field(None, exclude=True)


class Memory(ApiModel):
    """A lesson as the Memory Learning Wall shows it."""

    memory_id: str
    agent_id: str
    run_id: str | None = None
    feedback_id: str | None = None
    rating: Rating
    comment: str | None = None
    digest: str | None = None
    importance: float = 1.0
    status: str | None = None
    injected_count: int | None = None
    created_at: datetime | None = None


class RunSummary(ApiModel):
    """A run as the runs listing (the review queue) shows it: input and output cut to snippets."""

    run_id: str
    input: str
    input_truncated: bool = False
    output: str | None = None
    output_truncated: bool = False
    user_id: str | None = None
    injected_memory_ids: list[str] = Field(default_factory=list)
    feedback: list[RunFeedback] = Field(default_factory=list)
    # The newest feedback's rating; None while the run awaits a verdict.
    verdict: Rating | None = None
    created_at: datetime | None = None


class RunPage(ApiModel):
    items: list[RunSummary]
    next_cursor: str | None = None


class MemoryPage(ApiModel):
    items: list[Memory]
    next_cursor: str | None = None


class Turn(ApiModel):
    """A stored turn: its content masked (personal data replaced by tokens)."""

    role: str
    content: str
    seq: int | None = None
    tokens: int | None = None
    thread_id: str | None = None
    created_at: datetime | None = None


class TurnPage(ApiModel):
    items: list[Turn] = Field(validation_alias=AliasChoices("items", "turns"))
    next_cursor: str | None = None


class Profile(ApiModel):
    """A user's profile document; `version` 0 means none yet. Pass `version` as `if_match` to edit it."""

    user_id: str | None = None
    markdown: str | None = None
    version: int
    updated_at: datetime | None = None
    turn_count: int | None = None
    source: str | None = None  # consolidation, user or restore
    restored_from: int | None = None


class ProfileVersion(Profile):
    """One version in a profile's history."""


class UserSummary(ApiModel):
    """A user of the tenant (listed from their first turn until erased)."""

    user_id: str
    created_at: datetime | None = None


class UserPage(ApiModel):
    items: list[UserSummary]
    next_cursor: str | None = None


class ThreadSummary(ApiModel):
    """A user's thread: how many turns it holds and when one was last appended."""

    thread_id: str
    turn_count: int
    last_activity_at: datetime | None = None


class ThreadPage(ApiModel):
    items: list[ThreadSummary]
    next_cursor: str | None = None


SearchKind = Literal["facts", "turns", "items"]


class UserSearchResult(ApiModel):
    """What a search of a user's memory found, best first within each kind (masked); no run was recorded."""

    facts: list[Fact] = Field(default_factory=list)
    turns: list[RecalledTurn] = Field(default_factory=list)
    items: list[StoredItem] = Field(default_factory=list)
    degraded: list[str] = Field(default_factory=list)


class Health(ApiModel):
    status: str
    backend: str | None = None
    version: str | None = None


def items_of(body: Any, *names: str) -> list[Any]:
    """The list in an answer that is either a bare list or an object holding it under `items` or one of `names`."""
    if isinstance(body, list):
        return body
    if isinstance(body, dict):
        for name in ("items", *names):
            if isinstance(body.get(name), list):
                return list(body[name])
    raise ValueError("the answer holds no list")
