"""The tenant's KMS keys: one symmetric CMK for everything at rest, one HMAC key."""

from __future__ import annotations

from aws_cdk import Aws, Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct


def log_group_prefix(tenant: str) -> str:
    """Every log group of a tenant's stack is named under this prefix."""
    return f"/agentmem/{tenant}/"


class TenantKeys(Construct):
    """`data_key` encrypts the tenant's table, bus, archive, queue, topic and logs, and is the
    root of the per-user data keys (GenerateDataKey/Decrypt with a tenant+user encryption
    context). `hmac_key` (HMAC_256, GenerateMac) keys the hashes inside PII tokens.

    Nothing outside this tenant's stack is granted either key.
    """

    def __init__(self, scope: Construct, construct_id: str, *, tenant: str, removal_policy: RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.data_key = kms.Key(
            self,
            "DataKey",
            alias=f"alias/agentmem/{tenant}/data",
            description=f"agentmem tenant {tenant}: data at rest and per-user data keys",
            enable_key_rotation=True,
            pending_window=Duration.days(30),
            removal_policy=removal_policy,
        )
        # HMAC keys cannot rotate automatically; the hashes they key must stay
        # stable for a thread's tokens to keep matching.
        self.hmac_key = kms.Key(
            self,
            "HmacKey",
            alias=f"alias/agentmem/{tenant}/pii-hmac",
            description=f"agentmem tenant {tenant}: HMAC for PII token thread hashes",
            key_spec=kms.KeySpec.HMAC_256,
            key_usage=kms.KeyUsage.GENERATE_VERIFY_MAC,
            pending_window=Duration.days(30),
            removal_policy=removal_policy,
        )
        self._allow_service_encryption(tenant)

    def _allow_service_encryption(self, tenant: str) -> None:
        same_account = {"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}}
        # EventBridge encrypts the bus, its archive and the events it sends to the SQS DLQ;
        # CloudWatch publishes alarm notifications to the encrypted SNS topic.
        for sid, service, actions in (
            ("AllowEventBridge", "events.amazonaws.com", ["kms:DescribeKey", "kms:GenerateDataKey", "kms:Decrypt"]),
            ("AllowCloudWatchAlarms", "cloudwatch.amazonaws.com", ["kms:GenerateDataKey*", "kms:Decrypt"]),
        ):
            self.data_key.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=sid,
                    principals=[iam.ServicePrincipal(service)],
                    actions=actions,
                    resources=["*"],  # in a key policy "*" means this key
                    conditions=same_account,
                )
            )
        self.data_key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchLogs",
                principals=[iam.ServicePrincipal(f"logs.{Aws.REGION}.amazonaws.com")],
                actions=["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
                resources=["*"],
                conditions={
                    "ArnLike": {
                        "kms:EncryptionContext:aws:logs:arn": (
                            f"arn:{Aws.PARTITION}:logs:{Aws.REGION}:{Aws.ACCOUNT_ID}:"
                            f"log-group:{log_group_prefix(tenant)}*"
                        )
                    }
                },
            )
        )
