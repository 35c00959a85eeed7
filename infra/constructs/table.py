"""The tenant's single DynamoDB table."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

PARTITION_KEY = "pk"
SORT_KEY = "sk"
GSI1_NAME = "gsi1"
GSI1_PARTITION_KEY = "gsi1pk"
GSI1_SORT_KEY = "gsi1sk"
TTL_ATTRIBUTE = "ttl"


def keyed_table(
    scope: Construct,
    *,
    key: kms.IKey,
    removal_policy: RemovalPolicy,
    point_in_time_recovery: bool,
    ttl_attribute: str | None = None,
) -> dynamodb.Table:
    """An on-demand `pk`/`sk` table under `key`, with deletion protection when it is retained.

    The tenant table and the key store differ only in point-in-time recovery and TTL (see each).
    """
    return dynamodb.Table(
        scope,
        "Table",
        partition_key=dynamodb.Attribute(name=PARTITION_KEY, type=dynamodb.AttributeType.STRING),
        sort_key=dynamodb.Attribute(name=SORT_KEY, type=dynamodb.AttributeType.STRING),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        encryption=dynamodb.TableEncryption.CUSTOMER_MANAGED,
        encryption_key=key,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=point_in_time_recovery
        ),
        time_to_live_attribute=ttl_attribute,
        removal_policy=removal_policy,
        deletion_protection=removal_policy is RemovalPolicy.RETAIN,
    )


class MemoryTable(Construct):
    """Everything the tenant stores (runs, lessons, transcripts, profiles, vault, idempotency records).

    Every partition key starts with the tenant and then the user or agent
    (`T#acme#U#bob#TH#t1`), so no key condition can reach across users or agents.
    """

    def __init__(self, scope: Construct, construct_id: str, *, key: kms.IKey, removal_policy: RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.table = keyed_table(
            self, key=key, removal_policy=removal_policy, point_in_time_recovery=True, ttl_attribute=TTL_ATTRIBUTE
        )
        self.table.add_global_secondary_index(
            index_name=GSI1_NAME,
            partition_key=dynamodb.Attribute(name=GSI1_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=GSI1_SORT_KEY, type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.ALL,
        )

    @property
    def gsi1_arn(self) -> str:
        return f"{self.table.table_arn}/index/{GSI1_NAME}"
