"""The key store's table: apart from the tenant table, never backed up, guarded, granted to few.

Erase survives backups only if a restore of the data can never bring a user's wrapped data key
back next to its ciphertexts: these tests pin the properties that promise rests on.
"""

from __future__ import annotations

from typing import Any

from agentmem.adapters.aws.dynamodb_keys import KEY_TABLE_SCHEMA
from infra_fixtures import Synthesised

from functions.catalog import FUNCTIONS
from infra.constructs.functions import FUNCTION_ACCESS, Access

TENANTS = ("acme", "globex")


def key_table(synthesised: Synthesised, tenant: str) -> tuple[str, dict[str, Any]]:
    tables = synthesised.resources(f"AgentMem-{tenant}", "AWS::DynamoDB::Table")
    [(logical_id, table)] = [(k, v) for k, v in tables.items() if k.startswith("KeyStore")]
    return logical_id, table


def test_the_key_table_has_no_point_in_time_recovery_no_stream_and_no_ttl(synthesised: Synthesised) -> None:
    for tenant in TENANTS:
        _, table = key_table(synthesised, tenant)
        properties = table["Properties"]
        assert properties["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is False
        assert "StreamSpecification" not in properties
        assert "TimeToLiveSpecification" not in properties
        assert properties["SSESpecification"]["SSEEnabled"] is True
        assert properties["SSESpecification"]["SSEType"] == "KMS"


def test_the_key_table_is_protected_from_deletion_when_the_tenant_retains_its_data(synthesised: Synthesised) -> None:
    _, retained = key_table(synthesised, "acme")
    _, destroyed = key_table(synthesised, "globex")
    assert retained["DeletionPolicy"] == "Retain"
    assert retained["Properties"]["DeletionProtectionEnabled"] is True
    assert destroyed["DeletionPolicy"] == "Delete"


def test_the_adapter_creates_the_key_table_the_stack_declares(synthesised: Synthesised) -> None:
    _, table = key_table(synthesised, "acme")
    assert table["Properties"]["KeySchema"] == KEY_TABLE_SCHEMA["KeySchema"]
    assert table["Properties"]["AttributeDefinitions"] == KEY_TABLE_SCHEMA["AttributeDefinitions"]
    assert table["Properties"]["BillingMode"] == KEY_TABLE_SCHEMA["BillingMode"]


def _statements_naming(template: dict[str, Any], logical_id: str) -> dict[str, list[dict[str, Any]]]:
    """{role logical id: the statements of its policies whose resources name `logical_id`}."""
    found: dict[str, list[dict[str, Any]]] = {}
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::IAM::Policy":
            continue
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            if any(logical_id in str(r) for r in resources):
                for role in resource["Properties"]["Roles"]:
                    found.setdefault(role["Ref"], []).append(statement)
    return found


def test_only_the_functions_that_mask_unmask_or_erase_may_touch_the_key_table(synthesised: Synthesised) -> None:
    template = synthesised.template("AgentMem-acme")
    logical_id, _ = key_table(synthesised, "acme")
    role_of = {
        r["Properties"]["FunctionName"].split("-", 2)[2]: r["Properties"]["Role"]["Fn::GetAtt"][0]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("FunctionName", "").startswith("agentmem-acme-")
    }
    granted = _statements_naming(template, logical_id)
    wanted = {spec.name for spec in FUNCTIONS if Access.KEY_STORE in FUNCTION_ACCESS[spec.name]}
    assert {"retrieve", "feedback", "conversations"} <= wanted  # the functions that mask, unmask or erase
    assert {name for name, role in role_of.items() if role in granted} == wanted
    for statements in granted.values():
        actions = {a for s in statements for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])}
        assert actions == {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:BatchWriteItem"}
        assert "dynamodb:DeleteTable" not in actions and "dynamodb:CreateBackup" not in actions


def test_every_function_is_told_the_key_table_and_its_name_is_an_output(synthesised: Synthesised) -> None:
    template = synthesised.template("AgentMem-acme")
    logical_id, _ = key_table(synthesised, "acme")
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::Lambda::Function" and "Environment" in resource["Properties"]:
            variables = resource["Properties"]["Environment"]["Variables"]
            if "AGENTMEM_TABLE_NAME" in variables:
                assert variables["AGENTMEM_KEY_TABLE_NAME"] == {"Ref": logical_id}
    assert template["Outputs"]["KeyTableName"]["Value"] == {"Ref": logical_id}
