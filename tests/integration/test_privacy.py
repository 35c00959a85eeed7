"""The issue's privacy acceptance, locally and under moto: the scenario of agentmem.eval.privacy.

A 👎 comment and a run output holding an email, a card number and a person's name make lessons with
tokens only; user B's retrieve and unmask never show user A's values; after `DELETE /v1/users/A` no
file of the data folder (WAL included) and no DynamoDB item holds any of A's values, and a copy of the
data taken before the erase, put beside the key store as it is after it, restores none of them.
The name checks run against whatever detector is wired: they must hold once it finds names.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from agentmem.eval.privacy import (
    CARD_A,
    EMAIL_A,
    EMAIL_B,
    NAME_A,
    USER_A,
    USER_B,
    Report,
    format_report,
    run_local,
    run_moto,
)


@pytest.fixture(autouse=True)
def quiet_powertools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")


def assert_holds(report: Report) -> None:
    structured = [c for c in report.checks if not c.needs_names]
    assert len(structured) >= 20
    assert not [c for c in structured if not c.ok], format_report(report)
    names = [c for c in report.checks if c.needs_names]
    if report.finds_names:
        assert all(c.ok for c in names), format_report(report)
    else:
        # A detector that finds no name leaves it in plaintext, and the name checks say so.
        assert names and not all(c.ok for c in names), format_report(report)


def test_privacy_holds_on_the_embedded_backends(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    report = run_local(tmp_path)
    assert_holds(report)
    # Every log line of the scenario (powertools' JSON on stdout, the standard loggers): no id, no value.
    captured = capfd.readouterr()
    logged = captured.out + captured.err + caplog.text
    assert "erased" in logged  # the erase was logged, with a hash of the id
    for secret in (USER_A, USER_B, EMAIL_A, CARD_A, NAME_A, EMAIL_B):
        assert secret not in logged, secret


@pytest.mark.slow
def test_privacy_holds_on_the_aws_adapters_under_moto(tmp_path: Path) -> None:
    assert_holds(run_moto(tmp_path))
