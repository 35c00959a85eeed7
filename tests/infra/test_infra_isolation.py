"""Tenants share nothing that holds data, and every permission names what it is for."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from infra_fixtures import Synthesised

from infra.constructs.functions import FUNCTION_ACCESS, RESOURCELESS_ACTIONS, Access

TENANT_STACKS = ("AgentMem-acme", "AgentMem-globex", "AgentMem-initech")
DATA_RESOURCE_TYPES = (
    "AWS::DynamoDB::Table",
    "AWS::KMS::Key",
    "AWS::Events::EventBus",
    "AWS::Events::Archive",
    "AWS::SQS::Queue",
    "AWS::SNS::Topic",
    "AWS::Logs::LogGroup",
)


def statements(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] == "AWS::IAM::Policy":
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
                yield logical_id, statement


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_one_stack_per_tenant_plus_the_platform(synthesised: Synthesised) -> None:
    assert sorted(synthesised.templates) == sorted(["AgentMem-Platform", *TENANT_STACKS])


@pytest.mark.parametrize("resource_type", DATA_RESOURCE_TYPES)
def test_each_tenant_stack_owns_its_data_resources_and_the_platform_none(
    synthesised: Synthesised, resource_type: str
) -> None:
    for stack in TENANT_STACKS:
        assert synthesised.resources(stack, resource_type), f"{stack} has no {resource_type}"
    platform_owned = set(synthesised.resources("AgentMem-Platform", resource_type))
    if resource_type == "AWS::KMS::Key":
        # The one platform key is the shared collection's (the collection's OCUs are shared only under one key).
        assert platform_owned == {"SharedVectorsKey32FF8E7F"}
    else:
        assert not platform_owned


def test_tenants_have_distinct_names_for_everything_named(synthesised: Synthesised) -> None:
    def names(stack: str) -> set[str]:
        found = set()
        for resource in synthesised.template(stack)["Resources"].values():
            for key in ("Name", "FunctionName", "AliasName", "LogGroupName", "ArchiveName", "DashboardName"):
                value = resource["Properties"].get(key) if "Properties" in resource else None
                if isinstance(value, str):
                    found.add(value)
        return found

    acme, globex = names("AgentMem-acme"), names("AgentMem-globex")
    assert acme and globex
    assert not acme & globex
    assert "alias/agentmem/acme/data" in acme
    assert "agentmem-globex" in globex


def test_a_tenant_template_never_mentions_another_tenant(synthesised: Synthesised) -> None:
    acme = json.dumps(synthesised.template("AgentMem-acme"))
    globex = json.dumps(synthesised.template("AgentMem-globex"))
    assert not re.search(r"\bglobex\b", acme)
    assert not re.search(r"\bacme\b", globex)


def test_tenants_import_from_the_platform_only_the_shared_collection(synthesised: Synthesised) -> None:
    acme = json.dumps(synthesised.template("AgentMem-acme"))
    imports = set(re.findall(r'"Fn::ImportValue": "([^"]+)"', json.dumps(synthesised.template("AgentMem-globex"))))

    assert "Fn::ImportValue" not in acme
    assert imports and all(i.startswith("AgentMem-Platform:") and "SharedVectorsCollection" in i for i in imports)


@pytest.mark.parametrize("stack", [*TENANT_STACKS, "AgentMem-Platform"])
def test_no_policy_statement_names_a_wildcard_resource_except_for_resourceless_actions(
    synthesised: Synthesised, stack: str
) -> None:
    checked = 0
    for policy, statement in statements(synthesised.template(stack)):
        actions = set(as_list(statement["Action"]))
        for resource in as_list(statement["Resource"]):
            checked += 1
            if resource == "*":
                assert actions <= RESOURCELESS_ACTIONS, (policy, sorted(actions))
            else:
                assert "*" not in json.dumps(resource), (policy, resource)
    assert checked or stack == "AgentMem-Platform"


def test_no_policy_grants_a_service_wide_action(synthesised: Synthesised) -> None:
    for stack in TENANT_STACKS:
        for policy, statement in statements(synthesised.template(stack)):
            for action in as_list(statement["Action"]):
                assert "*" not in action, (policy, action)


def function_policies(synthesised: Synthesised, stack: str) -> dict[str, list[dict[str, Any]]]:
    """{catalog function name: its role's statements}."""
    template = synthesised.template(stack)
    tenant = stack.removeprefix("AgentMem-")
    role_of_function = {}
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::Lambda::Function":
            name = resource["Properties"].get("FunctionName", "")
            if name.startswith(f"agentmem-{tenant}-"):
                role_of_function[resource["Properties"]["Role"]["Fn::GetAtt"][0]] = name.split("-", 2)[2]
    policies: dict[str, list[dict[str, Any]]] = {}
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::IAM::Policy":
            [role] = resource["Properties"]["Roles"]
            if role["Ref"] in role_of_function:
                policies[role_of_function[role["Ref"]]] = resource["Properties"]["PolicyDocument"]["Statement"]
    return policies


def test_each_function_gets_exactly_the_actions_its_access_profile_declares(synthesised: Synthesised) -> None:
    policies = function_policies(synthesised, "AgentMem-acme")
    marker_action = {
        Access.TABLE: "dynamodb:PutItem",
        Access.DATA_KEYS: "kms:GenerateDataKey",
        Access.PII_HMAC: "kms:GenerateMac",
        Access.PII_DETECT: "comprehend:DetectPiiEntities",
        Access.PUBLISH: "events:PutEvents",
        # LLM and EMBED are both bedrock:InvokeModel, on different models (test_least_privilege.py).
        Access.VECTORS_READ: "aoss:APIAccessAll",
    }
    assert set(policies) == set(FUNCTION_ACCESS)
    for name, statements_of_function in policies.items():
        actions = {a for s in statements_of_function for a in as_list(s["Action"])}
        for access, action in marker_action.items():
            granted = access in FUNCTION_ACCESS[name] or (
                access is Access.VECTORS_READ and Access.VECTORS_WRITE in FUNCTION_ACCESS[name]
            )
            assert (action in actions) == granted, (name, access)


def test_publishing_is_limited_to_the_tenant_bus_and_the_agentmem_source(synthesised: Synthesised) -> None:
    bus_id = next(iter(synthesised.resources("AgentMem-acme", "AWS::Events::EventBus")))
    for _, statement in statements(synthesised.template("AgentMem-acme")):
        if "events:PutEvents" in as_list(statement["Action"]):
            assert statement["Resource"] == {"Fn::GetAtt": [bus_id, "Arn"]}
            assert statement["Condition"] == {"StringEquals": {"events:source": "agentmem"}}


def access_policy_rules(synthesised: Synthesised, stack: str) -> list[dict[str, Any]]:
    [policy] = synthesised.resources(stack, "AWS::OpenSearchServerless::AccessPolicy").values()
    parts = policy["Properties"]["Policy"]["Fn::Join"][1]
    # Principals are role ARNs (GetAtt); stand each in by its role's logical id.
    rendered = "".join(p if isinstance(p, str) else f"role:{p['Fn::GetAtt'][0]}" for p in parts)
    rules: list[dict[str, Any]] = json.loads(rendered)
    return rules


@pytest.mark.parametrize(
    ("stack", "collection"), [("AgentMem-acme", "agentmem-acme"), ("AgentMem-globex", "agentmem-shared")]
)
def test_vector_data_access_is_this_tenants_index_for_this_tenants_roles_only(
    synthesised: Synthesised, stack: str, collection: str
) -> None:
    tenant = stack.removeprefix("AgentMem-")
    own_roles = {f"role:{i}" for i in synthesised.resources(stack, "AWS::IAM::Role")}
    rules = access_policy_rules(synthesised, stack)

    assert rules
    for rule in rules:
        assert set(rule["Principal"]) <= own_roles
        for resource_rule in rule["Rules"]:
            assert resource_rule["ResourceType"] == "index"
            assert resource_rule["Resource"] == [f"index/{collection}/agentmem-{tenant}"]
    readers = {p for r in rules for p in r["Principal"] if "aoss:ReadDocument" in r["Rules"][0]["Permission"]}
    writers = {p for r in rules for p in r["Principal"] if "aoss:WriteDocument" in r["Rules"][0]["Permission"]}
    assert len(readers) == sum(1 for a in FUNCTION_ACCESS.values() if {Access.VECTORS_READ, Access.VECTORS_WRITE} & a)
    assert writers < readers


def test_shared_collection_lives_in_the_platform_under_the_platform_cmk(synthesised: Synthesised) -> None:
    [collection] = synthesised.resources("AgentMem-Platform", "AWS::OpenSearchServerless::Collection").values()
    policies = synthesised.resources("AgentMem-Platform", "AWS::OpenSearchServerless::SecurityPolicy").values()
    [encryption] = [p for p in policies if p["Properties"]["Type"] == "encryption"]
    [(key_id, key)] = synthesised.resources("AgentMem-Platform", "AWS::KMS::Key").items()

    assert collection["Properties"]["Name"] == "agentmem-shared"
    assert collection["DeletionPolicy"] == "Retain"
    policy = encryption["Properties"]["Policy"]["Fn::Join"][1]
    assert '"AWSOwnedKey":false' in "".join(p for p in policy if isinstance(p, str))
    assert {"Fn::GetAtt": [key_id, "Arn"]} in policy
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"
    assert not synthesised.resources("AgentMem-globex", "AWS::OpenSearchServerless::Collection")
