"""agentmem's configuration: one pydantic-settings model, read once, validated at first read.

Every key can be set as `AGENTMEM_<KEY>` in the environment or in `agentmem.toml`
in the data folder; the environment wins. A broken configuration raises one
`ConfigError` that names every invalid key at once.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from agentmem.domain.ids import ID_PATTERN_TEXT, is_valid_id
from agentmem.tenant_schema import TenantSchema

DEFAULT_DATA_DIR = Path(".agentmem")
LOCAL_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Measured defaults per embedding model: see docs/eligibility-threshold.md (scripts/measure_threshold.py).
DEFAULT_ELIGIBILITY_THRESHOLDS: dict[str, float] = {
    LOCAL_EMBEDDING_MODEL: 0.35,
}
# Titan Text Embeddings v2 could not be measured here (no Bedrock access): until a tenant measures
# it with the same script, the MiniLM value stands in; set eligibilityThreshold in the tenant settings.
FALLBACK_ELIGIBILITY_THRESHOLD = 0.35


class ConfigError(ValueError):
    """The configuration is invalid; `problems` lists every invalid key."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        lines = "\n".join(f"  - {key}: {message}" for key, message in problems)
        super().__init__(f"invalid agentmem configuration ({len(problems)} problem(s)):\n{lines}")


class Settings(TenantSchema, BaseSettings):
    """All of agentmem's settings: the tenant's keys (`TenantSchema`) and how this process reaches its backend.

    Field names are the contract's keys in snake case.
    """

    model_config = SettingsConfigDict(
        env_prefix="AGENTMEM_",
        env_nested_delimiter="__",
        # A misspelt key in agentmem.toml is an error, not a silently ignored line.
        extra="forbid",
        populate_by_name=True,
    )

    # Which adapters serve the ports: the embedded ones, or AWS services.
    backend: Literal["local", "aws"] = "local"
    tenant: str = "local"
    data_dir: Path = DEFAULT_DATA_DIR

    # AWS: the SSM parameter holding the tenant's run-time settings (RUNTIME_KEYS as JSON), and how
    # long a value read from it is trusted before it is read again.
    settings_parameter: str | None = None
    settings_max_age_seconds: int = Field(60, ge=0)

    # Local server.
    api_token: str | None = None
    embedding_cache_size: int = Field(4096, ge=0)
    # How many of one embedding call's forward passes run at once (the indexer's batches). Unset: the machine's
    # cores, at most 2; 1 saves ~20 MiB resident after indexing, and indexes at half the speed (docs/speed.md).
    embedding_parallel_passes: int | None = Field(None, ge=1)

    # AWS adapters (set by the CDK stack on every function).
    table_name: str | None = None
    # Users' wrapped data keys: a table of their own, without point-in-time recovery (erase survives backups).
    key_table_name: str | None = None
    event_bus_name: str | None = None
    kms_key_arn: str | None = None
    hmac_key_arn: str | None = None
    # Where the AWS backend keeps vectors: an OpenSearch Serverless index, or an S3 Vectors bucket.
    vector_store: Literal["opensearch", "s3vectors"] = "opensearch"
    opensearch_endpoint: str | None = None
    vector_index: str = "agentmem-memories"
    vector_bucket: str | None = None
    llm_model_id: str | None = None
    openai_base_url: str | None = None
    openai_model: str | None = None

    @field_validator("tenant")
    @classmethod
    def _check_tenant(cls, tenant: str) -> str:
        if not is_valid_id(tenant):
            raise ValueError(f"invalid tenant {tenant!r}: {ID_PATTERN_TEXT}")
        return tenant

    @model_validator(mode="after")
    def _check_backend(self) -> Settings:
        if self.backend == "aws":
            needed = ["table_name", "key_table_name", "event_bus_name", "kms_key_arn"]
            if self.vector_store == "s3vectors":
                needed.append("vector_bucket")
            missing = [k for k in needed if not getattr(self, k)]
            if missing:
                raise ValueError(f"backend 'aws' needs {', '.join('AGENTMEM_' + m.upper() for m in missing)}")
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        data_dir = Path(os.environ.get("AGENTMEM_DATA_DIR", str(DEFAULT_DATA_DIR)))
        toml = TomlConfigSettingsSource(settings_cls, toml_file=data_dir / "agentmem.toml")
        # Earlier sources win: explicit arguments, then the environment, then the file.
        return (init_settings, env_settings, _CamelCaseToml(toml))

    @property
    def enabled_agent_set(self) -> frozenset[str]:
        return frozenset(self.enabled_agents)

    @property
    def active_embedding_model(self) -> str:
        return LOCAL_EMBEDDING_MODEL if self.backend == "local" else self.embedding_model_id

    @property
    def effective_eligibility_threshold(self) -> float:
        """The configured threshold, or the measured default of the embedding model in use."""
        if self.eligibility_threshold is not None:
            return self.eligibility_threshold
        return DEFAULT_ELIGIBILITY_THRESHOLDS.get(self.active_embedding_model, FALLBACK_ELIGIBILITY_THRESHOLD)


class _CamelCaseToml(PydanticBaseSettingsSource):
    """Accepts the contract's camelCase keys (`enabledAgents`) in agentmem.toml as well as snake_case."""

    def __init__(self, inner: PydanticBaseSettingsSource):
        super().__init__(inner.settings_cls)
        self._inner = inner

    def get_field_value(
        self, field: Any, field_name: str
    ) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return {_snake(key): value for key, value in self._inner().items()}


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def load_settings(**overrides: Any) -> Settings:
    """Read and validate the configuration; raise ConfigError naming every invalid key."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = [
            (".".join(str(p) for p in err["loc"]) or "config",
             "unknown key (a typo? see the table in docs/configuration.md)"
             if err["type"] == "extra_forbidden" else err["msg"])
            for err in exc.errors()
        ]
        raise ConfigError(problems) from None


# The contract's keys a tenant may change while running (`agentmem config set`), in camelCase.
RUNTIME_KEYS: tuple[str, ...] = (
    "enabledAgents", "topK", "maxMemoryAgeDays", "digestMaxChars", "eligibilityThreshold", "importance",
    "profileTokenBudget", "retentionDays",
)


def runtime_values(settings: Settings) -> dict[str, Any]:
    """The run-time keys of `settings`, camelCase, as the settings parameter and `config get` show them."""
    values = settings.model_dump(mode="json", include={_snake(k) for k in RUNTIME_KEYS})
    return {key: values[_snake(key)] for key in RUNTIME_KEYS}


def with_runtime(base: Settings, values: Any) -> Settings:
    """`base` with the run-time `values` (camelCase) applied, validated by the same rules as every setting.

    Raises ConfigError naming every problem: a key that is not a run-time key, or a bad value.
    """
    if not isinstance(values, dict):
        raise ConfigError([("settings", f"must be a JSON object of {', '.join(RUNTIME_KEYS)}")])
    unknown = sorted(set(values) - set(RUNTIME_KEYS))
    if unknown:
        raise ConfigError([(key, f"not a run-time setting; known: {', '.join(RUNTIME_KEYS)}") for key in unknown])
    mistyped = [(key, f"must be {_JSON_TYPES[key][1]}") for key, value in values.items()
                if not _JSON_TYPES[key][0](value)]
    if mistyped:
        # JSON as it is written: pydantic would read `true` as 1 and "3" as 3.
        raise ConfigError(mistyped)
    merged = {**base.model_dump(), **{_snake(key): value for key, value in values.items()}}
    try:
        # model_validate applies no settings source: only `merged` counts, checked by Settings' rules.
        return Settings.model_validate(merged)
    except ValidationError as exc:
        problems = [
            (_camel(".".join(str(p) for p in err["loc"])) or "settings", err["msg"].removeprefix("Value error, "))
            for err in exc.errors()
        ]
        raise ConfigError(problems) from None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_JSON_TYPES: dict[str, tuple[Any, str]] = {
    "enabledAgents": (lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v), "a list of agent ids"),
    "eligibilityThreshold": (lambda v: v is None or _is_number(v), "a number or null"),
    "importance": (
        lambda v: isinstance(v, dict) and all(_is_number(x) for x in v.values()),
        'an object of numbers, e.g. {"important": 1.5, "unimportant": 0.3}',
    ),
    **{key: ((lambda v: isinstance(v, int) and not isinstance(v, bool)), "a whole number")
       for key in ("topK", "maxMemoryAgeDays", "digestMaxChars", "profileTokenBudget", "retentionDays")},
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_lock = threading.Lock()
_cached: Settings | None = None


def get_settings() -> Settings:
    """The process's settings, read and validated once (first call)."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = load_settings()
        return _cached


def reset_settings() -> None:
    """Forget the cached settings (tests, and the local server after it changes the environment)."""
    global _cached
    with _lock:
        _cached = None
