"""Settings that change while the service runs: the base settings with the tenant's stored run-time keys.

Every request asks `current()`. The store (the SSM parameter in AWS) is read
through its own short cache; a value is validated by the same rules as every
setting (`agentmem.config.with_runtime`). A value that does not validate, or a
store that cannot be read, never takes the service down: the problem is logged
(keys and reasons, never values) and the last good settings stay in force.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from agentmem.config import ConfigError, Settings, with_runtime
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.settings import SettingsStore

log = logging.getLogger(__name__)


class FixedSettings:
    """Settings that stay as they were at start: a backend with no run-time store (locally, or no parameter)."""

    def __init__(self, base: Settings):
        self.base = base

    def current(self) -> Settings:
        return self.base


class RuntimeSettings:
    """The settings in force: `base` (environment, deploy-time values) overlaid with `store`'s."""

    def __init__(self, base: Settings, store: SettingsStore):
        self.base = base
        self.store = store
        self._good = base
        self._raw: Any = None
        self._lock = threading.Lock()

    def current(self) -> Settings:
        with self._lock:
            try:
                raw = self.store.read()
            except BackendUnavailable as exc:
                log.warning("run-time settings unreadable; the last good ones stay in force",
                            extra={"location": self.store.location, "error": exc.message})
                return self._good
            if raw == self._raw:
                return self._good
            try:
                self._good = with_runtime(self.base, raw)
            except ConfigError as exc:
                log.error("run-time settings rejected; the last good ones stay in force",
                          extra={"location": self.store.location,
                                 "problems": [f"{key}: {message}" for key, message in exc.problems]})
            self._raw = raw
            return self._good
