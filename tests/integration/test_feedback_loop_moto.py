"""The feedback-learning loop through the real Lambda handlers, on the AWS adapters, under moto.

What runs for real: the `retrieve`, `feedback` and `indexer` handlers (API Gateway REST proxy events
in, their answers out), every AWS adapter, and powertools' idempotency on DynamoDB. Where each AWS
service comes from:

- DynamoDB, EventBridge, SQS, KMS: moto. The table is created from the synthesised CDK template's
  key schema (`infra.template_schema`), not retyped here.
- EventBridge -> indexer: the tenant bus has the rule the stack gives the indexer (source `agentmem`,
  the detail-types the catalog says it consumes), targeting an SQS queue that stands in for the
  Lambda target; the indexer handler is invoked with each message's body, which is the very
  envelope EventBridge would hand the function.
- OpenSearch Serverless: the OpenSearch adapter, its requests answered by the in-process server
  double of tests/contract (moto has no OpenSearch Serverless data plane).
- Comprehend: moto answers every DetectPiiEntities call with the same canned entities, at fixed
  offsets of any text; runs and comments are masked now, so the PII detector is the regex one.
- Bedrock Titan v2: the Bedrock adapter, its InvokeModel calls answered by `MiniLMTitanServer` below,
  a double of the SERVER whose vectors are the real local MiniLM model's, so "a similar input gets the
  lesson, an unrelated one does not" is a real assertion with the measured eligibility threshold.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from agentmem.adapters.aws.bedrock_embedder import BedrockEmbedder
from agentmem.adapters.aws.dynamodb_keys import KEY_TABLE_SCHEMA
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.api.idempotency import idempotency_partition
from agentmem.config import load_settings
from agentmem.domain.errors import BackendUnavailable
from agentmem.local import apigateway
from agentmem.local.lambda_runtime import invoke
from agentmem.ports.events import EVENT_SOURCE, DomainEvent, EventBus, PublishReceipt
from agentmem.wiring import Services, build_services, set_services
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError
from moto import mock_aws

from functions.catalog import by_name
from infra.template_schema import table_key_schema_from_template, table_ttl_attribute_from_template
from tests.conftest import load_event
from tests.contract.conftest import COLLECTION_ENDPOINT, INDEX_NAME, REGION, aws_session
from tests.contract.fake_bedrock import _response
from tests.contract.fake_opensearch import FakeOpenSearchServer

# The vector index is tests/contract/fake_opensearch.py and Titan a handler written here: doubles of ours.
pytestmark = pytest.mark.double

TENANT = "acme"
TABLE = "agentmem-acme"
KEY_TABLE = "agentmem-acme-keys"
BUS = "agentmem-acme"
# Titan v2 embeds in 256, 512 or 1024 dimensions (the adapter refuses anything else, 384 included):
# the double answers 512, MiniLM's 384 followed by zeros, which leaves every cosine as MiniLM has it.
DIMENSION = 512

AUDIT = "Audit this outdoor gear article for brand voice: our trail magic moments make every hike special."
SIMILAR = "Audit this hiking article for brand voice: trail magic moments keep every hike special."
UNRELATED = "Summarise the quarterly tax filing obligations for a limited company in Germany."
COMMENT = "'Trail magic' is our brand's own idiom, used on purpose. Do not flag it."
OUTPUT = "FLAG: 'trail magic' (cliché)"

AWS_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
    "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true",
}


class MiniLMTitanServer:
    """A test double of the Bedrock Titan Text Embeddings v2 SERVER (not of the adapter under test).

    Registered on the bedrock-runtime client's `before-send`, it answers the signed InvokeModel
    request botocore built, in Titan v2's request and response shapes (`inputText`, `dimensions`,
    `normalize` in; `embedding`, `inputTextTokenCount` out; a 400 ValidationException for what Titan
    refuses). The embedding is the real all-MiniLM-L6-v2 vector of `inputText`, zero-padded to the
    dimensions asked for. `failure` makes it fail like the service: "500" answers
    InternalServerException, "unreachable" fails the connection.
    """

    def __init__(self, minilm: Any):
        self.minilm = minilm
        self.failure: str | None = None
        self.texts: list[str] = []

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-send.bedrock-runtime.InvokeModel", self._answer)

    def _answer(self, request: AWSPreparedRequest, **kwargs: Any) -> AWSResponse:
        if self.failure == "unreachable":
            raise EndpointConnectionError(endpoint_url=request.url)
        if self.failure == "500":
            return _response(request, 500, {"message": "Internal server error"}, "InternalServerException")
        body = json.loads(request.body or b"{}")
        text, dimensions = body.get("inputText", ""), body.get("dimensions", 1024)
        if not text or dimensions not in (256, 512, 1024) or dimensions < self.minilm.dimension:
            return _response(request, 400, {"message": "Malformed input request"}, "ValidationException")
        self.texts.append(text)
        vector = np.zeros(dimensions, dtype=np.float64)
        vector[: self.minilm.dimension] = self.minilm.embed([text])[0]
        if not body.get("normalize", True):
            vector *= 3.7  # Titan leaves the length alone when not asked to normalise
        payload = {"embedding": [float(x) for x in vector], "inputTextTokenCount": len(text.split())}
        return _response(request, 200, payload)


class HeldBus:
    """The real EventBridge bus, with a gate that holds `publish` until the test opens it."""

    def __init__(self, inner: EventBus):
        self.inner = inner
        self.entered = threading.Event()
        self.gate = threading.Event()

    def publish(self, events: Sequence[DomainEvent]) -> list[PublishReceipt]:
        self.entered.set()
        assert self.gate.wait(10), "the test never opened the gate"
        return self.inner.publish(events)


class LosingBus:
    """The real EventBridge bus, except that while `losing` every entry fails as PutEvents reports it."""

    def __init__(self, inner: EventBus):
        self.inner = inner
        self.losing = True

    def publish(self, events: Sequence[DomainEvent]) -> list[PublishReceipt]:
        if self.losing:
            return [PublishReceipt(None, "InternalFailure") for _ in events]
        return self.inner.publish(events)


@dataclass
class World:
    """One tenant stack's resources in moto, and the handlers' Services wired to them."""

    services: Services
    titan: MiniLMTitanServer
    opensearch: FakeOpenSearchServer
    queue_url: str

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
        environment: int = 0,
    ) -> tuple[int, Any]:
        """An HTTP request as API Gateway's REST proxy integration hands it to the route's function
        (in Lambda execution environment `environment`: two numbers are two concurrent environments)."""
        found = apigateway.match(method, path.split("?", 1)[0])
        assert found.route is not None, f"no route for {method} {path}"
        event = apigateway.proxy_event(
            found.route, found.path_parameters, method, path,
            {"Content-Type": "application/json", **(headers or {})},
            json.dumps(body) if body is not None else None, "203.0.113.7",
        )
        return self.answer(invoke(found.route.function, event, environment=environment))

    def send(self, event: dict[str, Any]) -> tuple[int, Any]:
        """A sam-style proxy event, as it is, to the function of its route."""
        found = apigateway.match(event["httpMethod"], event["path"])
        assert found.route is not None
        return self.answer(invoke(found.route.function, event))

    @staticmethod
    def answer(result: dict[str, Any]) -> tuple[int, Any]:
        return int(result["statusCode"]), json.loads(result["body"]) if result.get("body") else None

    def delivered(self) -> list[dict[str, Any]]:
        """The envelopes EventBridge delivered to the indexer rule's target, removed from the queue."""
        sqs = aws_session().client("sqs")
        out = []
        while messages := sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages"):
            for message in messages:
                envelope = json.loads(message["Body"])
                # moto leaves out the envelope's account; EventBridge always sends it.
                envelope.setdefault("account", "123456789012")
                out.append(envelope)
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return out

    def index(self, envelopes: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The indexer function run on each delivered event (or on `envelopes`, an EventBridge retry)."""
        return [invoke("indexer", envelope) for envelope in (self.delivered() if envelopes is None else envelopes)]

    def items(self) -> list[dict[str, Any]]:
        client = aws_session().client("dynamodb")
        found: list[dict[str, Any]] = []
        request: dict[str, Any] = {"TableName": TABLE}
        while True:
            page = client.scan(**request)
            found += page["Items"]
            if "LastEvaluatedKey" not in page:
                return found
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def lesson_documents(self) -> list[dict[str, Any]]:
        return list(self.opensearch.indexes[INDEX_NAME].docs.values())


def use_moto_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and no profile or endpoint override, so every client talks to moto."""
    for name, value in AWS_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)


@pytest.fixture
def world(minilm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    use_moto_environment(monkeypatch)
    with mock_aws():
        built = _world(minilm, tmp_path)
        set_services(built.services)
        try:
            yield built
        finally:
            set_services(None)
            built.services.close()


def _world(minilm: Any, data_dir: Path, **settings_overrides: Any) -> World:
    dynamodb = aws_session().client("dynamodb")
    dynamodb.create_table(TableName=TABLE, **table_key_schema_from_template())
    ttl = table_ttl_attribute_from_template()
    if ttl:
        dynamodb.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl})
    dynamodb.create_table(TableName=KEY_TABLE, **KEY_TABLE_SCHEMA)
    key_arn = aws_session().client("kms").create_key(Description="agentmem acme")["KeyMetadata"]["Arn"]
    hmac_arn = aws_session().client("kms").create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")[
        "KeyMetadata"]["Arn"]

    events, sqs = aws_session().client("events"), aws_session().client("sqs")
    events.create_event_bus(Name=BUS)
    queue_url = sqs.create_queue(QueueName="indexer")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    # The indexer's rule as the stack builds it (infra/constructs/event_bus.py), from the catalog.
    pattern = {"source": [EVENT_SOURCE], "detail-type": list(by_name("indexer").consumes)}
    events.put_rule(Name="indexer", EventBusName=BUS, EventPattern=json.dumps(pattern))
    events.put_targets(Rule="indexer", EventBusName=BUS, Targets=[{"Id": "indexer", "Arn": queue_arn}])

    settings = load_settings(
        backend="aws", tenant=TENANT, table_name=TABLE, key_table_name=KEY_TABLE, event_bus_name=BUS,
        kms_key_arn=key_arn, hmac_key_arn=hmac_arn, opensearch_endpoint=COLLECTION_ENDPOINT,
        vector_index=INDEX_NAME, embedding_dimension=DIMENSION,
        enabled_agents=["auditor", "writer"], data_dir=data_dir, **settings_overrides,
    )
    # botocore's own retries are off so a failing model fails in milliseconds; what is under test is what
    # the adapter and retrieve do with the failure, not botocore's backoff.
    bedrock = aws_session().client("bedrock-runtime", config=Config(retries={"total_max_attempts": 1}))
    titan = MiniLMTitanServer(minilm)
    titan.attach(bedrock)
    embedder = BedrockEmbedder(settings.embedding_model_id, settings.embedding_dimension, client=bedrock)
    # Store, bus, vector index and the idempotency layer: built by the wiring from the settings alone.
    services = build_services(settings, embedder=embedder, pii_detector=RegexPiiDetector())
    opensearch = FakeOpenSearchServer(INDEX_NAME, DIMENSION)
    opensearch.mount_on(services.memory.vectors.inner.client)  # type: ignore[attr-defined]
    return World(services, titan, opensearch, queue_url)


def run_with_feedback(
    world: World, agent: str = "auditor", text: str = AUDIT, comment: str = COMMENT, key: str | None = None,
    rating: str = "down",
) -> tuple[str, dict[str, Any]]:
    status, answer = world.call("POST", f"/v1/agents/{agent}/retrieve", {"input": text})
    assert status == 200, answer
    run_id = answer["runId"]
    assert world.call("PUT", f"/v1/agents/{agent}/runs/{run_id}/output", {"output": OUTPUT})[0] == 204
    status, receipt = world.call(
        "POST", f"/v1/agents/{agent}/runs/{run_id}/feedback", {"rating": rating, "comment": comment},
        {"Idempotency-Key": key} if key else None,
    )
    assert status == 202, receipt
    return run_id, receipt


def lessons(world: World, text: str, agent: str = "auditor") -> list[dict[str, Any]]:
    status, answer = world.call("POST", f"/v1/agents/{agent}/retrieve", {"input": text})
    assert status == 200 and answer["degraded"] == [], answer
    return list(answer["lessons"])


def test_a_lesson_reaches_a_similar_run_through_eventbridge_and_opensearch_but_not_an_unrelated_one(world):
    _, receipt = run_with_feedback(world)

    assert world.index() == [{"status": "indexed", "memoryId": receipt["memoryId"]}]
    status, answer = world.call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})
    assert status == 200 and answer["memory"] == "enabled" and answer["degraded"] == []
    assert [lesson["memoryId"] for lesson in answer["lessons"]] == [receipt["memoryId"]]
    assert answer["lessons"][0]["similarity"] >= world.services.settings.effective_eligibility_threshold
    system = answer["messages"][0]
    assert "Lessons from past runs" in system["content"] and COMMENT in system["content"]
    assert lessons(world, UNRELATED) == []
    # The indexer embedded the lesson's digest through Bedrock, and OpenSearch holds the tenant's vector.
    assert any(COMMENT in text for text in world.titan.texts)
    (document,) = world.lesson_documents()
    assert document["tenant"] == TENANT and document["agentId"] == "auditor"
    assert document["memoryId"] == receipt["memoryId"]


def test_lessons_never_cross_agents(world):
    run_with_feedback(world, agent="auditor")
    world.index()

    status, answer = world.call("POST", "/v1/agents/writer/retrieve", {"input": AUDIT})
    assert status == 200 and answer["memory"] == "enabled" and answer["lessons"] == []
    assert [lesson["text"] for lesson in lessons(world, AUDIT, agent="auditor")] != []


def test_a_disabled_agent_gets_no_memory_and_its_feedback_is_refused_with_403(world):
    status, answer = world.call("POST", "/v1/agents/stranger/retrieve", {"input": AUDIT})
    assert status == 200 and answer["memory"] == "disabled" and answer["lessons"] == []

    status, error = world.call(
        "POST", f"/v1/agents/stranger/runs/{answer['runId']}/feedback", {"rating": "down"}, {"Idempotency-Key": "k-1"}
    )
    assert status == 403 and error["error"]["code"] == "memory_disabled"
    assert world.delivered() == []
    items = world.items()
    assert [i["sk"]["S"] for i in items if i["sk"]["S"].startswith(("FB#", "MEM#"))] == []
    assert idempotency_partition(TENANT) not in {i["pk"]["S"] for i in items}


def test_the_same_idempotency_key_replays_the_same_answer_and_makes_one_memory(world):
    status, answer = world.call("POST", "/v1/agents/auditor/retrieve", {"input": AUDIT})
    run_id = answer["runId"]
    # The sam-style event of events/, sent to this run of this agent.
    event = load_event("feedback/submit_down")
    event["path"] = event["requestContext"]["path"] = f"/v1/agents/auditor/runs/{run_id}/feedback"
    event["pathParameters"] = {"agentId": "auditor", "runId": run_id}
    key = event["headers"]["Idempotency-Key"]

    answers = [world.send(event) for _ in range(3)]
    assert [status for status, _ in answers] == [202] * 3 and answers[1:] == answers[:1] * 2
    first = answers[0][1]
    # Replays while the lesson is pending ask again for it to be indexed; every event names the one memory.
    envelopes = world.delivered()
    assert envelopes and {e["detail"]["memoryId"] for e in envelopes} == {first["memoryId"]}
    assert {r["memoryId"] for r in world.index(envelopes)} == {first["memoryId"]}
    assert len(world.lesson_documents()) == 1
    assert [m["memoryId"] for m in world.call("GET", "/v1/agents/auditor/memories")[1]["items"]] == [first["memoryId"]]
    # powertools' record of the answer, in the tenant's partition of the tenant table.
    (record,) = [i for i in world.items() if i["pk"]["S"] == idempotency_partition(TENANT)]
    assert record["status"]["S"] == "COMPLETED" and json.loads(record["data"]["S"]) == first and key not in str(record)

    reused = dict(event, body=json.dumps({"rating": "up"}))
    status, error = world.send(reused)
    assert status == 409 and error["error"]["code"] == "conflict" and "Idempotency-Key" in error["error"]["message"]

    # Once the record has expired (DynamoDB's TTL removed it), the feedback id derived from the key
    # still gives the same feedback and memory: the service's conditional write guarantees one memory.
    aws_session().client("dynamodb").delete_item(TableName=TABLE, Key={"pk": record["pk"], "sk": record["sk"]})
    assert world.send(event) == (202, first)
    assert len(world.call("GET", "/v1/agents/auditor/memories")[1]["items"]) == 1


def test_a_request_while_the_same_key_is_in_progress_gets_409(world):
    status, answer = world.call("POST", "/v1/agents/auditor/retrieve", {"input": AUDIT})
    path = f"/v1/agents/auditor/runs/{answer['runId']}/feedback"
    body, headers = {"rating": "down", "comment": COMMENT}, {"Idempotency-Key": "review-7"}
    held = HeldBus(world.services.memory.bus)
    world.services.memory.bus = held
    first: list[tuple[int, Any]] = []
    worker = threading.Thread(target=lambda: first.append(world.call("POST", path, body, headers)))
    worker.start()
    try:
        assert held.entered.wait(10)
        # A second Lambda environment takes the retry while the first is still running.
        status, error = world.call("POST", path, body, headers, environment=1)
    finally:
        held.gate.set()
        worker.join(10)

    assert status == 409 and error["error"]["code"] == "conflict"
    assert "still being processed" in error["error"]["message"]
    assert first[0][0] == 202
    assert world.call("POST", path, body, headers) == first[0]


def test_a_replay_publishes_again_a_lesson_whose_first_event_was_lost(world):
    status, answer = world.call("POST", "/v1/agents/auditor/retrieve", {"input": AUDIT})
    path = f"/v1/agents/auditor/runs/{answer['runId']}/feedback"
    body, headers = {"rating": "down", "comment": COMMENT}, {"Idempotency-Key": "review-9"}
    losing = LosingBus(world.services.memory.bus)
    world.services.memory.bus = losing
    status, first = world.call("POST", path, body, headers)
    assert status == 202 and world.delivered() == []  # accepted: the lesson is stored, pending

    losing.losing = False
    assert world.call("POST", path, body, headers) == (202, first)
    assert world.index() == [{"status": "indexed", "memoryId": first["memoryId"]}]
    assert [lesson["memoryId"] for lesson in lessons(world, SIMILAR)] == [first["memoryId"]]
    # Once indexed, a replay is only the stored answer: nothing is published again.
    assert world.call("POST", path, body, headers) == (202, first)
    assert world.delivered() == []


def test_a_deleted_lesson_is_never_retrieved_again_even_when_its_event_is_delivered_again(world):
    _, receipt = run_with_feedback(world)
    envelopes = world.delivered()
    world.index(envelopes)
    assert [lesson["memoryId"] for lesson in lessons(world, SIMILAR)] == [receipt["memoryId"]]

    assert world.call("DELETE", f"/v1/agents/auditor/memories/{receipt['memoryId']}")[0] == 204
    assert lessons(world, SIMILAR) == [] and world.lesson_documents() == []
    # EventBridge delivers at least once: a late copy of the event must not bring the vector back.
    assert world.index(envelopes) == [{"status": "deleted", "memoryId": receipt["memoryId"]}]
    assert lessons(world, SIMILAR) == [] and world.lesson_documents() == []
    assert world.call("GET", "/v1/agents/auditor/memories")[1]["items"] == []


AGREEING = [  # three editors, one teaching, in their own words (domain/teaching.py merges them)
    COMMENT,
    "Do not flag 'trail magic': it is our brand idiom.",
    "'Trail magic' is a brand idiom we use on purpose; don't flag it.",
]


def test_the_wall_groups_near_duplicates_and_marks_a_conflict_and_a_deleted_member_leaves_the_rest(world):
    made = [run_with_feedback(world, comment=c)[1]["memoryId"] for c in AGREEING]
    _, older_up = run_with_feedback(world, comment="Use metric units in every product spec.",
                                    rating="up")
    _, newer_down = run_with_feedback(world, comment="Do not use metric units in product specs.")
    world.index()

    def wall() -> dict[str, dict[str, Any]]:
        items: dict[str, dict[str, Any]] = {}
        query = "?limit=2"  # pages of two: each page still names the whole group
        while query:
            status, page = world.call("GET", f"/v1/agents/auditor/memories{query}")
            assert status == 200 and page["degraded"] == [], page
            items.update({i["memoryId"]: i["group"] for i in page["items"]})
            query = f"?limit=2&cursor={page['nextCursor']}" if page["nextCursor"] else ""
        return items

    groups = wall()
    assert {(groups[m]["groupId"], groups[m]["size"]) for m in made} == {(made[0], 3)}  # the oldest names it
    up, down = older_up["memoryId"], newer_down["memoryId"]
    assert groups[up] == {"groupId": up, "size": 1, "conflictsWith": [down], "overruledBy": down}
    assert groups[down] == {"groupId": down, "size": 1, "conflictsWith": [up], "overruledBy": None}
    assert {lesson["groupId"] for lesson in lessons(world, SIMILAR) if lesson["memoryId"] in made} == {made[0]}

    assert world.call("DELETE", f"/v1/agents/auditor/memories/{made[1]}")[0] == 204
    groups = wall()
    assert made[1] not in groups
    assert {(groups[m]["groupId"], groups[m]["size"]) for m in (made[0], made[2])} == {(made[0], 2)}


def test_importance_multiplies_the_score_but_not_eligibility(world):
    _, receipt = run_with_feedback(world)
    world.index()
    (plain,) = lessons(world, SIMILAR)
    assert plain["score"] == pytest.approx(plain["similarity"], abs=1e-5)

    path = f"/v1/agents/auditor/memories/{receipt['memoryId']}"
    status, memory = world.call("PATCH", path, {"importance": "important"})
    assert status == 200 and memory["importance"] == 1.5
    (important,) = lessons(world, SIMILAR)
    assert important["similarity"] == pytest.approx(plain["similarity"], abs=1e-5)
    assert important["score"] == pytest.approx(plain["similarity"] * 1.5, abs=1e-5)

    world.call("PATCH", path, {"importance": 0})
    (ignored,) = lessons(world, SIMILAR)
    assert ignored["score"] == 0 and ignored["similarity"] == pytest.approx(plain["similarity"], abs=1e-5)


@pytest.mark.parametrize("failure", ["500", "unreachable"])
def test_a_failing_embedder_degrades_retrieve_and_the_retried_event_indexes_the_lesson(world, failure):
    _, receipt = run_with_feedback(world)
    envelopes = world.delivered()
    world.titan.failure = failure

    status, answer = world.call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})
    assert status == 200 and answer["degraded"] == ["embedder"] and answer["lessons"] == []
    with pytest.raises(BackendUnavailable):  # the function fails, so EventBridge retries the event
        world.index(envelopes)
    assert world.call("GET", "/v1/agents/auditor/memories")[1]["items"][0]["status"] == "pending"

    world.titan.failure = None
    assert world.index(envelopes) == [{"status": "indexed", "memoryId": receipt["memoryId"]}]
    assert [lesson["memoryId"] for lesson in lessons(world, SIMILAR)] == [receipt["memoryId"]]


def test_every_key_of_every_item_starts_with_the_tenant(world):
    _, kept = run_with_feedback(world, key="review-1")
    _, dropped = run_with_feedback(world, text=SIMILAR, comment="Another lesson.", key="review-2")
    run_with_feedback(world, agent="writer")
    world.index()
    world.call("PATCH", f"/v1/agents/auditor/memories/{kept['memoryId']}", {"importance": "important"})
    world.call("DELETE", f"/v1/agents/auditor/memories/{dropped['memoryId']}")

    items = world.items()
    partitions = {item["pk"]["S"] for item in items}
    assert len(items) > 10 and idempotency_partition(TENANT) in partitions
    prefix = f"T#{TENANT}#"
    assert [p for p in partitions if not p.startswith(prefix)] == []
    assert [i["gsi1pk"]["S"] for i in items if "gsi1pk" in i and not i["gsi1pk"]["S"].startswith(prefix)] == []
    assert {document["tenant"] for document in world.lesson_documents()} == {TENANT}


def test_the_review_queue_lists_runs_awaiting_a_verdict_and_a_verdict_moves_the_run_out(world):
    judged, receipt = run_with_feedback(world)
    status, answer = world.call("POST", "/v1/agents/auditor/retrieve", {"input": UNRELATED})
    waiting = answer["runId"]

    status, queue = world.call("GET", "/v1/agents/auditor/runs?feedback=none")
    assert status == 200 and [item["runId"] for item in queue["items"]] == [waiting]
    status, down = world.call("GET", "/v1/agents/auditor/runs?feedback=down")
    [item] = down["items"]
    assert item["runId"] == judged and item["verdict"] == "down" and item["output"] == OUTPUT
    assert item["feedback"][0]["memoryId"] == receipt["memoryId"] and item["feedback"][0]["lessonStatus"] == "pending"
    world.index()
    status, every = world.call("GET", "/v1/agents/auditor/runs?limit=1")
    assert [i["runId"] for i in every["items"]] == [waiting] and every["nextCursor"]
    status, rest = world.call("GET", f"/v1/agents/auditor/runs?limit=1&cursor={every['nextCursor']}")
    assert [i["runId"] for i in rest["items"]] == [judged] and rest["nextCursor"] is None
    assert rest["items"][0]["feedback"][0]["lessonStatus"] == "indexed"


def test_erasing_a_user_strips_their_run_text_from_lessons_and_leaves_no_dynamodb_item_holding_it(world):
    run_text = "Plan a kayak loop past the zinc-blue footbridge where the heron colony nests."
    status, answer = world.call("POST", "/v1/agents/auditor/retrieve", {"input": run_text, "userId": "ann"})
    assert status == 200
    run_id = answer["runId"]
    assert world.call("PUT", f"/v1/agents/auditor/runs/{run_id}/output",
                      {"output": "Start below the zinc-blue footbridge."})[0] == 204
    status, receipt = world.call("POST", f"/v1/agents/auditor/runs/{run_id}/feedback",
                                 {"rating": "down", "comment": "Suggest a shorter kayak loop for beginners."})
    assert status == 202
    world.index()
    assert any("zinc-blue" in repr(item) for item in world.items())

    assert world.call("DELETE", "/v1/users/ann")[0] == 204
    world.index()
    assert not [item for item in world.items() if "zinc-blue" in repr(item) or "heron colony" in repr(item)]
    lesson = world.services.memory.store.get_memory(world.services.settings.tenant, "auditor", receipt["memoryId"])
    assert lesson is not None and lesson.digest == "Editor: Suggest a shorter kayak loop for beginners."
    assert lesson.subject is None
