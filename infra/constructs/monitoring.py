"""The tenant's alarms (to one encrypted SNS topic) and its CloudWatch dashboard."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.constructs.functions import construct_name
from infra.settings import MonitoringLevel

PERIOD = Duration.minutes(5)


class TenantMonitoring(Construct):
    """Alarms: each DLQ's depth > 0 (the bus's, each consumer's), each function's Errors and Throttles,
    API 5XXError and p99 Latency.

    Alarms notify `alarm_topic`; subscribe the on-call address or chat hook to it. With `level`
    MINIMAL (a CloudWatch alarm costs $0.10 a month, a dashboard $3) only what catches lost work
    remains: the dead-letter queues (a consumer's failures end in its own) and API 5xx (an API
    function's error is a 5xx); no per-function, throttle or latency alarms, no dashboard.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        tenant: str,
        key: kms.IKey,
        functions: Mapping[str, lambda_.IFunction],
        api: apigw.RestApi,
        dead_letter_queue: sqs.IQueue,
        table: dynamodb.ITable,
        latency_threshold_ms: int,
        consumer_dead_letter_queues: Mapping[str, sqs.IQueue] | None = None,
        level: MonitoringLevel = MonitoringLevel.FULL,
    ) -> None:
        super().__init__(scope, construct_id)
        self.alarm_topic = sns.Topic(
            self, "AlarmTopic", display_name=f"agentmem {tenant} alarms", master_key=key, enforce_ssl=True
        )
        self._action = cloudwatch_actions.SnsAction(self.alarm_topic)
        self._tenant = tenant
        self.alarms: list[cloudwatch.Alarm] = []

        dlq_depth = dead_letter_queue.metric_approximate_number_of_messages_visible(
            period=Duration.minutes(1), statistic="Maximum"
        )
        self._alarm(
            "DeadLetterQueueDepth",
            dlq_depth,
            threshold=0,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            description="Events the bus could not deliver wait in its DLQ: fix, then `agentmem redrive --stack`.",
        )
        full = level is MonitoringLevel.FULL
        consumer_depths = []
        for name, queue in (consumer_dead_letter_queues or {}).items():
            depth = queue.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(1), statistic="Maximum"
            )
            consumer_depths.append(depth.with_(label=f"{name} DLQ"))
            self._alarm(
                f"{construct_name(name)}DeadLetterQueueDepth",
                depth,
                threshold=0,
                comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                description=f"{name} failed on events every time it received them: they wait in its "
                "dead-letter queue. Fix, then `agentmem redrive --stack`.",
            )
        for name, function in functions.items():
            # MINIMAL: a consumer's failures end in its dead-letter queue (alarmed above), an API
            # function's in the API's 5xx (alarmed below).
            if not full:
                continue
            self._alarm(
                f"{construct_name(name)}Errors",
                function.metric_errors(period=PERIOD, statistic="Sum"),
                threshold=1,
                description=f"{name} raised errors.",
            )
            self._alarm(
                f"{construct_name(name)}Throttles",
                function.metric_throttles(period=PERIOD, statistic="Sum"),
                threshold=1,
                description=f"{name} was throttled (reserved concurrency or the account limit).",
            )
        server_errors = api.metric_server_error(period=PERIOD, statistic="Sum")
        self._alarm("Api5xx", server_errors, threshold=1, description="The API answered 5XX.")
        self.dashboard: cloudwatch.Dashboard | None = None
        if not full:
            return
        latency_p99 = api.metric_latency(period=PERIOD, statistic="p99")
        self._alarm(
            "ApiLatencyP99",
            latency_p99,
            threshold=latency_threshold_ms,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=3,
            datapoints_to_alarm=2,
            description=f"API p99 latency above {latency_threshold_ms} ms.",
        )

        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=f"agentmem-{tenant}")
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="API requests and errors",
                left=[api.metric_count(period=PERIOD), api.metric_client_error(period=PERIOD), server_errors],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="API latency",
                left=[api.metric_latency(period=PERIOD, statistic="p50"), latency_p99],
                width=12,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Function errors",
                left=[f.metric_errors(period=PERIOD, label=n) for n, f in functions.items()],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Function duration p99",
                left=[f.metric_duration(period=PERIOD, statistic="p99", label=n) for n, f in functions.items()],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Function throttles",
                left=[f.metric_throttles(period=PERIOD, label=n) for n, f in functions.items()],
                width=8,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(title="DLQ depth", left=[dlq_depth, *consumer_depths], width=8),
            cloudwatch.GraphWidget(
                title="Table capacity",
                left=[table.metric_consumed_read_capacity_units(), table.metric_consumed_write_capacity_units()],
                width=8,
            ),
            cloudwatch.AlarmStatusWidget(title="Alarms", alarms=list(self.alarms), width=8),
        )

    def _alarm(
        self,
        construct_id: str,
        metric: cloudwatch.IMetric,
        *,
        threshold: float,
        description: str,
        comparison: cloudwatch.ComparisonOperator = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluation_periods: int = 1,
        datapoints_to_alarm: int | None = None,
    ) -> None:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_name=f"agentmem-{self._tenant}-{construct_id}",
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=datapoints_to_alarm,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(self._action)
        self.alarms.append(alarm)
