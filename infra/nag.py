"""cdk-nag wiring: the AwsSolutions pack on the whole app, and acknowledgments with reasons.

cdk-nag 3 is a CDK policy-validation plugin: an unacknowledged finding fails
`app.synth()` (and `cdk synth`) with a report in `validation-report.json`.
Every acknowledgment is attached to the construct it concerns, never to a
stack, and states why the finding does not apply or is accepted.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, App, Validations
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct


def add_nag_checks(app: App) -> None:
    """Check every stack of `app` against the AwsSolutions rules at synth."""
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))


def acknowledge(construct: IConstruct, rule_id: str, reason: str) -> None:
    """Accept one finding (e.g. `AwsSolutions-IAM5[Resource::*]`) on `construct` and its children."""
    if len(reason) < 20:
        raise ValueError(f"give {rule_id} a real reason, not {reason!r}")
    Validations.of(construct).acknowledge(Acknowledgment(id=rule_id, reason=reason))
