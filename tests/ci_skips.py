"""In CI (`CI=true`) a skipped test is a failed test, unless it is on the short allow-list below.

A skip says "this was not tested"; on a developer's machine that is a useful hint (no Chromium,
no evaluation data), in CI it would be a green run with something untested. So with CI=true an
unexpected skip, of a test or of a whole module, is reported as a failure carrying the skip's
reason, and the allowed ones are listed at the end of the run with why each is allowed.

Each allowed skip names the tests it covers and the start of its reason, so a new skip with the
same words elsewhere is still caught. tests/conftest.py imports the hooks.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class AllowedSkip:
    name: str
    where: str  # a substring of the skipped tests' node ids
    reason: str  # how the skip's reason starts
    why: str  # why it cannot be tested here, printed at the end of a CI run


ALLOWED_SKIPS = (
    AllowedSkip(
        "moto-bedrock-has-no-model",
        "tests/contract/test_embedder_contract.py::",
        "bedrock-moto: moto's bedrock-runtime answers InvokeModel with an empty JSON body",
        "moto has no embedding model; the same assertions run against MiniLM and the Titan server double",
    ),
    AllowedSkip(
        "titan-double-is-not-a-language-model",
        "tests/contract/test_embedder_contract.py::test_similar_texts_are_closer_than_unrelated_ones",
        "bedrock-titan-double: the Titan server double hashes trigrams",
        "similarity needs a real model: MiniLM runs it here, Titan itself only in AWS",
    ),
    AllowedSkip(
        "moto-dynamodb-serialises-no-transactions",
        "tests/contract/test_profile_store_contract.py::test_concurrent_writers_never_overwrite_each_other",
        "moto checks transaction conditions without serialising concurrent transactions",
        "a race under moto proves nothing about DynamoDB; the condition is checked by the sequential conflict tests",
    ),
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def allowed(nodeid: str, reason: str) -> AllowedSkip | None:
    return next((a for a in ALLOWED_SKIPS if a.where in nodeid and reason.startswith(a.reason)), None)


_seen: Counter[str] = Counter()


def _judge(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not report.skipped or hasattr(report, "wasxfail") or not in_ci():
        return
    reason = skip_reason(report)
    entry = allowed(report.nodeid, reason)
    if entry is not None:
        _seen[entry.name] += 1
        return
    report.outcome = "failed"
    report.longrepr = f"skipped in CI and not on the allow-list (tests/ci_skips.py): {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    _judge(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    report = yield
    _judge(report)  # a module-level skip (importorskip, pytest.skip(allow_module_level=True))
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not in_ci():
        return
    terminalreporter.section("skips allowed in CI (tests/ci_skips.py)")
    for entry in ALLOWED_SKIPS:
        terminalreporter.line(f"{entry.name}: {_seen[entry.name]} skipped. {entry.why}")
