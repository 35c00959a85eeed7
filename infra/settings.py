"""Typed, validated settings of the CDK app: one `TenantSettings` per tenant stack.

Where they come from (CDK context, normally `cdk.json`):

- `tenants`: the tenants to synthesise, e.g. `["acme", "globex"]`; `-c tenant=NAME`
  selects a single one instead.
- `tenantDefaults`: settings every tenant starts from.
- `tenantSettings`: `{name: {...}}`, each tenant's own values, on top of the defaults.
- `platform`: account-wide resources (`PlatformSettings`).

Keys are camelCase, as in the HTTP API's configuration. Every problem with every
tenant is reported at once in one `SettingsError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Any, Self

from agentmem.config import RUNTIME_KEYS, ConfigError, Settings, _snake, with_runtime
from agentmem.tenant_schema import TenantSchema
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from functions.catalog import FUNCTIONS

# A tenant name becomes part of resource names with tight limits (OpenSearch
# Serverless collection and policy names: 32 characters, lowercase).
TENANT_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9-]{1,20}[a-z0-9]$")
# Names the platform stack uses for its own resources.
RESERVED_TENANT_NAMES = frozenset({"shared", "platform"})
# An IAM user or role ARN; `${AWS::AccountId}` stands for the deploying account.
PRINCIPAL_ARN_PATTERN = re.compile(
    r"^arn:aws[a-z-]*:iam::(\d{12}|\$\{AWS::AccountId\}):(root|(user|role)/[\w+=,.@/-]{1,512})$"
)
# The values CloudWatch Logs accepts for a retention period.
LOG_RETENTION_DAYS = frozenset(
    {1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
)
TITAN_V2_DIMENSIONS = frozenset({256, 512, 1024})
# Cross-region inference profile ids start with a geography.
INFERENCE_PROFILE_PREFIXES = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")


class SettingsError(ValueError):
    """Every problem found in the app's settings, one per line."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("invalid agentmem settings:\n" + "\n".join(f"  - {p}" for p in self.problems))


class VectorCollectionMode(StrEnum):
    # The tenant's own collection, encrypted with the tenant's key (its own OCUs).
    DEDICATED = "dedicated"
    # One index in the platform's collection (OCUs shared across tenants).
    SHARED = "shared"
    # The tenant's own Amazon S3 Vectors bucket: pay per use, storage only at rest.
    S3VECTORS = "s3vectors"


class MonitoringLevel(StrEnum):
    # Every alarm (DLQ, each function's errors and throttles, API 5xx and latency) and a dashboard.
    FULL = "full"
    # The alarms that catch lost work only (DLQ depth, API 5xx, the event consumers' errors); no dashboard.
    MINIMAL = "minimal"


class RemovalMode(StrEnum):
    RETAIN = "retain"
    DESTROY = "destroy"


def _unique(values: tuple[str, ...]) -> tuple[str, ...]:
    duplicates = sorted({v for v in values if values.count(v) > 1})
    if duplicates:
        raise ValueError(f"duplicates: {', '.join(duplicates)}")
    return values


class _CamelModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, str_strip_whitespace=True
    )


class TenantSettings(TenantSchema, _CamelModel):
    """One tenant's stack: the application's configuration (`TenantSchema`, the one definition the
    functions read too) plus the infrastructure's knobs."""

    name: str
    allowed_principals: Annotated[tuple[str, ...], AfterValidator(_unique)] = Field(min_length=1)
    # The stack's model for consolidation (the runtime's default is none: the offline rules).
    llm_model_id: str = Field("amazon.nova-lite-v1:0", min_length=1)
    # Days the functions' and the API's CloudWatch logs are kept.
    log_retention_days: int = 30
    # One number for every function, or {functionName: number}; none = unreserved.
    reserved_concurrency: int | dict[str, int] | None = None
    vector_collection: VectorCollectionMode = VectorCollectionMode.S3VECTORS
    # Standby replicas in a second AZ for the dedicated collection (doubles its OCUs).
    vector_redundancy: bool = False
    removal_policy: RemovalMode = RemovalMode.RETAIN
    monitoring: MonitoringLevel = MonitoringLevel.FULL
    api_rate_limit: float = Field(50.0, gt=0)
    api_burst_limit: int = Field(100, ge=1)
    api_latency_alarm_ms: int = Field(5000, ge=100)
    event_archive_days: int = Field(14, ge=1)

    @field_validator("name")
    @classmethod
    def _tenant_name(cls, name: str) -> str:
        if not TENANT_NAME_PATTERN.fullmatch(name):
            raise ValueError(
                "3-22 characters: lowercase letters, digits and '-', starting with a letter, not ending with '-'"
            )
        if name in RESERVED_TENANT_NAMES:
            raise ValueError(f"{name!r} is reserved for the platform stack")
        return name

    @field_validator("allowed_principals")
    @classmethod
    def _principal_arns(cls, principals: tuple[str, ...]) -> tuple[str, ...]:
        bad = [p for p in principals if not PRINCIPAL_ARN_PATTERN.fullmatch(p)]
        if bad:
            raise ValueError(f"not IAM user/role/root ARNs: {', '.join(bad)}")
        return principals

    @field_validator("log_retention_days")
    @classmethod
    def _log_retention(cls, days: int) -> int:
        if days not in LOG_RETENTION_DAYS:
            raise ValueError(f"CloudWatch Logs accepts only {sorted(LOG_RETENTION_DAYS)}")
        return days

    @field_validator("reserved_concurrency")
    @classmethod
    def _concurrency(cls, value: int | dict[str, int] | None) -> int | dict[str, int] | None:
        if value is None:
            return None
        numbers = value.values() if isinstance(value, dict) else [value]
        if any(n < 1 for n in numbers):
            raise ValueError("must be >= 1 (leave a function out to keep it unreserved)")
        if isinstance(value, dict):
            known = {f.name for f in FUNCTIONS}
            unknown = sorted(set(value) - known)
            if unknown:
                raise ValueError(f"unknown functions {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return value

    @model_validator(mode="after")
    def _embedding_dimension_fits_model(self) -> Self:
        if self.embedding_model_id.startswith("amazon.titan-embed-text-v2") and (
            self.embedding_dimension not in TITAN_V2_DIMENSIONS
        ):
            raise ValueError(
                f"embeddingDimension {self.embedding_dimension} is not one Titan Text Embeddings V2 "
                f"produces ({', '.join(str(d) for d in sorted(TITAN_V2_DIMENSIONS))})"
            )
        return self

    @model_validator(mode="after")
    def _runtime_settings_valid(self) -> Self:
        # The functions validate the settings parameter with agentmem's own rules: so does the synth.
        try:
            with_runtime(Settings.model_validate({}), self.runtime_settings())
        except ConfigError as exc:
            raise ValueError("; ".join(f"{key}: {message}" for key, message in exc.problems)) from None
        return self

    def runtime_settings(self) -> dict[str, Any]:
        """The contract's run-time keys (camelCase), as the stack writes them to the settings parameter."""
        values = self.model_dump(mode="json", by_alias=True, include={_snake(key) for key in RUNTIME_KEYS})
        return {key: values[key] for key in RUNTIME_KEYS}

    def reserved_concurrency_for(self, function_name: str) -> int | None:
        """The reserved concurrency of one function, or None for unreserved."""
        if isinstance(self.reserved_concurrency, dict):
            return self.reserved_concurrency.get(function_name)
        return self.reserved_concurrency

    @property
    def stack_name(self) -> str:
        return f"AgentMem-{self.name}"

    @property
    def vector_index_name(self) -> str:
        return f"agentmem-{self.name}"

    @property
    def llm_is_inference_profile(self) -> bool:
        return self.llm_model_id.startswith(INFERENCE_PROFILE_PREFIXES)


class PlatformSettings(_CamelModel):
    """Account-and-region-wide resources, owned by the one platform stack."""

    # Create the collection `shared`-mode tenants put their index in. Explicit,
    # so that deploying one tenant can never remove another tenant's collection.
    shared_vector_collection: bool = False
    shared_vector_redundancy: bool = False
    # API Gateway's account-level CloudWatch role (needed for stage logging).
    # Turn off where something else in the account already manages it.
    api_gateway_cloud_watch_role: bool = True

    @property
    def stack_name(self) -> str:
        return "AgentMem-Platform"


class AppSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    platform: PlatformSettings
    tenants: tuple[TenantSettings, ...]


def _format_errors(prefix: str, error: ValidationError) -> list[str]:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "settings"
        message = item["msg"].removeprefix("Value error, ")
        problems.append(f"{prefix}{where}: {message}")
    return problems


def _as_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        # `-c tenants=a,b` arrives as a string.
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def load_settings(context: Mapping[str, Any]) -> AppSettings:
    """Build and validate the settings of every selected tenant from CDK context values."""
    problems: list[str] = []

    platform: PlatformSettings | None = None
    try:
        platform = PlatformSettings.model_validate(context.get("platform") or {})
    except ValidationError as error:
        problems.extend(_format_errors("platform.", error))

    selected = context.get("tenant")
    names = _as_list(selected) if selected is not None else _as_list(context.get("tenants"))
    if not names:
        problems.append("no tenant: set context `tenants` (a list) in cdk.json, or pass `-c tenant=NAME`")
        names = []
    duplicate_names = sorted({n for n in names if names.count(n) > 1})
    if duplicate_names:
        problems.append(f"tenants: listed twice: {', '.join(duplicate_names)}")

    defaults = context.get("tenantDefaults") or {}
    per_tenant = context.get("tenantSettings") or {}
    if not isinstance(defaults, dict):
        problems.append("tenantDefaults: must be an object")
        defaults = {}
    if not isinstance(per_tenant, dict):
        problems.append("tenantSettings: must be an object of {tenantName: {...}}")
        per_tenant = {}

    tenants: list[TenantSettings] = []
    for name in dict.fromkeys(names):
        own = per_tenant.get(name) or {}
        if not isinstance(own, dict):
            problems.append(f"tenantSettings.{name}: must be an object")
            continue
        if "name" in own:
            problems.append(f"tenantSettings.{name}.name: the tenant's name is its key; remove it")
            continue
        try:
            tenants.append(TenantSettings.model_validate({**defaults, **own, "name": name}))
        except ValidationError as error:
            problems.extend(_format_errors(f"tenant {name}: ", error))

    if platform is not None and not platform.shared_vector_collection:
        shared = [t.name for t in tenants if t.vector_collection is VectorCollectionMode.SHARED]
        if shared:
            problems.append(
                f"tenant(s) {', '.join(shared)} use vectorCollection 'shared' but "
                "platform.sharedVectorCollection is false"
            )

    if problems or platform is None:
        raise SettingsError(problems)
    return AppSettings(platform=platform, tenants=tuple(tenants))
