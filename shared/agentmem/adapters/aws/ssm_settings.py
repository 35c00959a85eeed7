"""Run-time settings in one SSM Parameter Store parameter per tenant, read through powertools' Parameters.

The stack creates the parameter (`/agentmem/<tenant>/settings`, a String holding
JSON) from the tenant's cdk.json values; `agentmem config set --stack` writes
it. Every function reads it through powertools' SSM provider, which caches the
value for `max_age` seconds, so a change reaches every warm function within
that time and costs one GetParameter per function environment per period.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.utilities.parameters import SSMProvider
from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError, SetParameterError

from agentmem.domain.errors import BackendUnavailable

DEFAULT_MAX_AGE_SECONDS = 60


def settings_parameter_name(tenant: str) -> str:
    return f"/agentmem/{tenant}/settings"


class SsmSettingsParameter:
    """SettingsStore on an SSM String parameter holding a JSON object."""

    def __init__(self, name: str, client: Any = None, *, max_age: int = DEFAULT_MAX_AGE_SECONDS):
        self.name = name
        self.max_age = max_age
        self._provider = SSMProvider(boto3_client=client) if client is not None else SSMProvider()

    @property
    def location(self) -> str:
        return f"SSM parameter {self.name}"

    def read(self) -> dict[str, Any]:
        try:
            raw = self._provider.get(self.name, max_age=self.max_age)
        except GetParameterError as exc:
            cause = type(exc.__cause__ or exc).__name__
            raise BackendUnavailable("settings", f"cannot read {self.location}: {cause}") from exc
        try:
            values = json.loads(str(raw))
        except ValueError as exc:
            raise BackendUnavailable("settings", f"{self.location} is not JSON") from exc
        if not isinstance(values, dict):
            raise BackendUnavailable("settings", f"{self.location} is not a JSON object")
        return values

    def write(self, values: Mapping[str, Any]) -> None:
        try:
            self._provider.set(self.name, json.dumps(dict(values), sort_keys=True), overwrite=True)
        except SetParameterError as exc:
            raise BackendUnavailable("settings", f"cannot write {self.location}: {exc}") from exc
        # This process reads its own write at once; other functions within max_age.
        self._provider.clear_cache()
