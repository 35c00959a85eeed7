"""Settings without a redeploy, under moto: `agentmem config set --stack` -> the SSM parameter -> the handlers.

What runs for real: the retrieve and feedback handlers on the AWS adapters (tests/integration/
test_feedback_loop_moto.py's world), the SSM adapter through powertools' Parameters (moto's SSM),
the run-time settings overlay the wiring gives every function whose stack names a settings
parameter, and the CLI, which finds the parameter through the stack's outputs (a CloudFormation
stack in moto holding the parameter, with the stack's output name).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentmem.adapters.aws.ssm_settings import settings_parameter_name
from agentmem.cli.main import cli
from agentmem.config import load_settings, runtime_values
from agentmem.wiring import build_services, set_services
from click.testing import CliRunner
from moto import mock_aws

from tests.contract.conftest import REGION, aws_session
from tests.integration.test_feedback_loop_moto import AUDIT, TENANT, World, _world, use_moto_environment

STACK = "AgentMem-acme"
PARAMETER = settings_parameter_name(TENANT)


@dataclass
class Tenant:
    world: World
    ssm: Any

    def config(self, *args: str) -> Any:
        return CliRunner().invoke(cli, ["config", *args, "--stack", STACK, "--region", REGION])

    def retrieve(self, agent: str) -> dict[str, Any]:
        status, answer = self.world.call("POST", f"/v1/agents/{agent}/retrieve", {"input": AUDIT})
        assert status == 200, answer
        return dict(answer)

    def stored(self) -> dict[str, Any]:
        return dict(json.loads(self.ssm.get_parameter(Name=PARAMETER)["Parameter"]["Value"]))


@pytest.fixture
def tenant(minilm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tenant]:
    use_moto_environment(monkeypatch)
    with mock_aws():
        # The tenant's SSM parameter, read with the cache off for the test: build_services wires it.
        world = _world(minilm, tmp_path, settings_parameter=PARAMETER, settings_max_age_seconds=0)
        base = world.services.settings
        template = {
            "Resources": {"Settings": {"Type": "AWS::SSM::Parameter", "Properties": {
                "Name": PARAMETER, "Type": "String", "Value": json.dumps(runtime_values(base))}}},
            "Outputs": {"SettingsParameterName": {"Value": {"Ref": "Settings"}}},
        }
        aws_session().client("cloudformation").create_stack(StackName=STACK, TemplateBody=json.dumps(template))
        set_services(world.services)
        try:
            yield Tenant(world, aws_session().client("ssm"))
        finally:
            set_services(None)
            world.services.close()


def test_enabling_an_agent_with_config_set_turns_its_memory_on_without_a_redeploy(tenant):
    assert tenant.retrieve("newbie")["memory"] == "disabled"

    result = tenant.config("set", "enabledAgents", "auditor,writer,newbie")

    assert result.exit_code == 0, result.output
    assert tenant.stored()["enabledAgents"] == ["auditor", "writer", "newbie"]
    assert tenant.retrieve("newbie")["memory"] == "enabled"
    status, _ = tenant.world.call("GET", "/v1/agents")
    assert status == 200
    got = tenant.config("get", "enabledAgents")
    assert got.exit_code == 0 and json.loads(got.output) == ["auditor", "writer", "newbie"]


def test_config_set_refuses_a_bad_value_and_writes_nothing(tenant):
    before = tenant.stored()
    for key, value in (("topK", "11"), ("topK", "true"), ("retentionDays", "7"), ("enabledAgents", "a,a")):
        result = tenant.config("set", key, value)
        assert result.exit_code != 0 and key in result.output, (key, value, result.output)
    assert tenant.stored() == before
    assert tenant.config("set", "nope", "1").exit_code != 0


def test_a_bad_value_in_the_parameter_keeps_the_last_good_settings_and_is_logged(tenant, caplog):
    assert tenant.config("set", "topK", "2").exit_code == 0
    assert tenant.world.services.runtime is not None
    assert tenant.world.services.runtime.current().top_k == 2
    tenant.ssm.put_parameter(Name=PARAMETER, Overwrite=True, Type="String",
                             Value=json.dumps({**tenant.stored(), "topK": 99, "enabledAgents": []}))

    with caplog.at_level(logging.ERROR):
        answer = tenant.retrieve("auditor")

    assert answer["memory"] == "enabled"  # the last good enabledAgents, not the bad value's empty list
    assert tenant.world.services.settings.top_k == 2
    assert any("rejected" in r.getMessage() for r in caplog.records)

    tenant.ssm.delete_parameter(Name=PARAMETER)  # unreadable: still the last good ones
    assert tenant.retrieve("auditor")["memory"] == "enabled"


def test_the_wiring_overlays_the_parameter_named_by_the_stack(tenant, tmp_path):
    settings = tenant.world.services.settings.model_copy(
        update={"settings_parameter": PARAMETER, "data_dir": tmp_path / "other"})
    assert tenant.config("set", "topK", "4").exit_code == 0

    services = build_services(settings)
    try:
        assert services.runtime is not None and services.runtime.store.location.endswith(PARAMETER)
        services.refresh_settings()
        assert services.settings.top_k == 4 and services.memory.settings.top_k == 4
    finally:
        services.close()
    assert load_settings().settings_parameter is None
