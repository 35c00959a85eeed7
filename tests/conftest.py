"""Fixtures shared by every test layer."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# With CI=true a skip fails the run unless allow-listed there (the hooks are registered by being named here).
from tests.ci_skips import pytest_make_collect_report, pytest_runtest_makereport, pytest_terminal_summary  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "events"
EVAL_DIR = ROOT.parent / "shared" / "eval"


def load_event(name: str) -> dict[str, Any]:
    """A sample event from events/<source>/<case>.json."""
    return json.loads((EVENTS / f"{name}.json").read_text())


@pytest.fixture(scope="session")
def minilm():
    """One loaded MiniLM model for the whole session (loading the weights takes about a second)."""
    from agentmem.adapters.local.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    return embedder


@pytest.fixture(autouse=True)
def restore_environment():
    """Commands and the local app set AGENTMEM_* variables as `agentmem` does; no test sees another's."""
    import os

    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def function_log_lines() -> Iterator[Callable[[], list[dict[str, Any]]]]:
    """The JSON lines the functions' powertools Logger writes (to stdout in Lambda), as written at the time."""
    import io

    from agentmem.api.observability import logger

    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]
    finally:
        handler.setStream(previous)
