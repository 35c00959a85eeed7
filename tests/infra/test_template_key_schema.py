"""`table_key_schema_from_template()`: the deployed table's schema, for tables made in moto."""

from __future__ import annotations

from pathlib import Path

import boto3
import pytest
from infra_fixtures import Synthesised
from moto import mock_aws

from infra.template_schema import (
    sources_digest,
    table_key_schema_from_template,
    table_ttl_attribute_from_template,
)


@pytest.fixture(scope="module")
def schema_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache filled by one real synth, so the test does not depend on build/cache's state."""
    cache = tmp_path_factory.mktemp("schema-cache")
    table_key_schema_from_template(cache)
    return cache


def test_the_schema_is_the_synthesised_tables(schema_cache: Path, synthesised: Synthesised) -> None:
    [table] = [
        t for logical_id, t in synthesised.resources("AgentMem-acme", "AWS::DynamoDB::Table").items()
        if logical_id.startswith("Memory")
    ]
    kwargs = table_key_schema_from_template(schema_cache)

    assert kwargs["KeySchema"] == table["Properties"]["KeySchema"]
    assert kwargs["AttributeDefinitions"] == table["Properties"]["AttributeDefinitions"]
    assert kwargs["GlobalSecondaryIndexes"] == table["Properties"]["GlobalSecondaryIndexes"]
    assert kwargs["BillingMode"] == "PAY_PER_REQUEST"
    assert table_ttl_attribute_from_template(schema_cache) == "ttl"


def test_the_second_call_reads_the_cache_written_by_the_first(schema_cache: Path) -> None:
    [cached] = list(schema_cache.iterdir())
    assert sources_digest()[:24] in cached.name
    assert table_key_schema_from_template(schema_cache) == table_key_schema_from_template(schema_cache)


def test_the_cache_key_changes_with_any_source_but_not_with_bytecode(tmp_path: Path) -> None:
    source = tmp_path / "infra"
    source.mkdir()
    (source / "stack.py").write_text("A = 1\n")

    def digest() -> str:
        return sources_digest((source,), root=tmp_path)

    first = digest()
    (source / "__pycache__").mkdir()
    (source / "__pycache__" / "stack.cpython-311.py").write_text("cached")
    unchanged = digest()
    (source / "stack.py").write_text("A = 2\n")
    edited = digest()
    (source / "more.py").write_text("")
    added = digest()

    assert unchanged == first
    assert len({first, edited, added}) == 3


@mock_aws
def test_moto_builds_a_working_table_from_it(schema_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(TableName="agentmem-test", **table_key_schema_from_template(schema_cache))
    client.put_item(
        TableName="agentmem-test",
        Item={
            "pk": {"S": "T#acme#U#bob#TH#t1"},
            "sk": {"S": "TURN#0001"},
            "gsi1pk": {"S": "T#acme#A#agent-a#PENDING"},
            "gsi1sk": {"S": "2026-01-01T00:00:00Z"},
        },
    )

    by_gsi = client.query(
        TableName="agentmem-test",
        IndexName="gsi1",
        KeyConditionExpression="gsi1pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "T#acme#A#agent-a#PENDING"}},
    )
    assert [item["pk"]["S"] for item in by_gsi["Items"]] == ["T#acme#U#bob#TH#t1"]
