"""EventBridge events agentmem consumes, parsed with powertools' EventBridge model."""

from __future__ import annotations

from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentmem.domain.ids import ID_REGEX


class FeedbackSubmittedDetail(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    tenant: str = Field(pattern=ID_REGEX)
    agent_id: str = Field(alias="agentId", pattern=ID_REGEX)
    memory_id: str = Field(alias="memoryId", pattern=ID_REGEX)
    run_id: str = Field(alias="runId", pattern=ID_REGEX)
    feedback_id: str = Field(alias="feedbackId", pattern=ID_REGEX)


class FeedbackSubmittedEvent(EventBridgeModel):
    detail: FeedbackSubmittedDetail  # type: ignore[assignment]


class TurnsAppendedDetail(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    tenant: str = Field(pattern=ID_REGEX)
    user_id: str = Field(alias="userId", pattern=ID_REGEX, max_length=128)
    thread_id: str = Field(alias="threadId", pattern=ID_REGEX, max_length=128)
    from_seq: int = Field(alias="fromSeq", ge=1)
    to_seq: int = Field(alias="toSeq", ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> TurnsAppendedDetail:
        if self.to_seq < self.from_seq:
            raise ValueError("toSeq is before fromSeq")
        return self


class TurnsAppendedEvent(EventBridgeModel):
    detail: TurnsAppendedDetail  # type: ignore[assignment]
