"""Waiting for the background indexer (or any consumer) by its own signal, not by polling on a clock."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from agentmem.local import lambda_runtime

# Only a bound for a test that fails, never a measure of speed.
GIVE_UP_SECONDS = 60


def watch_indexer(monkeypatch: pytest.MonkeyPatch) -> threading.Semaphore:
    """A semaphore released after every invocation of the indexer function (set up before the worker runs)."""
    return watch_functions(monkeypatch, "indexer")


def watch_functions(monkeypatch: pytest.MonkeyPatch, *names: str) -> threading.Semaphore:
    """A semaphore released after every invocation of any of the functions `names`."""
    finished = threading.Semaphore(0)
    load_handler = lambda_runtime.load_handler

    def observed(function_name: str, environment: int = 0) -> Any:
        handler = load_handler(function_name, environment)
        if function_name not in names:
            return handler

        def indexer(event: Any, context: Any) -> Any:
            try:
                return handler(event, context)
            finally:
                finished.release()

        return indexer

    monkeypatch.setattr(lambda_runtime, "load_handler", observed)
    return finished


def after_indexing(finished: threading.Semaphore, check: Callable[[], Any], *, invocations: int = 10) -> Any:
    """`check()` after each indexer invocation until it is truthy (its value); fails when it never is."""
    for _ in range(invocations):
        assert finished.acquire(timeout=GIVE_UP_SECONDS), "the indexer did not run"
        if result := check():
            return result
    pytest.fail(f"still not so after {invocations} indexer invocations")
