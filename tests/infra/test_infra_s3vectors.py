"""A tenant in `s3vectors` mode (initech in the test app): its bucket, indexes, grants and monitoring."""

from __future__ import annotations

from typing import Any

from agentmem.adapters.aws import s3vectors_layout as layout
from infra_fixtures import Synthesised

from infra.constructs.functions import FUNCTION_ACCESS, Access
from infra.constructs.s3vectors import INDEXING_PRINCIPAL, READ_ACTIONS, WRITE_ACTIONS

STACK = "AgentMem-initech"
OTHER_TENANTS = ("AgentMem-acme", "AgentMem-globex")


def role_statements(synthesised: Synthesised, stack: str) -> dict[str, list[dict[str, Any]]]:
    """Every statement of every role's policies, by role logical id."""
    out: dict[str, list[dict[str, Any]]] = {}
    for policy in synthesised.resources(stack, "AWS::IAM::Policy").values():
        for role in policy["Properties"]["Roles"]:
            out.setdefault(role["Ref"], []).extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return out


def actions_of(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return actions if isinstance(actions, list) else [actions]


def function_role(synthesised: Synthesised, stack: str, name: str) -> str:
    for function in synthesised.resources(stack, "AWS::Lambda::Function").values():
        if function["Properties"].get("FunctionName") == f"agentmem-{stack.split('-', 1)[1]}-{name}":
            return str(function["Properties"]["Role"]["Fn::GetAtt"][0])
    raise AssertionError(f"no function {name} in {stack}")


def test_the_vector_bucket_is_encrypted_with_the_tenant_key(synthesised: Synthesised) -> None:
    [bucket] = synthesised.resources(STACK, "AWS::S3Vectors::VectorBucket").values()
    [data_key] = [
        logical_id
        for logical_id, key in synthesised.resources(STACK, "AWS::KMS::Key").items()
        if key["Properties"].get("KeySpec") != "HMAC_256"
    ]
    assert bucket["Properties"]["VectorBucketName"] == "agentmem-initech-vectors"
    assert bucket["Properties"]["EncryptionConfiguration"] == {
        "SseType": "aws:kms",
        "KmsKeyArn": {"Fn::GetAtt": [data_key, "Arn"]},
    }


def test_one_index_per_kind_with_the_layout_the_adapter_reads(synthesised: Synthesised) -> None:
    indexes = {
        i["Properties"]["IndexName"]: i["Properties"]
        for i in synthesised.resources(STACK, "AWS::S3Vectors::Index").values()
    }
    assert sorted(indexes) == sorted(layout.index_name("initech", kind) for kind in layout.KINDS)
    for properties in indexes.values():
        assert properties["VectorBucketName"] == layout.bucket_name("initech")
        assert properties["Dimension"] == 1024
        assert properties["DistanceMetric"] == layout.DISTANCE_METRIC
        assert properties["DataType"] == layout.DATA_TYPE
        assert properties["MetadataConfiguration"] == {"NonFilterableMetadataKeys": list(layout.NON_FILTERABLE_KEYS)}


def test_vector_grants_name_only_this_tenants_index_arns(synthesised: Synthesised) -> None:
    own_indexes = [{"Fn::GetAtt": [i, "IndexArn"]} for i in synthesised.resources(STACK, "AWS::S3Vectors::Index")]
    granted = 0
    for statements in role_statements(synthesised, STACK).values():
        for statement in statements:
            if any(a.startswith("s3vectors:") for a in actions_of(statement)):
                granted += 1
                assert sorted(map(str, statement["Resource"])) == sorted(map(str, own_indexes))
    assert granted == sum(1 for a in FUNCTION_ACCESS.values() if a & {Access.VECTORS_READ, Access.VECTORS_WRITE})
    for other in OTHER_TENANTS:
        for statements in role_statements(synthesised, other).values():
            assert not [s for s in statements if any(a.startswith("s3vectors:") for a in actions_of(s))]


def test_readers_can_only_query_and_writers_also_put_delete_and_list(synthesised: Synthesised) -> None:
    statements = role_statements(synthesised, STACK)
    for name, access in FUNCTION_ACCESS.items():
        vector_actions = {
            a for s in statements.get(function_role(synthesised, STACK, name), []) for a in actions_of(s)
            if a.startswith("s3vectors:")
        }  # fmt: skip
        if Access.VECTORS_WRITE in access:
            assert vector_actions == set(WRITE_ACTIONS), name
        elif Access.VECTORS_READ in access:
            assert vector_actions == set(READ_ACTIONS), name
        else:
            assert not vector_actions, name


def test_key_use_for_vectors_is_only_through_s3_vectors(synthesised: Synthesised) -> None:
    retrieve = role_statements(synthesised, STACK)[function_role(synthesised, STACK, "retrieve")]
    via = [s for s in retrieve if "Condition" in s and "kms:ViaService" in s["Condition"].get("StringEquals", {})]
    assert [actions_of(s) for s in via] == [["kms:Decrypt"]]
    assert via[0]["Condition"]["StringEquals"]["kms:ViaService"] == {
        "Fn::Join": ["", ["s3vectors.", {"Ref": "AWS::Region"}, ".amazonaws.com"]]
    }


def test_the_key_policy_lets_the_indexing_service_decrypt_for_this_bucket_only(synthesised: Synthesised) -> None:
    statements = [
        s
        for key in synthesised.resources(STACK, "AWS::KMS::Key").values()
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if s.get("Principal") == {"Service": INDEXING_PRINCIPAL}
    ]
    [statement] = statements
    assert statement["Action"] == "kms:Decrypt"
    source_arn = statement["Condition"]["ArnLike"]["aws:SourceArn"]["Fn::Join"][1]
    assert source_arn[-1].endswith(":bucket/agentmem-initech-vectors")


def test_functions_are_told_the_bucket_and_no_opensearch_exists(synthesised: Synthesised) -> None:
    for function in synthesised.resources(STACK, "AWS::Lambda::Function").values():
        variables = function["Properties"]["Environment"]["Variables"]
        if variables.get("AGENTMEM_BACKEND") != "aws":
            continue
        assert variables["AGENTMEM_VECTOR_STORE"] == "s3vectors"
        assert variables["AGENTMEM_VECTOR_BUCKET"] == "agentmem-initech-vectors"
        assert "AGENTMEM_OPENSEARCH_ENDPOINT" not in variables
    types = {r["Type"] for r in synthesised.template(STACK)["Resources"].values()}
    assert not {t for t in types if t.startswith("AWS::OpenSearchServerless::")}
    assert "Custom::VectorIndex" not in types
    assert synthesised.template(STACK)["Outputs"]["VectorStore"]["Value"] == "s3vectors"


def test_minimal_monitoring_keeps_the_lost_work_alarms_and_no_dashboard(synthesised: Synthesised) -> None:
    alarms = {a["Properties"]["AlarmName"] for a in synthesised.resources(STACK, "AWS::CloudWatch::Alarm").values()}
    assert alarms == {
        "agentmem-initech-DeadLetterQueueDepth",
        "agentmem-initech-Api5xx",
        "agentmem-initech-IndexerDeadLetterQueueDepth",
        "agentmem-initech-ConsolidateDeadLetterQueueDepth",
    }
    assert not synthesised.resources(STACK, "AWS::CloudWatch::Dashboard")
    assert synthesised.resources("AgentMem-acme", "AWS::CloudWatch::Dashboard")
