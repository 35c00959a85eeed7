"""cdk-nag's AwsSolutions pack passes on the real app, and would fail a non-compliant one."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk import aws_sqs as sqs
from infra_fixtures import Synthesised

from infra.nag import acknowledge, add_nag_checks


def test_the_app_synthesises_with_cdk_nag_and_no_unacknowledged_finding(synthesised: Synthesised) -> None:
    # The fixture's synth would have raised on any unacknowledged finding; the report says so too.
    report_file = synthesised.outdir / "validation-report.json"
    if report_file.exists():
        report = json.loads(report_file.read_text())
        violations = [v for plugin in report["pluginReports"] for v in plugin.get("violations", [])]
        assert violations == []


def test_cdk_nag_fails_the_synth_of_a_noncompliant_stack(tmp_path: Path) -> None:
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "NotCompliant")
    sqs.Queue(stack, "PlainQueue")
    add_nag_checks(app)

    with pytest.raises(RuntimeError, match="AwsSolutions-SQS4"):
        app.synth()


def test_an_acknowledged_finding_no_longer_fails_the_synth(tmp_path: Path) -> None:
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Acknowledged")
    queue = sqs.Queue(stack, "Dlq", enforce_ssl=True)
    acknowledge(queue, "AwsSolutions-SQS3", "This queue is a dead-letter queue of an EventBridge target.")
    add_nag_checks(app)

    app.synth()


def test_an_acknowledgment_needs_a_reason() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Any")
    with pytest.raises(ValueError, match="real reason"):
        acknowledge(stack, "AwsSolutions-SQS3", "ok")
