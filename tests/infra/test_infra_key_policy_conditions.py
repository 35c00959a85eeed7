"""Every KMS key-policy statement that lets an AWS service use a tenant's key says on whose behalf:
`aws:SourceAccount` or `aws:SourceArn` (the confused-deputy guard AWS documents for service principals),
so no other account's bus, rule, alarm or index can make the service use this tenant's key.

CloudWatch Logs is the one service whose documented guard is another key: the encryption context
`kms:EncryptionContext:aws:logs:arn`, the ARN of the log group (which names this account), the way
AWS's "Encrypt log data in CloudWatch Logs using AWS KMS" restricts a key to one account's log groups."""

from __future__ import annotations

import json
from typing import Any

import pytest
from infra_fixtures import TEST_CONTEXT, Synthesised

SOURCE_KEYS = {"aws:sourceaccount", "aws:sourcearn"}
LOGS_SOURCE_KEY = "kms:encryptioncontext:aws:logs:arn"


def service_statements(synthesised: Synthesised, stack: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for logical_id, key in synthesised.resources(stack, "AWS::KMS::Key").items():
        for statement in key["Properties"]["KeyPolicy"]["Statement"]:
            principal = statement.get("Principal", {})
            if isinstance(principal, dict) and "Service" in principal and statement.get("Effect") == "Allow":
                found.append((f"{logical_id}/{statement.get('Sid', '?')}", statement))
    return found


def source_condition_keys(statement: dict[str, Any]) -> set[str]:
    return {key.lower() for operator in statement.get("Condition", {}).values() for key in operator}


def guarded(statement: dict[str, Any]) -> bool:
    keys = source_condition_keys(statement)
    if "logs." in json.dumps(statement["Principal"]["Service"]):
        return bool(keys & (SOURCE_KEYS | {LOGS_SOURCE_KEY}))
    return bool(keys & SOURCE_KEYS)


@pytest.mark.parametrize("tenant", TEST_CONTEXT["tenants"])
def test_every_key_policy_statement_for_an_aws_service_names_the_source_account_or_arn(synthesised, tenant):
    statements = service_statements(synthesised, f"AgentMem-{tenant}")
    assert statements, "the tenant key lets EventBridge, CloudWatch and Logs use it"
    unguarded = [name for name, statement in statements if not guarded(statement)]
    assert unguarded == [], [statement for _, statement in statements if not guarded(statement)]


def test_the_source_account_is_the_stacks_own(synthesised):
    for _, statement in service_statements(synthesised, "AgentMem-acme"):
        accounts = [value for operator in statement.get("Condition", {}).values() for key, value in operator.items()
                    if key.lower() == "aws:sourceaccount"]
        assert all(account == {"Ref": "AWS::AccountId"} for account in accounts)
