"""Least privilege, proven: every action a function's role is granted is called by that function's code.

What the code calls is derived from the AWS adapters' source: each adapter module's AST is scanned
for calls of its boto3 service's operations (botocore's own operation list, so a new call cannot be
missed), mapped to IAM actions. Which adapters a function reaches is declared once, in
`infra.constructs.functions.FUNCTION_ACCESS`; `ACCESS_CODE` below says which adapter code serves each
kind of access. The test lists each function's granted actions from the synthesised template of each
tenant stack (one per vector mode: dedicated, shared, s3vectors) and requires them to equal what its
access's code calls: no grant without a caller, and no call without a grant.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aws_lambda_powertools.utilities.idempotency.persistence.dynamodb as powertools_dynamodb
import aws_lambda_powertools.utilities.parameters.ssm as powertools_ssm
import boto3
import pytest
from botocore import xform_name
from infra_fixtures import REPO_ROOT, Synthesised

from functions.catalog import by_name
from infra.constructs.functions import FUNCTION_ACCESS, QUEUE_CONSUMER_ACTIONS, Access

STACK = "AgentMem-initech"  # the S3 Vectors tenant
TENANT_STACKS = ("AgentMem-acme", "AgentMem-globex", "AgentMem-initech")  # dedicated, shared, s3vectors
ADAPTERS = REPO_ROOT / "shared" / "agentmem" / "adapters" / "aws"
# Granted to every function for its own logs and traces; not an adapter's doing.
PLATFORM_ACTIONS = frozenset({"logs:CreateLogStream", "logs:PutLogEvents", "xray:PutTraceSegments",
                              "xray:PutTelemetryRecords"})  # fmt: skip
IAM_PREFIX = {"bedrock-runtime": "bedrock"}
# Operations whose IAM authorisation is other actions than their own name (service authorization reference).
IAM_ACTIONS_OF = {
    ("bedrock-runtime", "converse"): ("InvokeModel",),
    ("bedrock-runtime", "converse_stream"): ("InvokeModelWithResponseStream",),
    ("dynamodb", "transact_write_items"): ("PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"),
    ("dynamodb", "transact_get_items"): ("GetItem",),
    # QueryVectors with a filter or returnMetadata also needs GetVectors (QueryVectors API reference).
    ("s3vectors", "query_vectors"): ("QueryVectors", "GetVectors"),
}

# Which code serves each access: (source file, boto3 service, methods (None: the whole module)).
# Left out on purpose: KmsKeyProvider.rewrap (ReEncrypt) is called only by `agentmem rewrap`, which an
# operator runs with their own credentials, never by a function.
ACCESS_CODE: dict[Access, list[tuple[Path, str, tuple[str, ...] | None]]] = {
    Access.TABLE: [
        *[(path, "dynamodb", None) for path in sorted(ADAPTERS.glob("dynamodb_*.py"))
          if path.name != "dynamodb_keys.py"],  # the key table's own access: KEY_STORE
        (Path(powertools_dynamodb.__file__), "dynamodb", None),  # the feedback idempotency records
    ],
    Access.DATA_KEYS: [(ADAPTERS / "kms_keys.py", "kms", ("generate_data_key", "unwrap"))],
    # The key table: a user's keys read, added and destroyed (re-wrapping is `agentmem rewrap`, an operator's).
    Access.KEY_STORE: [
        (ADAPTERS / "dynamodb_keys.py", "dynamodb", ("get_data_key", "add_data_key", "destroy_data_keys")),
        (ADAPTERS / "dynamodb_table.py", "dynamodb", ("get", "batch_delete", "keys_with_prefix")),
    ],
    Access.PII_HMAC: [(ADAPTERS / "kms_keys.py", "kms", ("thread_hash",))],
    Access.PII_DETECT: [(ADAPTERS / "comprehend_pii.py", "comprehend", None)],
    Access.PUBLISH: [(ADAPTERS / "eventbridge_bus.py", "events", None)],
    Access.EMBED: [(ADAPTERS / "bedrock_embedder.py", "bedrock-runtime", None)],
    Access.LLM: [(ADAPTERS / "bedrock_llm.py", "bedrock-runtime", None)],
    Access.VECTORS_READ: [(ADAPTERS / "s3vectors_index.py", "s3vectors", ("search",))],
    Access.VECTORS_WRITE: [(ADAPTERS / "s3vectors_index.py", "s3vectors", None)],
    # ssm_settings.py reads through powertools' SSMProvider, whose `_get` makes the call. Its `set`
    # (PutParameter) serves only `agentmem config set`, run with an operator's credentials.
    Access.SETTINGS: [(Path(powertools_ssm.__file__), "ssm", ("_get",))],
}
# Adapter code no function reaches, by file: DynamoDbTable.scan serves only the store's scan by a status
# other than "pending", which no service asks for (MemoryService lists pending lessons only).
UNREACHED: dict[str, frozenset[str]] = {
    "dynamodb_table.py": frozenset({"scan"}),
    "dynamodb_lessons.py": frozenset({"_scan_memories_by_status"}),
}
# OpenSearch Serverless' data plane (HTTP signed for `aoss`, not boto3) is authorised by one IAM action;
# the collection's data access policy narrows it to the tenant index's document permissions
# (tests/infra/test_infra_isolation.py).
OPENSEARCH_ACTIONS = {Access.VECTORS_READ: ("aoss:APIAccessAll",), Access.VECTORS_WRITE: ("aoss:APIAccessAll",)}
# Granted with a key: the KMS use S3 Vectors makes on the caller's behalf (`kms:ViaService` s3vectors).
VECTOR_KEY_ACTIONS = {
    Access.VECTORS_READ: {"kms:Decrypt"},
    Access.VECTORS_WRITE: {"kms:Decrypt", "kms:GenerateDataKey"},
}


@functools.cache
def operations(service: str) -> frozenset[str]:
    client = boto3.session.Session(region_name="us-east-1").client(service)  # type: ignore[call-overload]
    return frozenset(xform_name(name) for name in client.meta.service_model.operation_names)


def _walk(node: ast.AST, skipped: frozenset[str]) -> Iterator[ast.AST]:
    """`ast.walk`, not entering the functions named in `skipped`."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef) and child.name in skipped:
            continue
        yield from _walk(child, skipped)


def called_operations(path: Path, service: str, methods: tuple[str, ...] | None) -> set[str]:
    """The `service` operations called in `path` (inside `methods` only, when given).

    A call is `x.<operation>(...)`, or an operation's name passed as a string to a call
    (`getattr(self.client, operation)` behind `pages("query", ...)`, `_until_processed("batch_get_item", ...)`).
    """
    tree = ast.parse(path.read_text())
    skipped = UNREACHED.get(path.name, frozenset())
    scopes: list[ast.AST] = [tree]
    if methods is not None:
        scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in methods]
        assert {getattr(n, "name", "") for n in scopes} == set(methods), f"{path.name}: {methods} not all found"
    known = operations(service)
    found: set[str] = set()
    for scope in scopes:
        for node in _walk(scope, skipped):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr in known:
                found.add(node.func.attr)
            found |= {a.value for a in node.args if isinstance(a, ast.Constant) and a.value in known}
    return found


def code_actions(access: Access, *, opensearch: bool = False) -> set[str]:
    if opensearch and access in OPENSEARCH_ACTIONS:
        return set(OPENSEARCH_ACTIONS[access])
    actions: set[str] = set()
    for path, service, methods in ACCESS_CODE[access]:
        for operation in called_operations(path, service, methods):
            names = IAM_ACTIONS_OF.get((service, operation), (operation.title().replace("_", ""),))
            actions |= {f"{IAM_PREFIX.get(service, service)}:{name}" for name in names}
    return actions | VECTOR_KEY_ACTIONS.get(access, set())


def granted_actions(synthesised: Synthesised, function: str, stack: str = STACK) -> set[str]:
    template = synthesised.template(stack)
    tenant = stack.removeprefix("AgentMem-")
    [role] = [
        f["Properties"]["Role"]["Fn::GetAtt"][0]
        for f in synthesised.resources(stack, "AWS::Lambda::Function").values()
        if f["Properties"].get("FunctionName") == f"agentmem-{tenant}-{function}"
    ]
    actions: set[str] = set()
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::IAM::Policy" and {"Ref": role} in resource["Properties"]["Roles"]:
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
                value: Any = statement["Action"]
                actions |= set(value if isinstance(value, list) else [value])
    return actions - PLATFORM_ACTIONS


def test_every_access_is_served_by_code_that_calls_aws() -> None:
    for access in Access:
        assert code_actions(access), f"{access}: no adapter code calls AWS for it"


@pytest.mark.parametrize("stack", TENANT_STACKS)
@pytest.mark.parametrize("function", sorted(FUNCTION_ACCESS))
def test_a_functions_grants_are_exactly_what_its_code_calls(
    synthesised: Synthesised, function: str, stack: str
) -> None:
    opensearch = not synthesised.resources(stack, "AWS::S3Vectors::Index")
    expected = set().union(*(code_actions(a, opensearch=opensearch) for a in FUNCTION_ACCESS[function]))
    if by_name(function).consumes:
        # Not the function's code: its event source mapping reads its queue with its role (kms via SQS).
        expected |= {*QUEUE_CONSUMER_ACTIONS, "kms:Decrypt"}
    granted = granted_actions(synthesised, function, stack)
    assert sorted(granted - expected) == [], f"{function}: granted without a caller"
    assert sorted(expected - granted) == [], f"{function}: called without a grant"


def test_consolidate_holds_no_data_key_hmac_or_comprehend_grant(synthesised: Synthesised) -> None:
    # It reads masked turns and withholds personal data with the regex detector: no users' data keys, no
    # HMAC, no Comprehend. Its only KMS use is S3 Vectors encrypting the facts' vectors on its behalf.
    granted = granted_actions(synthesised, "consolidate")
    assert not {"kms:GenerateMac", "comprehend:DetectPiiEntities"} & granted
    template = synthesised.template(STACK)
    [role] = [
        f["Properties"]["Role"]["Fn::GetAtt"][0]
        for f in synthesised.resources(STACK, "AWS::Lambda::Function").values()
        if f["Properties"].get("FunctionName") == "agentmem-initech-consolidate"
    ]
    kms_statements = [
        statement
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::IAM::Policy" and {"Ref": role} in resource["Properties"]["Roles"]
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
        if any(str(a).startswith("kms:") for a in (statement["Action"] if isinstance(statement["Action"], list)
                                                    else [statement["Action"]]))
    ]  # fmt: skip
    assert kms_statements
    for statement in kms_statements:
        assert "kms:ViaService" in statement["Condition"]["StringEquals"], statement
