"""Recalled turns of an S3 Vectors tenant, through the real handlers on the AWS adapters under moto.

`build_services` with `vectorStore: s3vectors` gives the turn search its keyword side in the tenant
table (DynamoDbLexicalIndex): consolidate indexes the masked turns there, retrieve finds a turn by a
word its vector alone ranks low, and erasing the user deletes the keyword partition. S3 Vectors is
moto's, but for QueryVectors, which is the double of tests/contract/fake_s3vectors_query.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from agentmem.adapters.aws import s3vectors_layout as layout
from agentmem.adapters.aws.dynamodb_lexical import DynamoDbLexicalIndex, lexical_pk
from agentmem.adapters.aws.lexical_segments import decode_delta
from agentmem.adapters.aws.s3vectors_index import S3VectorsIndex
from agentmem.adapters.local.offline_llm import OfflineRuleModel
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.config import load_settings
from agentmem.local.lambda_runtime import invoke
from agentmem.local.server import LocalApp
from agentmem.wiring import build_services, set_services
from moto import mock_aws

from tests.contract.conftest import KEY_TABLE_NAME, REGION, TABLE_NAME, create_key_table, create_table
from tests.contract.fake_s3vectors_query import FakeS3VectorsQuery
from tests.integration.local_client import LocalCaller

# QueryVectors is tests/contract/fake_s3vectors_query.py, a double written here.
pytestmark = pytest.mark.double

TENANT = "acme"
BUS = "agentmem-acme"
BUCKET = "agentmem-acme-vectors"
USER = "ana"
EMAIL = "ana.lopez@example.com"


class World:
    def __init__(self, app: LocalApp, queue_url: str):
        self.app = app
        self.call = LocalCaller(app)
        self.queue_url = queue_url
        self.sqs = boto3.client("sqs", region_name=REGION)

    def say(self, thread: str, *texts: str) -> None:
        status, answer = self.call("POST", f"/v1/users/{USER}/threads/{thread}/turns",
                                   {"turns": [{"role": "user", "content": text} for text in texts]})
        assert status == 201, answer
        while messages := self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages"):
            for message in messages:
                envelope = json.loads(message["Body"])
                envelope.setdefault("account", "123456789012")  # moto leaves it out; EventBridge sends it
                invoke("consolidate", envelope)
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])

    def keyword_items(self) -> list[dict[str, Any]]:
        return boto3.client("dynamodb", region_name=REGION).query(
            TableName=TABLE_NAME, KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": lexical_pk(TENANT, "turn", USER)}},
        )["Items"]


@pytest.fixture
def world(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
                        "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield _world(minilm)
    set_services(None)


def _world(minilm: Any) -> World:
    create_table()
    create_key_table()
    kms = boto3.client("kms", region_name=REGION)
    key_arn = kms.create_key(Description="agentmem acme")["KeyMetadata"]["Arn"]
    hmac_arn = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]["Arn"]
    events = boto3.client("events", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
    events.create_event_bus(Name=BUS)
    queue_url = sqs.create_queue(QueueName="consolidate")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="consolidate", EventBusName=BUS,
                    EventPattern=json.dumps({"source": ["agentmem"], "detail-type": ["TurnsAppended"]}))
    events.put_targets(Rule="consolidate", EventBusName=BUS, Targets=[{"Id": "consolidate", "Arn": queue_arn}])
    client = boto3.client("s3vectors", region_name=REGION)
    FakeS3VectorsQuery().register_on(client)
    client.create_vector_bucket(vectorBucketName=BUCKET)
    for kind in layout.KINDS:
        client.create_index(
            vectorBucketName=BUCKET, indexName=layout.index_name(TENANT, kind), dataType=layout.DATA_TYPE,
            dimension=minilm.dimension, distanceMetric=layout.DISTANCE_METRIC,
            metadataConfiguration={"nonFilterableMetadataKeys": list(layout.NON_FILTERABLE_KEYS)},
        )
    settings = load_settings(
        backend="aws", tenant=TENANT, table_name=TABLE_NAME, key_table_name=KEY_TABLE_NAME, event_bus_name=BUS,
        kms_key_arn=key_arn, hmac_key_arn=hmac_arn, enabled_agents=["assistant"], vector_store="s3vectors",
        vector_bucket=BUCKET, embedding_dimension=minilm.dimension,
    )
    vectors = S3VectorsIndex(BUCKET, dimension=minilm.dimension, client=client)
    services = build_services(
        settings, vectors=vectors, embedder=minilm, llm=OfflineRuleModel(), pii_detector=RegexPiiDetector()
    )
    set_services(services)
    return World(LocalApp(settings, services, worker=None), queue_url)  # type: ignore[arg-type]


def test_an_s3vectors_tenant_gets_the_dynamodb_keyword_side(world: World) -> None:
    # The keyword index is the one port no service closes, so the services keep it to close it.
    assert [type(port) for port in world.app.services.closeables] == [DynamoDbLexicalIndex]


def test_turns_are_found_by_keyword_masked_in_the_table_and_erased_with_the_user(world: World) -> None:
    world.say("trip", "We are planning a hiking trip to the Dolomites in July.", f"Send the tent receipt to {EMAIL}.")
    world.say("chores", "The dishwasher needs a new filter.")
    items = world.keyword_items()
    assert items, "the keyword side was written"
    terms = {term for item in items if item["sk"]["S"].startswith("DELTA#")
             for _, counts in decode_delta(bytes(item["d"]["B"]))[0] for term in counts}
    assert "dolomit" in terms and not [term for term in terms if "example" in term or "lopez" in term]

    status, answer = world.call("POST", "/v1/agents/assistant/retrieve",
                                {"input": "dishwasher", "userId": USER, "threadId": "t9"})
    assert status == 200 and answer["degraded"] == []
    assert (answer["recalled"][0]["threadId"], answer["recalled"][0]["seq"]) == ("chores", 1)

    assert world.call("DELETE", f"/v1/users/{USER}")[0] == 204
    assert world.keyword_items() == []


def stored_terms(world: World) -> set[str]:
    """Every term the user's keyword partition holds, in its base and its deltas."""
    from agentmem.adapters.aws.lexical_segments import decode_base

    items = world.keyword_items()
    terms: set[str] = set()
    base = b"".join(bytes(i["d"]["B"]) for i in items if i["sk"]["S"].startswith("BASE#"))
    if base:
        terms |= set(decode_base(base).terms)
    for item in items:
        if item["sk"]["S"].startswith("DELTA#"):
            terms |= {term for _, counts in decode_delta(bytes(item["d"]["B"]))[0] for term in counts}
    return terms


def test_deleting_a_thread_takes_its_words_out_of_the_keyword_partition(world: World) -> None:
    world.say("trip", "We are planning a hiking trip to the Dolomites in July.")
    world.say("chores", "The dishwasher needs a new filter.")
    assert {"dolomit", "dishwash"} <= stored_terms(world)

    assert world.call("DELETE", f"/v1/users/{USER}/threads/trip")[0] == 204
    terms = stored_terms(world)
    assert "dolomit" not in terms and "dishwash" in terms
    status, answer = world.call("POST", "/v1/agents/assistant/retrieve",
                                {"input": "Dolomites", "userId": USER, "threadId": "t9"})
    assert status == 200 and not [r for r in answer["recalled"] if r["threadId"] == "trip"]
