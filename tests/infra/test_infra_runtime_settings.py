"""The tenant's run-time settings in the synthesised stack: the SSM parameter, who may read it, where it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from infra_fixtures import TEST_CONTEXT, Synthesised
from test_infra_tenant_stack import TENANTS, catalog_functions_by_logical_id, logical_id_of, only, stack

from infra.settings import load_settings


def statements_of(synthesised: Synthesised, tenant: str, role_id: str) -> list[dict[str, Any]]:
    return [
        statement
        for policy in synthesised.resources(stack(tenant), "AWS::IAM::Policy").values()
        if role_id in [logical_id_of(r) for r in policy["Properties"]["Roles"]]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


@pytest.mark.parametrize("tenant", TENANTS)
def test_the_parameter_holds_the_tenants_cdk_json_values_of_every_run_time_key(synthesised: Synthesised, tenant):
    [settings] = [t for t in load_settings(TEST_CONTEXT).tenants if t.name == tenant]
    _, parameter = only(synthesised.resources(stack(tenant), "AWS::SSM::Parameter"))
    properties = parameter["Properties"]

    assert properties["Name"] == f"/agentmem/{tenant}/settings"
    assert properties["Type"] == "String" and properties["Tier"] == "Standard"
    assert json.loads(properties["Value"]) == settings.runtime_settings()
    if tenant == "acme":
        assert json.loads(properties["Value"])["enabledAgents"] == ["support-bot", "sales-assistant"]
        assert json.loads(properties["Value"])["eligibilityThreshold"] == 0.42


@pytest.mark.parametrize("tenant", TENANTS)
def test_every_function_that_reads_settings_may_get_that_parameter_and_nothing_else_of_ssm(
    synthesised: Synthesised, tenant: str
) -> None:
    parameter_id, _ = only(synthesised.resources(stack(tenant), "AWS::SSM::Parameter"))
    lambdas = synthesised.resources(stack(tenant), "AWS::Lambda::Function")
    for function_id, name in catalog_functions_by_logical_id(synthesised, tenant).items():
        properties = lambdas[function_id]["Properties"]
        variables = properties["Environment"]["Variables"]
        ssm = [s for s in statements_of(synthesised, tenant, logical_id_of(properties["Role"]))
               if any(str(a).startswith("ssm:") for a in (s["Action"] if isinstance(s["Action"], list)
                                                          else [s["Action"]]))]
        if name == "service":
            assert ssm == []
            continue
        assert logical_id_of(variables["AGENTMEM_SETTINGS_PARAMETER"]) == parameter_id
        (statement,) = ssm
        assert statement["Action"] == "ssm:GetParameter"
        resource = json.dumps(statement["Resource"])
        assert parameter_id in resource and "*" not in resource


def test_the_stack_outputs_the_parameter_name_for_agentmem_config(synthesised: Synthesised):
    for tenant in TENANTS:
        parameter_id, _ = only(synthesised.resources(stack(tenant), "AWS::SSM::Parameter"))
        output = synthesised.template(stack(tenant))["Outputs"]["SettingsParameterName"]
        assert logical_id_of(output["Value"]) == parameter_id
