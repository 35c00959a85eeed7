"""Fixtures of the infrastructure tests: the app synthesised once per test session.

One synth of the real app (platform + a dedicated-collection tenant + a
shared-collection tenant, with cdk-nag on) serves every template assertion;
synthesising is the slow part (seconds), asserting on the JSON is not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from infra_fixtures import TEST_CONTEXT, Synthesised, make_layer_zip

from infra.bundling import LayerStatus, stage_function_code


@pytest.fixture(scope="session")
def synthesised(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synthesised]:
    from infra.application import build_app

    scratch = tmp_path_factory.mktemp("infra")
    layer = make_layer_zip(scratch / "layer")
    outdir = scratch / "cdk.out"
    built = build_app(
        TEST_CONTEXT,
        outdir=str(outdir),
        layer_status=LayerStatus(layer),
        code_dir=stage_function_code(scratch / "code"),
    )
    # cdk-nag runs here: an unacknowledged finding raises.
    built.app.synth()
    names = [stack.stack_name for stack in [built.platform, *built.tenants.values()] if stack is not None]
    templates = {name: json.loads((outdir / f"{name}.template.json").read_text()) for name in names}
    yield Synthesised(outdir=outdir, templates=templates, layer=layer)
