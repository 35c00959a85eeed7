"""Async delivery in the synthesised tenant stack: bus rule -> queue -> function, dead letters alarmed.

Every consumer in functions/catalog.py gets its own queue and dead-letter queue (encrypted with the
tenant key), an event source mapping that reports failed records one by one, an alarm on its
dead-letter queue, and the stack outputs `agentmem redrive --stack` reads. Scheduled functions get
their schedule rule.
"""

from __future__ import annotations

from typing import Any

import pytest
from infra_fixtures import Synthesised
from test_infra_tenant_stack import TENANTS, catalog_functions_by_logical_id, data_key_id, logical_id_of, stack

from functions.catalog import FUNCTIONS
from infra.constructs.event_bus import MAX_RECEIVE_COUNT, VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT

CONSUMERS = [spec for spec in FUNCTIONS if spec.consumes]


def consumer_queues(synthesised: Synthesised, tenant: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """{function name: (queue logical id, queue)} for the queues the bus rules deliver to."""
    functions = catalog_functions_by_logical_id(synthesised, tenant)
    queues = synthesised.resources(stack(tenant), "AWS::SQS::Queue")
    mappings = synthesised.resources(stack(tenant), "AWS::Lambda::EventSourceMapping")
    found = {}
    for mapping in mappings.values():
        queue_id = logical_id_of(mapping["Properties"]["EventSourceArn"])
        found[functions[logical_id_of(mapping["Properties"]["FunctionName"])]] = (queue_id, queues[queue_id])
    return found


def test_every_consumer_is_fed_by_its_own_queue_reporting_failed_records_one_by_one(synthesised: Synthesised):
    for tenant in TENANTS:
        mappings = synthesised.resources(stack(tenant), "AWS::Lambda::EventSourceMapping")
        functions = catalog_functions_by_logical_id(synthesised, tenant)
        by_function = {functions[logical_id_of(m["Properties"]["FunctionName"])]: m["Properties"]
                       for m in mappings.values()}

        assert set(by_function) == {spec.name for spec in CONSUMERS}
        for properties in by_function.values():
            assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
            assert 1 <= properties["BatchSize"] <= 10
        assert len({logical_id_of(p["EventSourceArn"]) for p in by_function.values()}) == len(CONSUMERS)


@pytest.mark.parametrize("tenant", TENANTS)
def test_each_rule_delivers_its_detail_types_to_its_consumers_queue_with_the_bus_dlq_behind_it(
    synthesised: Synthesised, tenant: str
) -> None:
    _, bus = next(iter(synthesised.resources(stack(tenant), "AWS::Events::EventBus").items()))
    bus_dlq = logical_id_of(bus["Properties"]["DeadLetterConfig"]["Arn"])
    queues = {queue_id: name for name, (queue_id, _) in consumer_queues(synthesised, tenant).items()}
    delivered: dict[str, list[str]] = {}
    for rule in synthesised.resources(stack(tenant), "AWS::Events::Rule").values():
        properties = rule["Properties"]
        if "ScheduleExpression" in properties:
            continue
        [target] = properties["Targets"]
        assert properties["EventPattern"]["source"] == ["agentmem"]
        assert logical_id_of(target["DeadLetterConfig"]["Arn"]) == bus_dlq
        assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 1
        delivered[queues[logical_id_of(target["Arn"])]] = properties["EventPattern"]["detail-type"]

    assert delivered == {spec.name: list(spec.consumes) for spec in CONSUMERS}


@pytest.mark.parametrize("tenant", TENANTS)
def test_each_consumer_queue_has_an_encrypted_dead_letter_queue_after_a_few_receives(
    synthesised: Synthesised, tenant: str
) -> None:
    data_key = data_key_id(synthesised, tenant)
    queues = synthesised.resources(stack(tenant), "AWS::SQS::Queue")
    for spec in CONSUMERS:
        _, queue = consumer_queues(synthesised, tenant)[spec.name]
        properties = queue["Properties"]
        redrive = properties["RedrivePolicy"]
        dead_letters = queues[logical_id_of(redrive["deadLetterTargetArn"])]["Properties"]

        assert redrive["maxReceiveCount"] == MAX_RECEIVE_COUNT
        assert properties["VisibilityTimeout"] == spec.timeout_seconds * VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT
        assert logical_id_of(properties["KmsMasterKeyId"]) == data_key
        assert logical_id_of(dead_letters["KmsMasterKeyId"]) == data_key
        assert dead_letters["MessageRetentionPeriod"] == 14 * 24 * 3600
        assert properties["MessageRetentionPeriod"] < dead_letters["MessageRetentionPeriod"]


@pytest.mark.parametrize("tenant", TENANTS)
def test_each_dead_letter_queue_has_an_alarm_on_its_depth_that_notifies_the_topic(
    synthesised: Synthesised, tenant: str
) -> None:
    queues = synthesised.resources(stack(tenant), "AWS::SQS::Queue")
    consumer_dlqs = {
        logical_id_of(queue["Properties"]["RedrivePolicy"]["deadLetterTargetArn"])
        for _, queue in consumer_queues(synthesised, tenant).values()
    }
    _, bus = next(iter(synthesised.resources(stack(tenant), "AWS::Events::EventBus").items()))
    every_dlq = consumer_dlqs | {logical_id_of(bus["Properties"]["DeadLetterConfig"]["Arn"])}
    (topic_id,) = synthesised.resources(stack(tenant), "AWS::SNS::Topic")
    alarmed = set()
    for alarm in synthesised.resources(stack(tenant), "AWS::CloudWatch::Alarm").values():
        properties = alarm["Properties"]
        if properties.get("MetricName") != "ApproximateNumberOfMessagesVisible":
            continue
        [dimension] = properties["Dimensions"]
        queue_name = dimension["Value"]["Fn::GetAtt"]
        assert queue_name[1] == "QueueName" and queue_name[0] in queues
        assert properties["Threshold"] == 0 and properties["ComparisonOperator"] == "GreaterThanThreshold"
        assert [logical_id_of(action) for action in properties["AlarmActions"]] == [topic_id]
        alarmed.add(queue_name[0])

    assert alarmed == every_dlq


@pytest.mark.parametrize("tenant", TENANTS)
def test_a_consumer_may_read_its_own_queue_only_and_decrypt_only_through_sqs(
    synthesised: Synthesised, tenant: str
) -> None:
    functions = catalog_functions_by_logical_id(synthesised, tenant)
    lambdas = synthesised.resources(stack(tenant), "AWS::Lambda::Function")
    role_of = {functions[fid]: logical_id_of(lambdas[fid]["Properties"]["Role"]) for fid in functions}
    queues = consumer_queues(synthesised, tenant)
    policies = synthesised.resources(stack(tenant), "AWS::IAM::Policy")
    for name, role_id in role_of.items():
        statements = [
            statement
            for policy in policies.values()
            if role_id in [logical_id_of(r) for r in policy["Properties"]["Roles"]]
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        ]
        sqs = [s for s in statements if any(str(a).startswith("sqs:") for a in _list(s["Action"]))]
        if name not in queues:
            assert sqs == [], f"{name} consumes nothing but may touch a queue"
            continue
        (statement,) = sqs
        assert "sqs:SendMessage" not in _list(statement["Action"])
        assert [logical_id_of(r) for r in _list(statement["Resource"])] == [queues[name][0]]
        via_sqs = [s for s in statements if s.get("Condition", {}).get("StringEquals", {}).get("kms:ViaService")]
        assert [_list(s["Action"]) for s in via_sqs] == [["kms:Decrypt"]]


def test_the_stack_outputs_what_redrive_needs_for_every_consumer(synthesised: Synthesised):
    for tenant in TENANTS:
        outputs = synthesised.template(stack(tenant))["Outputs"]
        queues = consumer_queues(synthesised, tenant)
        for spec in CONSUMERS:
            queue_output, dead_letter_output = spec.queue_outputs
            queue_id, queue = queues[spec.name]
            assert logical_id_of(outputs[queue_output]["Value"]) == queue_id
            assert logical_id_of(outputs[dead_letter_output]["Value"]) == logical_id_of(
                queue["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]
            )
        assert {"DlqUrl", "EventBusName"} <= set(outputs)


def test_each_scheduled_function_has_its_schedule_rule(synthesised: Synthesised):
    scheduled = {spec.name: spec.schedule for spec in FUNCTIONS if spec.schedule}
    assert scheduled, "the catalog schedules the sweeper"
    for tenant in TENANTS:
        functions = catalog_functions_by_logical_id(synthesised, tenant)
        found = {}
        for rule in synthesised.resources(stack(tenant), "AWS::Events::Rule").values():
            properties = rule["Properties"]
            if "ScheduleExpression" in properties:
                [target] = properties["Targets"]
                found[functions[logical_id_of(target["Arn"])]] = properties["ScheduleExpression"]
        assert found == scheduled


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
