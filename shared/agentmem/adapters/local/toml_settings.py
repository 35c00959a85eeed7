"""Run-time settings in `agentmem.toml` of the data folder, edited in place with tomlkit.

tomlkit keeps what a person wrote around the keys (comments, order, other keys
such as `apiToken`), so `agentmem config set` changes one key and nothing else.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit

from agentmem.config import RUNTIME_KEYS, _snake
from agentmem.domain.errors import BackendUnavailable

CONFIG_FILE = "agentmem.toml"


class TomlSettingsFile:
    """SettingsStore on `<data dir>/agentmem.toml` (camelCase keys; snake_case ones are read too)."""

    def __init__(self, data_dir: Path):
        self.path = data_dir / CONFIG_FILE

    @property
    def location(self) -> str:
        return str(self.path)

    def _document(self) -> tomlkit.TOMLDocument:
        try:
            return tomlkit.parse(self.path.read_text()) if self.path.exists() else tomlkit.document()
        except (OSError, tomlkit.exceptions.ParseError) as exc:
            raise BackendUnavailable("settings", f"cannot read {self.path}: {exc}") from exc

    def read(self) -> dict[str, Any]:
        document = self._document().unwrap()
        by_snake = {_snake(key): key for key in RUNTIME_KEYS}
        return {by_snake[_snake(k)]: v for k, v in document.items() if _snake(k) in by_snake}

    def write(self, values: Mapping[str, Any]) -> None:
        document = self._document()
        runtime = {_snake(key) for key in RUNTIME_KEYS}
        for key in [k for k in document if _snake(k) in runtime and k not in values]:
            del document[key]
        for key, value in values.items():
            # A snake_case spelling of the same key would shadow or duplicate it: keep one, camelCase.
            for other in [k for k in document if k != key and _snake(k) == _snake(key)]:
                del document[other]
            document[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Written next to the file and renamed over it: a crash leaves the old file or the new one.
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".agentmem.toml.")
        try:
            with os.fdopen(handle, "w") as out:
                out.write(tomlkit.dumps(document))
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
