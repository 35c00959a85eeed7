"""Async work that cannot vanish, in AWS: bus -> the consumer's queue -> the real handler, under moto.

What runs for real: the feedback and indexer handlers (the indexer on SQS batches, as its event
source mapping hands them), powertools' batch processor, every AWS adapter, the queue's redrive
policy (moto's SQS moves a message to the dead-letter queue after `maxReceiveCount` receives, as
SQS does), and `agentmem redrive --stack`, which reads the stack's outputs from CloudFormation
(moto) and moves the dead letters back.

What stands in for AWS infrastructure: `EventSourceMapping` below does what Lambda's SQS event
source mapping does (receive up to 10 messages, hand them to the function as an SQS event, delete
the ones not listed in `batchItemFailures`, leave the rest to come back); it makes the failed ones
visible again at once instead of after the visibility timeout. The stack's queues are declared in
a small CloudFormation template with the stack's output names and the stack's redrive settings
(`infra.constructs.event_bus`); the template tests check the synthesised stack has them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentmem.cli.main import cli
from agentmem.local.lambda_runtime import invoke
from agentmem.wiring import set_services
from click.testing import CliRunner
from moto import mock_aws

from functions.catalog import by_name
from infra.constructs.event_bus import MAX_RECEIVE_COUNT
from tests.contract.conftest import REGION, aws_session
from tests.integration.test_feedback_loop_moto import (
    BUS,
    SIMILAR,
    World,
    _world,
    lessons,
    run_with_feedback,
    use_moto_environment,
)

STACK = "AgentMem-acme"


@dataclass
class EventSourceMapping:
    """Lambda's SQS event source mapping with ReportBatchItemFailures (AWS's poller, not under test)."""

    queue_url: str
    function: str

    def poll(self) -> dict[str, Any] | None:
        """One batch: receive, invoke, delete what succeeded. None when the queue had nothing."""
        sqs = aws_session().client("sqs")
        messages = sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            return None
        arn = sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        event = {"Records": [_record(m, arn) for m in messages]}
        result: dict[str, Any] = invoke(self.function, event)
        failed = {item["itemIdentifier"] for item in result["batchItemFailures"]}
        for message in messages:
            if message["MessageId"] in failed:
                sqs.change_message_visibility(
                    QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
                )
            else:
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return result


def _record(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    return {
        "messageId": message["MessageId"], "receiptHandle": message["ReceiptHandle"], "body": _body(message["Body"]),
        "attributes": message.get("Attributes", {}), "messageAttributes": message.get("MessageAttributes", {}),
        "md5OfBody": message["MD5OfBody"], "eventSource": "aws:sqs", "eventSourceARN": queue_arn,
        "awsRegion": REGION,
    }


def _body(body: str) -> str:
    """The message body; an event moto delivered gets the `account` EventBridge always sends (moto leaves it out)."""
    try:
        event = json.loads(body)
    except ValueError:
        return body
    if isinstance(event, dict) and "detail-type" in event and "source" in event and "detail" in event:
        event.setdefault("account", "123456789012")
        return json.dumps(event)
    return body


@dataclass
class Queued:
    world: World
    indexer: EventSourceMapping
    dead_letter_url: str

    def depth(self, url: str) -> int:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        attributes = aws_session().client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=names)
        return sum(int(attributes["Attributes"][name]) for name in names)


def _stack_template(bus_dead_letters: str) -> str:
    """The stack's consumer queue for the indexer, with the stack's output names and redrive policy."""
    queue_output, dead_letter_output = by_name("indexer").queue_outputs
    return json.dumps({
        "Resources": {
            "IndexerDlq": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "acme-indexer-dlq"}},
            "IndexerQueue": {"Type": "AWS::SQS::Queue", "Properties": {
                "QueueName": "acme-indexer",
                "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": ["IndexerDlq", "Arn"]},
                                  "maxReceiveCount": MAX_RECEIVE_COUNT}}},
        },
        "Outputs": {
            queue_output: {"Value": {"Ref": "IndexerQueue"}},
            dead_letter_output: {"Value": {"Ref": "IndexerDlq"}},
            "DlqUrl": {"Value": bus_dead_letters},
            "EventBusName": {"Value": BUS},
        },
    })


@pytest.fixture
def queued(minilm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Queued]:
    use_moto_environment(monkeypatch)
    with mock_aws():
        world = _world(minilm, tmp_path)
        sqs, events = aws_session().client("sqs"), aws_session().client("events")
        bus_dead_letters = sqs.create_queue(QueueName="acme-bus-dlq")["QueueUrl"]
        cloudformation = aws_session().client("cloudformation")
        cloudformation.create_stack(StackName=STACK, TemplateBody=_stack_template(bus_dead_letters))
        outputs = {o["OutputKey"]: o["OutputValue"]
                   for o in cloudformation.describe_stacks(StackName=STACK)["Stacks"][0]["Outputs"]}
        queue_output, dead_letter_output = by_name("indexer").queue_outputs
        queue_url = outputs[queue_output]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        # The indexer's rule now targets its queue (and no longer the world's stand-in queue).
        events.put_targets(Rule="indexer", EventBusName=BUS, Targets=[{"Id": "indexer", "Arn": queue_arn}])
        set_services(world.services)
        try:
            yield Queued(world, EventSourceMapping(queue_url, "indexer"), outputs[dead_letter_output])
        finally:
            set_services(None)
            world.services.close()


def test_a_failing_indexers_event_reaches_the_dead_letter_queue_and_redrive_makes_it_a_lesson(queued):
    world = queued.world
    world.titan.failure = "500"  # the embedding model is down
    _, receipt = run_with_feedback(world)

    results = [queued.indexer.poll() for _ in range(MAX_RECEIVE_COUNT)]
    assert [len(r["batchItemFailures"]) for r in results if r] == [1] * MAX_RECEIVE_COUNT
    # The next receive finds the message over its maxReceiveCount: SQS moves it to the dead-letter queue.
    assert queued.indexer.poll() is None
    assert queued.depth(queued.dead_letter_url) == 1 and queued.depth(queued.indexer.queue_url) == 0
    (dead,) = aws_session().client("sqs").receive_message(
        QueueUrl=queued.dead_letter_url, VisibilityTimeout=0).get("Messages", [])
    assert json.loads(dead["Body"])["detail"]["memoryId"] == receipt["memoryId"]
    memory = world.services.memory
    assert memory.store.get_memory(memory.tenant, "auditor", receipt["memoryId"]).status == "pending"

    world.titan.failure = None  # fixed
    result = CliRunner().invoke(cli, ["redrive", "--stack", STACK, "--region", REGION], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "indexer: moved 1 event(s) back to its queue" in result.output
    assert queued.depth(queued.dead_letter_url) == 0

    assert queued.indexer.poll() == {"batchItemFailures": []}
    assert [lesson["memoryId"] for lesson in lessons(world, SIMILAR)] == [receipt["memoryId"]]
    assert queued.depth(queued.indexer.queue_url) == 0


def test_only_the_record_that_failed_comes_back_the_rest_of_the_batch_is_done(queued):
    world = queued.world
    _, receipt = run_with_feedback(world)
    sqs = aws_session().client("sqs")
    sqs.send_message(QueueUrl=queued.indexer.queue_url, MessageBody='{"detail-type": "FeedbackSubmitted"}')

    result = queued.indexer.poll()

    assert result is not None and len(result["batchItemFailures"]) == 1
    assert [lesson["memoryId"] for lesson in lessons(world, SIMILAR)] == [receipt["memoryId"]]
    (left,) = sqs.receive_message(QueueUrl=queued.indexer.queue_url).get("Messages", [])
    assert left["MessageId"] == result["batchItemFailures"][0]["itemIdentifier"]
    assert json.loads(left["Body"]) == {"detail-type": "FeedbackSubmitted"}


def test_a_lesson_whose_event_never_arrived_is_indexed_by_the_sweeper_once_it_is_old_enough(queued):
    world = queued.world
    _, receipt = run_with_feedback(world)
    memory = world.services.memory  # the queue's message is never consumed: as if the event were lost

    assert invoke("sweeper", {"detail-type": "Scheduled Event", "source": "aws.events"})["pendingIndexed"] == 0
    assert lessons(world, SIMILAR) == []

    created = memory.store.get_memory(memory.tenant, "auditor", receipt["memoryId"]).created_at
    original, memory.clock = memory.clock, lambda: created + 301
    try:
        assert invoke("sweeper", {"detail-type": "Scheduled Event", "source": "aws.events"})["pendingIndexed"] == 1
    finally:
        memory.clock = original
    assert [lesson["memoryId"] for lesson in lessons(world, SIMILAR)] == [receipt["memoryId"]]


def test_the_sweeper_removes_the_vector_of_a_lesson_past_its_age(queued):
    world = queued.world
    _, receipt = run_with_feedback(world)
    assert queued.indexer.poll() == {"batchItemFailures": []}
    assert [d["memoryId"] for d in world.lesson_documents()] == [receipt["memoryId"]]
    memory = world.services.memory
    created = memory.store.get_memory(memory.tenant, "auditor", receipt["memoryId"]).created_at

    original, memory.clock = memory.clock, lambda: created + (memory.settings.max_memory_age_days + 1) * 86_400
    try:
        result = invoke("sweeper", {"detail-type": "Scheduled Event", "source": "aws.events"})
    finally:
        memory.clock = original

    assert result["lessonsExpired"] == 1 and result["runsPurged"] == 0  # DynamoDB's TTL removes runs
    assert world.lesson_documents() == []
    assert memory.store.get_memory(memory.tenant, "auditor", receipt["memoryId"]).status == "deleted"
