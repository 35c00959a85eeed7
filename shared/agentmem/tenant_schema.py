"""The tenant settings schema, defined once: the contract's keys a tenant configures.

Two models read it: the runtime's `agentmem.config.Settings` (environment, agentmem.toml, the SSM
parameter) and the CDK app's `infra.settings.TenantSettings` (cdk.json), which inherit these
fields, their defaults, bounds and rules, and add only their own (backend wiring, infrastructure
knobs). Field names are the contract's keys in snake case; both models read them in camelCase too.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import NoDecode

from agentmem.domain.ids import ID_PATTERN_TEXT, is_valid_id

DEFAULT_EMBEDDING_MODEL_ID = "amazon.titan-embed-text-v2:0"
# The widest vector any of the indexes takes (OpenSearch's knn_vector).
MAX_EMBEDDING_DIMENSION = 16_000


class ImportanceWeights(BaseModel):
    """Multipliers editors apply to a lesson's similarity with the named importance values."""

    model_config = {"extra": "forbid"}

    important: float = Field(1.5, gt=0)
    unimportant: float = Field(0.3, gt=0)


def _split_csv(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")] if value.strip() else []
    return value


class TenantSchema(BaseModel):
    """The keys of one tenant's memory: which agents, how many lessons, how long things are kept, which
    embedding model. Run-time keys (`agentmem.config.RUNTIME_KEYS`) may change while serving."""

    # A comma-separated string (an environment variable) or a list.
    enabled_agents: Annotated[list[str], NoDecode] = Field(default_factory=list)
    top_k: int = Field(5, ge=1, le=10)
    max_memory_age_days: int = Field(90, ge=1)
    digest_max_chars: int = Field(500, ge=1)
    eligibility_threshold: float | None = Field(None, ge=0.0, le=1.0)
    importance: ImportanceWeights = Field(default_factory=ImportanceWeights)
    profile_token_budget: int = Field(2000, ge=500, le=8000)
    # How long runs and feedback are kept (DynamoDB TTL in AWS, the sweep locally); not shorter than
    # maxMemoryAgeDays, so a lesson never outlives the run and feedback it was learnt from.
    retention_days: int = Field(90, ge=1)
    embedding_model_id: str = Field(DEFAULT_EMBEDDING_MODEL_ID, min_length=1)
    embedding_dimension: int = Field(1024, ge=1, le=MAX_EMBEDDING_DIMENSION)

    @field_validator("enabled_agents", mode="before")
    @classmethod
    def _parse_agents(cls, value: Any) -> Any:
        return _split_csv(value)

    @field_validator("enabled_agents")
    @classmethod
    def _check_agents(cls, agents: list[str]) -> list[str]:
        problems = []
        if any(not a for a in agents):
            problems.append("empty agent id")
        bad = [a for a in agents if a and not is_valid_id(a)]
        if bad:
            problems.append(f"invalid agent id(s) {bad!r}: {ID_PATTERN_TEXT}")
        duplicates = sorted({a for a in agents if agents.count(a) > 1})
        if duplicates:
            problems.append(f"duplicate agent id(s) {duplicates!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return agents

    @model_validator(mode="after")
    def _check_retention(self) -> Self:
        if self.retention_days < self.max_memory_age_days:
            raise ValueError(
                f"retentionDays ({self.retention_days}) is shorter than maxMemoryAgeDays "
                f"({self.max_memory_age_days}): lessons would outlive the runs they were learnt from"
            )
        return self
