"""The one stack per account and region that tenant stacks lean on; it holds no tenant data."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from infra.constructs.vectors import SHARED_COLLECTION_NAME, CollectionRef, VectorCollection
from infra.nag import acknowledge
from infra.settings import PlatformSettings


class PlatformStack(Stack):
    """API Gateway's account-level CloudWatch role and, when enabled, the shared vector collection.

    The shared collection is encrypted with the platform's customer-managed key
    (rotation on): OpenSearch Serverless shares OCUs among collections with the
    same key, so every shared-mode tenant shares this one key and the OCUs, and
    each keeps its own index, reachable only by its own roles (each tenant
    stack's data access policy). Tenants that need their data under their own
    key use a dedicated collection or S3 Vectors.
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: PlatformSettings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description="agentmem platform (account-wide)", **kwargs)
        if settings.api_gateway_cloud_watch_role:
            role = iam.Role(
                self,
                "ApiGatewayCloudWatchRole",
                assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"),
                description="Lets API Gateway write the stages' execution and access logs",
                managed_policies=[
                    iam.ManagedPolicy.from_aws_managed_policy_name("service-role/AmazonAPIGatewayPushToCloudWatchLogs")
                ],
            )
            # Stages keep logging through this role even if this stack is ever deleted.
            role.apply_removal_policy(RemovalPolicy.RETAIN)
            apigw.CfnAccount(self, "ApiGatewayAccount", cloud_watch_role_arn=role.role_arn)
            acknowledge(
                role,
                "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AmazonAPIGatewayPushToCloudWatchLogs]",
                "The AWS-maintained policy for API Gateway's account-level logging role: API Gateway "
                "creates the execution log groups itself (API-Gateway-Execution-Logs_<id>/<stage>), so "
                "their names are not known to scope a hand-written policy to.",
            )

        self.shared_collection: CollectionRef | None = None
        self.shared_vectors_key: kms.Key | None = None
        if settings.shared_vector_collection:
            self.shared_vectors_key = kms.Key(
                self,
                "SharedVectorsKey",
                alias="alias/agentmem/platform/shared-vectors",
                description="agentmem platform: the shared vector collection at rest",
                enable_key_rotation=True,
                pending_window=Duration.days(30),
                # The collection is retained with the stack's deletion; so is the key it needs.
                removal_policy=RemovalPolicy.RETAIN,
            )
            collection = VectorCollection(
                self,
                "SharedVectors",
                name=SHARED_COLLECTION_NAME,
                policy_prefix="am-shared",
                key=self.shared_vectors_key,
                redundancy=settings.shared_vector_redundancy,
                # Tenants' indexes live in it: never delete it with the stack.
                removal_policy=RemovalPolicy.RETAIN,
                description="agentmem shared vectors: one index per shared-mode tenant",
            )
            self.shared_collection = collection.ref
            CfnOutput(self, "SharedCollectionEndpoint", value=collection.ref.endpoint)
            CfnOutput(self, "SharedCollectionArn", value=collection.ref.arn)
