"""Builds the CDK app: the platform stack, one stack per selected tenant, cdk-nag on all of them.

`app.py` calls `build_app()`; the tests call it with their own context, output
directory and layer, so they check the very app that gets deployed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aws_cdk import App, Environment

from infra.bundling import REPO_ROOT, LayerStatus, find_layer, stage_function_code
from infra.nag import add_nag_checks
from infra.platform_stack import PlatformStack
from infra.settings import AppSettings, load_settings
from infra.tenant_stack import TenantStack

CONTEXT_KEYS = ("tenant", "tenants", "tenantDefaults", "tenantSettings", "platform")
REQUIRE_BUNDLE_CONTEXT = "agentmem:requireBundle"
CDK_JSON = REPO_ROOT / "cdk.json"


@dataclass(frozen=True)
class AgentMemApp:
    app: App
    settings: AppSettings
    platform: PlatformStack | None
    tenants: dict[str, TenantStack]


def cdk_json_context(path: Path = CDK_JSON) -> dict[str, Any]:
    """The `context` of cdk.json, which the CDK CLI would otherwise pass in."""
    context: dict[str, Any] = json.loads(path.read_text()).get("context", {})
    return context


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def build_app(
    context: Mapping[str, Any] | None = None,
    *,
    outdir: str | None = None,
    layer_status: LayerStatus | None = None,
    code_dir: Path | None = None,
    nag: bool = True,
) -> AgentMemApp:
    """The app, with every stack constructed; call `.app.synth()` to write the cloud assembly.

    `context` adds to what the CDK CLI passes (cdk.json, `-c key=value`).
    Raises SettingsError listing every invalid setting.
    """
    app = App(outdir=outdir, context=dict(context) if context else None)
    settings = load_settings({key: app.node.try_get_context(key) for key in CONTEXT_KEYS})
    # Unset (plain synth) leaves the stacks environment-agnostic.
    env = Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION"))

    platform = None
    if settings.platform.api_gateway_cloud_watch_role or settings.platform.shared_vector_collection:
        platform = PlatformStack(app, settings.platform.stack_name, settings=settings.platform, env=env)
    code_dir = code_dir or stage_function_code()
    layer_status = layer_status or find_layer()
    require_bundle = _truthy(app.node.try_get_context(REQUIRE_BUNDLE_CONTEXT))

    tenants: dict[str, TenantStack] = {}
    for tenant in settings.tenants:
        stack = TenantStack(
            app,
            tenant.stack_name,
            settings=tenant,
            code_dir=code_dir,
            layer_status=layer_status,
            require_bundle=require_bundle,
            shared_collection=platform.shared_collection if platform else None,
            env=env,
        )
        if platform is not None:
            # The API stages log through the platform's account-level role.
            stack.add_stack_dependency(platform)
        tenants[tenant.name] = stack
    if nag:
        add_nag_checks(app)
    return AgentMemApp(app=app, settings=settings, platform=platform, tenants=tenants)
