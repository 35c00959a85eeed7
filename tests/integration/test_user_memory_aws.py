"""Profiles and facts end to end through the real handlers on the AWS adapters, under moto.

DynamoDB (profiles, facts, transcripts, vault), KMS (data keys, token HMAC) and
EventBridge are moto's; TurnsAppended travels EventBridge -> a rule -> SQS, and
is handed to the consolidate function as Lambda would get it. The vector index
is the OpenSearch adapter talking to the in-process server double of
tests/contract. Two stand-ins, both for what moto cannot do: the PII detector is
the regex one (moto's Comprehend answers the same canned entities for any text)
and the model is the offline rule set behind a recorder (moto has no Converse).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from agentmem.adapters.aws.opensearch_index import OpenSearchVectorIndex
from agentmem.adapters.local.offline_llm import OfflineRuleModel
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.config import load_settings
from agentmem.local.lambda_runtime import invoke
from agentmem.local.server import LocalApp
from agentmem.wiring import build_services, set_services
from moto import mock_aws

from tests.contract.conftest import (
    COLLECTION_ENDPOINT,
    INDEX_NAME,
    KEY_TABLE_NAME,
    REGION,
    TABLE_NAME,
    create_key_table,
    create_table,
)
from tests.contract.fake_opensearch import FakeOpenSearchServer
from tests.integration.local_client import LocalCaller
from tests.llm_doubles import RecordingModel

# The vector index is tests/contract/fake_opensearch.py, a double written here.
pytestmark = pytest.mark.double

BUS = "agentmem-acme"
USER = "ana"
EMAIL = "ana.lopez@example.com"


class AwsWorld:
    def __init__(self, app: LocalApp, queue_url: str, recorder: RecordingModel,
                 opensearch: FakeOpenSearchServer | None = None):
        self.app = app
        self.opensearch = opensearch
        self.call = LocalCaller(app)
        self.queue_url = queue_url
        self.recorder = recorder
        self.sqs = boto3.client("sqs", region_name=REGION)

    def say(self, thread: str, text: str) -> list[dict[str, Any]]:
        status, answer = self.call("POST", f"/v1/users/{USER}/threads/{thread}/turns",
                                   {"turns": [{"role": "user", "content": text}]})
        assert status == 201, answer
        return [invoke("consolidate", envelope) for envelope in self.delivered()]

    def say_many(self, thread: str, *texts: str) -> list[dict[str, Any]]:
        """Append turns in one request and hand TurnsAppended to its consumer."""
        status, answer = self.call("POST", f"/v1/users/{USER}/threads/{thread}/turns",
                                   {"turns": [{"role": "user", "content": text} for text in texts]})
        assert status == 201, answer
        return [invoke("consolidate", envelope) for envelope in self.delivered()]

    def delivered(self) -> list[dict[str, Any]]:
        """TurnsAppended envelopes as EventBridge delivered them to the rule's target."""
        out = []
        while messages := self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages"):
            for message in messages:
                envelope = json.loads(message["Body"])
                # moto leaves out the envelope's account; EventBridge always sends it.
                envelope.setdefault("account", "123456789012")
                out.append(envelope)
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return out


@pytest.fixture
def world(minilm, monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsWorld]:
    # Fake credentials and a region, so nothing can reach a real account.
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
                        "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield _aws_world(minilm)
    set_services(None)


def _aws_world(minilm) -> AwsWorld:
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
    # The rule the stack gives the consolidate function (catalog: consumes TurnsAppended).
    events.put_rule(Name="consolidate", EventBusName=BUS,
                    EventPattern=json.dumps({"source": ["agentmem"], "detail-type": ["TurnsAppended"]}))
    events.put_targets(Rule="consolidate", EventBusName=BUS, Targets=[{"Id": "consolidate", "Arn": queue_arn}])

    settings = load_settings(backend="aws", tenant="acme", table_name=TABLE_NAME, key_table_name=KEY_TABLE_NAME,
                             event_bus_name=BUS,
                             kms_key_arn=key_arn, hmac_key_arn=hmac_arn, enabled_agents=["assistant"])
    vectors = OpenSearchVectorIndex(COLLECTION_ENDPOINT, INDEX_NAME, dimension=minilm.dimension)
    opensearch = FakeOpenSearchServer(INDEX_NAME, minilm.dimension)
    opensearch.mount_on(vectors.client)
    recorder = RecordingModel(OfflineRuleModel())
    services = build_services(settings, vectors=vectors, embedder=minilm, llm=recorder,
                              pii_detector=RegexPiiDetector())
    set_services(services)
    return AwsWorld(LocalApp(settings, services, worker=None), queue_url, recorder,  # type: ignore[arg-type]
                    opensearch)


def test_turns_consolidate_into_dynamodb_and_facts_are_recalled_through_opensearch(world):
    runs = world.say("t1", f"My name is Ana. I work at Globex, write to {EMAIL}. I know Python.")
    assert [r["status"] for r in runs] == ["updated"] and runs[0]["factsAdded"] == 3
    world.say("t2", "I work at Initech now.")

    status, profile = world.call("GET", f"/v1/users/{USER}/profile")
    assert status == 200 and profile["version"] == 2 and "- Employer: Initech" in profile["markdown"]
    status, facts = world.call("GET", f"/v1/users/{USER}/facts?includeSuperseded=true")
    assert {(f["text"], f["status"]) for f in facts["items"]} == {
        ("User's name is Ana", "active"), ("User works at Globex", "superseded"),
        ("User knows Python", "active"), ("User works at Initech", "active"),
    }
    status, answer = world.call("POST", "/v1/agents/assistant/retrieve",
                                {"input": "Where is the user employed?", "userId": USER, "threadId": "t3"})
    assert status == 200 and answer["degraded"] == []
    assert answer["facts"][0]["text"] == "User works at Initech"
    assert "User works at Globex" not in [f["text"] for f in answer["facts"]]
    assert "- Employer: Initech" in answer["profile"]

    sent = world.recorder.sent()
    assert EMAIL not in sent and "{{PII_EMAIL_" in sent


def test_past_turns_are_recalled_through_the_opensearch_vectors_and_the_dynamodb_transcripts(world):
    assert len(world.say_many("trip", "We are planning a hiking trip to the Dolomites in July.",
                              f"Send the tent receipt to {EMAIL}.")) == 1
    world.say_many("chores", "The dishwasher needs a new filter.")

    status, answer = world.call("POST", "/v1/agents/assistant/retrieve",
                                {"input": "Where are we going hiking?", "userId": USER, "threadId": "t9"})
    assert status == 200 and answer["degraded"] == []
    top = answer["recalled"][0]
    assert (top["threadId"], top["seq"], top["role"]) == ("trip", 1, "user")
    assert top["content"] == "We are planning a hiking trip to the Dolomites in July."
    # Masked like everything else: the address is a token in the recalled turn and in the messages.
    receipt = next(r for r in answer["recalled"] if r["seq"] == 2 and r["threadId"] == "trip")
    assert EMAIL not in json.dumps(answer) and "{{PII_EMAIL_" in receipt["content"]
    assert any("Dolomites" in m["content"] and m["role"] == "user" for m in answer["messages"])

    assert world.call("DELETE", f"/v1/users/{USER}")[0] == 204
    status, answer = world.call("POST", "/v1/agents/assistant/retrieve",
                                {"input": "Where are we going hiking?", "userId": USER, "threadId": "t9"})
    assert status == 200 and answer["recalled"] == []


def test_turns_get_a_masked_keyword_side_in_opensearch_that_recall_queries_and_erase_removes(world):
    world.say_many("trip", "We are planning a hiking trip to the Dolomites in July.",
                   f"Send the tent receipt to {EMAIL}.")
    world.say_many("chores", "The dishwasher needs a new filter.")
    docs = world.opensearch.indexes[INDEX_NAME].docs.values()
    keyword_docs = [d for d in docs if d["kind"] == "turn.text"]
    assert len(keyword_docs) == 3 and all("vector" not in d and d["userId"] == USER for d in keyword_docs)
    assert any("Dolomites" in d["text"] for d in keyword_docs)
    assert not any(EMAIL in d["text"] for d in keyword_docs)

    before = len(world.opensearch.requests)
    status, answer = world.call("POST", "/v1/agents/assistant/retrieve",
                                {"input": "Dolomites", "userId": USER, "threadId": "t9"})
    assert status == 200 and answer["degraded"] == []
    assert (answer["recalled"][0]["threadId"], answer["recalled"][0]["seq"]) == ("trip", 1)
    searches = [r.body.decode() for r in world.opensearch.requests[before:] if r.url.endswith("/_search")]
    assert any('"match"' in body and "Dolomites" in body for body in searches)

    assert world.call("DELETE", f"/v1/users/{USER}")[0] == 204
    assert not [d for d in world.opensearch.indexes[INDEX_NAME].docs.values() if d["kind"] == "turn.text"]


def test_the_user_edit_is_conditional_on_the_version_in_dynamodb(world):
    world.say("t1", "I live in Lisbon.")
    status, profile = world.call("GET", f"/v1/users/{USER}/profile")
    body = profile["markdown"].replace("- Lives in: Lisbon", "- Lives in: Porto")

    assert world.call("PUT", f"/v1/users/{USER}/profile", {"markdown": body}, {"If-Match": "0"})[0] == 409
    status, edited = world.call("PUT", f"/v1/users/{USER}/profile", {"markdown": body}, {"If-Match": "1"})
    assert status == 200 and edited["version"] == 2 and "Porto" in edited["markdown"]
    status, restored = world.call("POST", f"/v1/users/{USER}/profile/versions/1/restore")
    assert status == 200 and restored["version"] == 3 and "- Lives in: Lisbon" in restored["markdown"]
    status, versions = world.call("GET", f"/v1/users/{USER}/profile/versions")
    assert [(v["version"], v["source"]) for v in versions["items"]] == [
        (3, "restore"), (2, "user"), (1, "consolidation")
    ]


def test_erasing_the_user_leaves_no_profile_or_fact_item_in_the_table(world):
    world.say("t1", "I live in Lisbon. I know Rust.")
    assert world.call("DELETE", f"/v1/users/{USER}")[0] == 204

    items = boto3.client("dynamodb", region_name=REGION).scan(TableName=TABLE_NAME)["Items"]
    left = [i["pk"]["S"] for i in items if f"#U#{USER}#" in i["pk"]["S"]]
    assert not [pk for pk in left if pk.endswith(("#PROFILE", "#FACTS"))], left
    assert world.call("GET", f"/v1/users/{USER}/profile")[1]["version"] == 0


def test_items_are_masked_in_dynamodb_found_through_opensearch_and_erased_with_the_user(world):
    put = {"namespace": ["memories"], "key": "food", "value": {"text": f"Loves Thai curry; mail {EMAIL}"}}
    assert world.call("PUT", f"/v1/users/{USER}/items", put)[0] == 200
    world.call("PUT", f"/v1/users/{USER}/items", {**put, "key": "sport", "value": {"text": "Climbs on Sundays"}})
    status, found = world.call("POST", f"/v1/users/{USER}/items/search", {"query": "what food do they like?"})
    assert status == 200 and [i["key"] for i in found["items"]] == ["food", "sport"]
    assert EMAIL not in json.dumps(found) and "{{PII_EMAIL_" in found["items"][0]["value"]["text"]

    assert world.call("DELETE", f"/v1/users/{USER}")[0] == 204
    rows = boto3.client("dynamodb", region_name=REGION).scan(TableName=TABLE_NAME)["Items"]
    assert not [r for r in rows if r["pk"]["S"].endswith(f"#U#{USER}#ITEMS")]
    assert world.call("POST", f"/v1/users/{USER}/items/search", {"query": "food"})[1]["items"] == []
