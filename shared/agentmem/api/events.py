"""EventBridge events agentmem consumes, parsed with powertools' EventBridge model."""

from __future__ import annotations

from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import BaseModel, ConfigDict, Field

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
