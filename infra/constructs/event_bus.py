"""The tenant's event bus, the rules that feed the asynchronous functions, and their DLQ.

Failure and redrive path:

1. A target invocation that fails is retried by EventBridge (`RETRY_ATTEMPTS`
   times, for at most `MAX_EVENT_AGE`); an event that still fails, or that the
   bus cannot decrypt, lands in the encrypted SQS DLQ, whose depth raises an alarm.
   Each DLQ message carries the event and the `RULE_ARN`, `TARGET_ARN` and
   `ERROR_CODE` attributes.
2. Every `agentmem` event is also kept in the bus's archive (encrypted with
   the tenant key) for `eventArchiveDays`.
3. After the fix is deployed, replay the failed window to the failed rule only:

       aws events start-replay --replay-name agentmem-<tenant>-<yyyymmddhhmm> \\
         --event-source-arn <EventArchiveArn output> \\
         --event-start-time <first failure> --event-end-time <last failure> \\
         --destination Arn=<EventBusArn output>,FilterArns=<RULE_ARN from the DLQ message>

   The consumers are idempotent (Powertools idempotency records in the table),
   so events of that window that had succeeded are no-ops. Then purge the DLQ.
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
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=key,
            enforce_ssl=True,
            retention_period=Duration.days(14),
            removal_policy=removal_policy,
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
        acknowledge(
            self.dead_letter_queue,
            "AwsSolutions-SQS3",
            "This queue is itself the dead-letter queue of the bus and of every rule target (EventBridge "
            "DeadLetterConfig, which cdk-nag does not recognise as DLQ use); its depth is alarmed and "
            "its messages are redriven by an archive replay.",
        )

    def route(self, spec: FunctionSpec, function: lambda_.IFunction) -> events.Rule | None:
        """Deliver the detail-types `spec` consumes to `function`; None when it consumes none."""
        if not spec.consumes:
            return None
        rule = events.Rule(
            self,
            f"{spec.name.capitalize()}Rule",
            event_bus=self.bus,
            description=f"{', '.join(spec.consumes)} -> {spec.name}",
            event_pattern=events.EventPattern(source=[EVENT_SOURCE], detail_type=list(spec.consumes)),
        )
        rule.add_target(
            targets.LambdaFunction(
                function,
                dead_letter_queue=self.dead_letter_queue,
                retry_attempts=RETRY_ATTEMPTS,
                max_event_age=MAX_EVENT_AGE,
            )
        )
        self.rules[spec.name] = rule
        return rule
