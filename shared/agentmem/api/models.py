"""Request bodies, validated by pydantic at the edge (field names camelCase, as the contract says)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from agentmem.domain.ids import ID_REGEX
from agentmem.domain.models import VerdictFilter

MAX_INPUT_CHARS = 32_000
MAX_OUTPUT_CHARS = 100_000
MAX_COMMENT_CHARS = 4_000

Identifier = Annotated[str, StringConstraints(pattern=ID_REGEX, min_length=1, max_length=128)]


def _a_json_number(value: object) -> object:
    # JSON's own numbers only: `true` and `"2000"` are not numbers (pydantic's lax mode would take both),
    # while 2000.0 is the integer 2000 as JSON Schema has it (strict mode would refuse it).
    if isinstance(value, bool | str):
        raise ValueError("must be a JSON number, not a string or a boolean")
    return value


Integer = Annotated[int, BeforeValidator(_a_json_number)]
Number = Annotated[float, BeforeValidator(_a_json_number)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RetrieveRequest(_Body):
    input: str = Field(max_length=MAX_INPUT_CHARS, description="What the agent is about to work on.")
    user_id: Identifier | None = Field(None, alias="userId")
    thread_id: Identifier | None = Field(None, alias="threadId")
    # A boolean or a string is not a number (`topK: true`, `tokenBudget: "2000"` are 400s).
    token_budget: Integer = Field(2000, ge=100, le=32_000, alias="tokenBudget")
    top_k: Integer | None = Field(None, ge=1, le=10, alias="topK")
    recall_k: Integer = Field(
        5, ge=0, le=50, alias="recallK",
        description="At most this many of the user's past turns in `recalled` (0: none); needs userId.",
    )


class RunCreateRequest(_Body):
    input: str = Field(max_length=MAX_INPUT_CHARS)
    output: str = Field(max_length=MAX_OUTPUT_CHARS)
    user_id: Identifier | None = Field(None, alias="userId")


class RunOutputRequest(_Body):
    output: str = Field(max_length=MAX_OUTPUT_CHARS)


class FeedbackRequest(_Body):
    rating: Literal["up", "down"]
    comment: str | None = Field(None, max_length=MAX_COMMENT_CHARS)


class MemoryPatchRequest(_Body):
    importance: Literal["important", "unimportant", "neutral"] | Annotated[Number, Field(ge=0.0, le=2.0)] = (
        Field(description="important (x1.5), unimportant (x0.3), neutral (x1.0), or a multiplier in [0, 2].")
    )


class RunsListQuery(_Body):
    """The query of `GET /v1/agents/{agentId}/runs` (the route declares the same constraints, tested)."""

    limit: Integer = Field(20, ge=1, le=100, description="Page size (1-100, default 20).")
    cursor: str | None = Field(
        None, max_length=2048, description="`nextCursor` of the previous page (of the same `feedback` filter)."
    )
    feedback: VerdictFilter = Field(
        "any",
        description="none: runs awaiting a verdict; up / down: runs whose newest feedback has that rating; "
        "any (default): every run.",
    )
