"""The serve process's arena limit: applied through glibc's mallopt where there is glibc, else nothing."""

from __future__ import annotations

import platform

import pytest
from agentmem.local import malloc_tuning


def test_limit_arenas_is_applied_exactly_where_the_c_library_is_glibc() -> None:
    assert malloc_tuning.limit_arenas(2) is (platform.libc_ver()[0] == "glibc")


def test_limit_arenas_does_nothing_without_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(malloc_tuning, "_glibc", lambda: None)
    assert malloc_tuning.limit_arenas(2) is False
