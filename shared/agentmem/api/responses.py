"""Answer bodies the OpenAPI document describes in full (pydantic models used for the schema only)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Answer(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class LessonGroupField(_Answer):
    group_id: str = Field(
        alias="groupId",
        description="The group's oldest lesson's memoryId: every member of a group carries the same one, on "
        "every page and in `retrieve`'s `lessons[].groupId`; it changes only when that lesson is deleted "
        "or a new lesson joins two groups.",
    )
    size: int = Field(ge=1, description="How many editors gave this lesson (1: the lesson stands alone).")
    conflicts_with: list[str] = Field(
        alias="conflictsWith",
        description="memoryIds of lessons with the opposite rating on near-identical text (a conflict).",
    )
    overruled_by: str | None = Field(
        alias="overruledBy",
        description="The newer lesson of a conflict that `retrieve` injects instead of this one; null when "
        "this lesson is not overruled.",
    )


class MemoryItem(_Answer):
    memory_id: str = Field(alias="memoryId")
    agent_id: str = Field(alias="agentId")
    run_id: str = Field(alias="runId")
    feedback_id: str = Field(alias="feedbackId")
    rating: Literal["up", "down"]
    comment: str | None
    digest: str
    importance: float
    status: Literal["pending", "indexed"]
    injected_count: int = Field(alias="injectedCount")
    created_at: str = Field(alias="createdAt")
    group: LessonGroupField | None = Field(
        description="The lesson's group of near-duplicates and its conflicts; null when the embedder was "
        "unavailable (the page then names `embedder` in `degraded`)."
    )


class MemoryPageAnswer(_Answer):
    items: list[MemoryItem]
    next_cursor: str | None = Field(alias="nextCursor")
    degraded: list[str] = Field(description="Parts that were unavailable: `embedder` (no groups on this page).")
