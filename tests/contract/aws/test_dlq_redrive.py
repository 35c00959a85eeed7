"""Redriving the dead-letter queue under moto: events go back on the bus, garbage stays for a person."""

from __future__ import annotations

import json
from typing import Any

from agentmem.adapters.aws.dlq_redrive import redrive_dead_letters
from agentmem.adapters.aws.eventbridge_bus import EventBridgeBus

from tests.contract.conftest import BUS_NAME, aws_client


def _dead_letter(detail_type: str, detail: dict[str, Any]) -> str:
    # What EventBridge puts in a target's dead-letter queue: the event itself.
    return json.dumps({"version": "0", "id": "e-1", "detail-type": detail_type, "source": "agentmem",
                       "account": "123456789012", "time": "2026-11-30T12:00:00Z", "region": "us-east-1",
                       "resources": [], "detail": detail})


def test_dead_events_are_published_again_and_removed_and_unreadable_ones_stay(moto: None) -> None:
    events, sqs = aws_client("events"), aws_client("sqs")
    events.create_event_bus(Name=BUS_NAME)
    consumer = sqs.create_queue(QueueName="consumer")["QueueUrl"]
    consumer_arn = sqs.get_queue_attributes(QueueUrl=consumer, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="indexer", EventBusName=BUS_NAME,
                    EventPattern=json.dumps({"source": ["agentmem"], "detail-type": ["FeedbackSubmitted"]}))
    events.put_targets(Rule="indexer", EventBusName=BUS_NAME, Targets=[{"Id": "q", "Arn": consumer_arn}])
    dlq = sqs.create_queue(QueueName="dead-letters")["QueueUrl"]
    for i in range(3):
        sqs.send_message(QueueUrl=dlq, MessageBody=_dead_letter("FeedbackSubmitted", {"memoryId": f"mem-{i}"}))
    sqs.send_message(QueueUrl=dlq, MessageBody="not an event")

    report = redrive_dead_letters(sqs, dlq, EventBridgeBus(BUS_NAME, client=events))

    assert (report.redriven, report.unreadable, report.failed) == (3, 1, [])
    delivered = []
    while messages := sqs.receive_message(QueueUrl=consumer, MaxNumberOfMessages=10).get("Messages", []):
        for message in messages:
            delivered.append(json.loads(message["Body"])["detail"]["memoryId"])
            sqs.delete_message(QueueUrl=consumer, ReceiptHandle=message["ReceiptHandle"])
    assert sorted(delivered) == ["mem-0", "mem-1", "mem-2"]
    # The unreadable message is still in the queue (invisible until its visibility timeout ends).
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=names)["Attributes"]
    assert sum(int(attributes[name]) for name in names) == 1


def test_a_consumers_dead_letters_go_back_to_its_queue_as_they_were(moto: None) -> None:
    from agentmem.adapters.aws.dlq_redrive import redrive_to_queue

    sqs = aws_client("sqs")
    dlq = sqs.create_queue(QueueName="indexer-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    queue = sqs.create_queue(
        QueueName="indexer", Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn,
                                                                     "maxReceiveCount": 1})}
    )["QueueUrl"]
    bodies = [_dead_letter("FeedbackSubmitted", {"memoryId": f"mem-{i}"}) for i in range(12)]
    for body in bodies:
        sqs.send_message(QueueUrl=dlq, MessageBody=body,
                         MessageAttributes={"origin": {"DataType": "String", "StringValue": "test"}})

    report = redrive_to_queue(sqs, dlq, queue, limit=11)

    assert (report.redriven, report.failed) == (11, [])
    moved = []
    while messages := sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10,
                                          MessageAttributeNames=["All"]).get("Messages", []):
        for message in messages:
            moved.append(message["Body"])
            assert message["MessageAttributes"]["origin"]["StringValue"] == "test"
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    assert len(set(moved)) == len(moved) == 11 and set(moved) <= set(bodies)
    # The one over the limit is still in the dead-letter queue.
    assert len(sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10).get("Messages", [])) == 1
