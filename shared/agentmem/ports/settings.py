"""The settings store port: where a tenant's run-time settings are kept (the contract's keys, camelCase).

In AWS one SSM parameter per tenant holds them as JSON (read by every function
with a short cache, written by `agentmem config set --stack`); on one machine
they are keys of `agentmem.toml` in the data folder. Values are validated by
`agentmem.config.with_runtime` before they are written and when they are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class SettingsStore(Protocol):
    """A tenant's run-time settings."""

    @property
    def location(self) -> str:
        """Where they are kept, for messages (a parameter name, a file path)."""

    def read(self) -> dict[str, Any]:
        """The stored settings ({} when none are stored). Raises BackendUnavailable when unreadable."""

    def write(self, values: Mapping[str, Any]) -> None:
        """Store `values` in place of the run-time settings stored before (other content is kept)."""
