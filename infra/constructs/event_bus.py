"""The tenant's event bus, one SQS queue per consumer with its dead-letter queue, and the schedules.

Delivery: bus rule -> the consumer's queue -> the consumer's function (an event
source mapping with `ReportBatchItemFailures`). Why a queue and not Lambda's
asynchronous invocation: EventBridge invokes a Lambda target asynchronously, and
when the function raises, Lambda retries twice and drops the event; the rule's
dead-letter queue sees only delivery failures. A queue keeps the event until the
function succeeds with it.

Failure and redrive path:

1. A record the function fails on comes back after the queue's visibility
   timeout; after `MAX_RECEIVE_COUNT` receives SQS moves it to the consumer's
   dead-letter queue (encrypted with the tenant key, 14 days), whose depth raises
   an alarm. The message is the EventBridge event itself.
2. After the fix: `agentmem redrive --stack NAME` moves every consumer's
   dead letters back to that consumer's queue (and the bus's dead letters back
   onto the bus). The consumers are idempotent, so a replay does no harm.
3. An event EventBridge cannot deliver to a queue (retried `RETRY_ATTEMPTS` times,
   for at most `MAX_EVENT_AGE`), or that the bus cannot decrypt, lands in the bus's
   own dead-letter queue (alarmed too; `agentmem redrive` publishes it again).
   Each such message carries the `RULE_ARN`, `TARGET_ARN` and `ERROR_CODE` attributes.
4. Every `agentmem` event is also kept in the bus's archive (encrypted with
   the tenant key) for `eventArchiveDays`, for replaying a window to one rule:

       aws events start-replay --replay-name agentmem-<tenant>-<yyyymmddhhmm> \\
         --event-source-arn <EventArchiveArn output> \\
         --event-start-time <first failure> --event-end-time <last failure> \\
         --destination Arn=<EventBusArn output>,FilterArns=<RULE_ARN from the DLQ message>

   Events of that window that had succeeded are no-ops (idempotent consumers).
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from functions.catalog import FunctionSpec
from infra.nag import acknowledge

EVENT_SOURCE = "agentmem"
RETRY_ATTEMPTS = 8
MAX_EVENT_AGE = Duration.hours(6)
# Receives of one message before SQS moves it to the consumer's dead-letter queue.
MAX_RECEIVE_COUNT = 5
# The CDK feature flag (cx-api) that makes an SQS target's grant to events.amazonaws.com same-account only.
EVENTS_TARGET_QUEUE_SAME_ACCOUNT = "@aws-cdk/aws-events:eventsTargetQueueSameAccount"
# AWS's guidance for a queue feeding a function: a visibility timeout of at least six function timeouts.
VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT = 6
DEAD_LETTER_RETENTION = Duration.days(14)


def encrypted_queue(
    scope: Construct, construct_id: str, *, key: kms.IKey, removal_policy: RemovalPolicy, **options: object
) -> sqs.Queue:
    """An SQS queue encrypted with `key`, refusing requests without TLS."""
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.KMS,
        encryption_master_key=key,
        enforce_ssl=True,
        removal_policy=removal_policy,
        **options,  # type: ignore[arg-type]
    )


class ConsumerQueue(Construct):
    """One consumer's queue and its dead-letter queue, both encrypted with the tenant key."""

    def __init__(
        self, scope: Construct, construct_id: str, *, spec: FunctionSpec, key: kms.IKey, removal_policy: RemovalPolicy
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letter_queue = encrypted_queue(
            self, "DeadLetterQueue", key=key, removal_policy=removal_policy, retention_period=DEAD_LETTER_RETENTION
        )
        self.queue = encrypted_queue(
            self,
            "Queue",
            key=key,
            removal_policy=removal_policy,
            visibility_timeout=Duration.seconds(spec.timeout_seconds * VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT),
            # Shorter than the dead-letter queue's: SQS ages a moved message from its first enqueue.
            retention_period=Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(queue=self.dead_letter_queue, max_receive_count=MAX_RECEIVE_COUNT),
        )
        acknowledge(
            self.dead_letter_queue,
            "AwsSolutions-SQS3",
            f"This is the dead-letter queue of {spec.name}'s queue; its depth is alarmed and "
            "`agentmem redrive --stack` moves its messages back to the queue.",
        )


class TenantEventBus(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        tenant: str,
        key: kms.IKey,
        archive_days: int,
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        # Without this flag, an SQS target on an encrypted queue grants events.amazonaws.com the tenant key
        # with no condition at all (aws-events-targets' SqsQueue.bind); with it, only for this account
        # (aws:SourceAccount). Set on this construct, before it has children, so it holds whatever the app's
        # context says (cdk.json names no feature flags).
        self.node.set_context(EVENTS_TARGET_QUEUE_SAME_ACCOUNT, True)
        self.dead_letter_queue = encrypted_queue(
            self, "DeadLetterQueue", key=key, removal_policy=removal_policy, retention_period=DEAD_LETTER_RETENTION
        )
        self.bus = events.EventBus(
            self,
            "Bus",
            event_bus_name=f"agentmem-{tenant}",
            description=f"agentmem tenant {tenant}",
            kms_key=key,
            # Events the bus cannot encrypt or decrypt land here too.
            dead_letter_queue=self.dead_letter_queue,
        )
        # The dead-letter queue of the bus itself (events it cannot encrypt or decrypt).
        self.dead_letter_queue.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowBusDeadLetters",
                principals=[iam.ServicePrincipal("events.amazonaws.com")],
                actions=["sqs:SendMessage"],
                resources=[self.dead_letter_queue.queue_arn],
                conditions={"ArnEquals": {"aws:SourceArn": self.bus.event_bus_arn}},
            )
        )
        # The L1 archive: the L2 adds a key-policy statement naming the bus by its ARN attribute,
        # which closes a dependency cycle (key -> bus -> DLQ -> key). The key policy's EventBridge
        # statement (same account) already covers the archive.
        self.archive = events.CfnArchive(
            self,
            "Archive",
            source_arn=self.bus.event_bus_arn,
            archive_name=f"agentmem-{tenant}",
            description=f"Every agentmem event of tenant {tenant}, for replays after a failure",
            event_pattern={"source": [EVENT_SOURCE]},
            retention_days=archive_days,
            kms_key_identifier=key.key_arn,
        )
        self.rules: dict[str, events.Rule] = {}
        self.consumer_queues: dict[str, ConsumerQueue] = {}
        self.schedules: dict[str, events.Rule] = {}
        acknowledge(
            self.dead_letter_queue,
            "AwsSolutions-SQS3",
            "This queue is itself the dead-letter queue of the bus and of every rule target (EventBridge "
            "DeadLetterConfig, which cdk-nag does not recognise as DLQ use); its depth is alarmed and "
            "`agentmem redrive --stack` publishes its messages again.",
        )

    def route(self, spec: FunctionSpec, key: kms.IKey, removal_policy: RemovalPolicy) -> ConsumerQueue | None:
        """The queue the detail-types `spec` consumes are delivered to; None when it consumes none.

        The function reads the queue through an event source mapping
        (`TenantFunctions.consume_from`).
        """
        if not spec.consumes:
            return None
        consumer = ConsumerQueue(self, f"{spec.title}Queue", spec=spec, key=key, removal_policy=removal_policy)
        rule = events.Rule(
            self,
            f"{spec.name.capitalize()}Rule",
            event_bus=self.bus,
            description=f"{', '.join(spec.consumes)} -> {spec.name}'s queue",
            event_pattern=events.EventPattern(source=[EVENT_SOURCE], detail_type=list(spec.consumes)),
        )
        rule.add_target(
            targets.SqsQueue(
                consumer.queue,
                dead_letter_queue=self.dead_letter_queue,
                retry_attempts=RETRY_ATTEMPTS,
                max_event_age=MAX_EVENT_AGE,
            )
        )
        self.rules[spec.name] = rule
        self.consumer_queues[spec.name] = consumer
        return consumer

    def schedule(self, spec: FunctionSpec, function: lambda_.IFunction) -> events.Rule | None:
        """Invoke `function` on `spec.schedule`; None when it has none.

        No retries and no dead-letter queue: a missed run is made up by the next one.
        """
        if spec.schedule is None:
            return None
        rule = events.Rule(
            self,
            f"{spec.title}Schedule",
            description=f"{spec.schedule} -> {spec.name}",
            schedule=events.Schedule.expression(spec.schedule),
        )
        rule.add_target(targets.LambdaFunction(function, retry_attempts=0))
        self.schedules[spec.name] = rule
        return rule
