#!/usr/bin/env python3
"""agentmem's CDK app: one stack per tenant, plus the account-wide platform stack.

    cdk deploy AgentMem-acme               # one tenant, and AgentMem-Platform before it when needed
    cdk deploy AgentMem-acme -c tenant=acme  # the same, synthesising that tenant only
    cdk synth                              # every tenant listed in cdk.json `tenants`
    python app.py                          # the same synth without the CLI, into ./cdk.out

`cdk deploy -c tenant=acme` without a stack name cannot work: with two stacks in the app the CLI
asks for one, and its default selection never adds a stack's dependencies.

Offline either way: the functions' dependency layer is built beforehand by
`make bundle` (scripts/bundle_lambda.py); without it, synth warns and the
deployment is refused by CloudFormation (see infra/bundling.py).
"""

from __future__ import annotations

import os
import sys

# This machine's Node 20 is past its end of life and jsii prints a banner about it on every run;
# upgrading Node (22 or 24) is the fix. Silenced for Node 20 only, so a later EOL still shows.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from infra.application import build_app, cdk_json_context
from infra.settings import SettingsError


def main() -> int:
    # The CDK CLI passes cdk.json's context and an output directory; run directly, read them here.
    run_by_cli = "CDK_OUTDIR" in os.environ
    try:
        built = build_app(
            None if run_by_cli else cdk_json_context(),
            outdir=None if run_by_cli else "cdk.out",
        )
    except SettingsError as error:
        print(error, file=sys.stderr)
        return 2
    built.app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
