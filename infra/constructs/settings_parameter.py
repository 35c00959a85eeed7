"""The tenant's run-time settings: one SSM String parameter holding the contract's keys as JSON.

Why SSM Parameter Store and not AppConfig: the settings are one small JSON
object per tenant, read by a handful of functions with a 60 s cache; a
standard parameter costs nothing at rest and per read at this rate, needs no
application/environment/profile/deployment-strategy resources and no
extension layer, and powertools' Parameters utility reads it with its cache.
AppConfig's gradual deployments and validators would be worth it for
fleet-wide feature flags; here validation is agentmem's own
(`agentmem.config.with_runtime`), applied by `agentmem config set` before it
writes and by every function when it reads (a bad value is logged and the last
good settings stay in force).

The value is written from cdk.json at deploy (`TenantSettings.runtime_settings`);
`agentmem config set KEY VALUE --stack NAME` changes it in between. A String
parameter cannot use a customer-managed key; it holds agent ids and numbers,
never personal data or secrets.
"""

from __future__ import annotations

import json

from agentmem.adapters.aws.ssm_settings import settings_parameter_name
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from infra.settings import TenantSettings


class TenantSettingsParameter(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: TenantSettings) -> None:
        super().__init__(scope, construct_id)
        self.parameter = ssm.StringParameter(
            self,
            "Parameter",
            parameter_name=settings_parameter_name(settings.name),
            description=f"agentmem tenant {settings.name}: run-time settings (agentmem config set)",
            string_value=json.dumps(settings.runtime_settings(), sort_keys=True),
            tier=ssm.ParameterTier.STANDARD,
        )
