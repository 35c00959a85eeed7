"""OpenSearch Serverless: the vector collections and each tenant's index in one.

Two of the three vector modes (tenant setting `vectorCollection`; the third, `s3vectors`, is
infra/constructs/s3vectors.py):

- `dedicated`: the tenant stack owns a VECTORSEARCH collection whose encryption
  policy names the tenant's CMK. A collection with its own KMS key gets its own
  OCUs (at least 1 indexing + 1 search with redundancy off).
- `shared`: the platform stack owns one collection (the platform's CMK); every tenant
  stack adds its own index to it and a data access policy scoped to
  `index/<collection>/<tenant index>` for that tenant's roles only.

Either way the index holds vectors, ids and filter fields only; see
`agentmem.adapters.aws.vector_mapping`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agentmem.adapters.aws.vector_mapping import index_body
from aws_cdk import CustomResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_opensearchserverless as aoss
from constructs import Construct

from infra.constructs.functions import ARCHITECTURE, RUNTIME, lambda_role, tenant_log_group

INDEX_HANDLER_DIR = Path(__file__).resolve().parent.parent / "custom_resources" / "vector_index"
INDEX_RESOURCE_TYPE = "Custom::VectorIndex"
SHARED_COLLECTION_NAME = "agentmem-shared"

READ_PERMISSIONS = ("aoss:DescribeIndex", "aoss:ReadDocument")
WRITE_PERMISSIONS = ("aoss:DescribeIndex", "aoss:ReadDocument", "aoss:WriteDocument")
ADMIN_PERMISSIONS = ("aoss:CreateIndex", "aoss:DescribeIndex", "aoss:UpdateIndex", "aoss:DeleteIndex")


@dataclass(frozen=True)
class CollectionRef:
    """What a tenant stack needs to know of a collection, wherever it lives."""

    name: str
    arn: str
    endpoint: str


@dataclass(frozen=True)
class OpenSearchAccess:
    """`aoss:APIAccessAll` on the collection; the collection's data access policy narrows it to the tenant's index."""

    collection_arn: str

    def statements(self, *, write: bool) -> list[iam.PolicyStatement]:
        return [iam.PolicyStatement(actions=["aoss:APIAccessAll"], resources=[self.collection_arn])]


def dedicated_collection_name(tenant: str) -> str:
    return f"agentmem-{tenant}"


class VectorCollection(Construct):
    """A VECTORSEARCH collection with its encryption and network policies.

    `key=None` would encrypt with an AWS-owned key; agentmem always passes a
    customer-managed one (the tenant's, or the platform's for the shared collection). The
    network policy allows the public endpoint: every request must still be
    SigV4-signed by a principal a data access policy names; a VPC endpoint
    would put every function in a VPC with its ENIs and NAT costs.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        name: str,
        policy_prefix: str,
        key: kms.IKey | None,
        redundancy: bool,
        removal_policy: RemovalPolicy,
        description: str,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        rules = [{"ResourceType": "collection", "Resource": [f"collection/{name}"]}]
        encryption: dict[str, object] = {"Rules": rules, "AWSOwnedKey": key is None}
        if key is not None:
            encryption["KmsARN"] = key.key_arn
        encryption_policy = aoss.CfnSecurityPolicy(
            self,
            "EncryptionPolicy",
            name=f"{policy_prefix}-enc",
            type="encryption",
            description=f"{name}: encryption at rest",
            policy=stack.to_json_string(encryption),
        )
        network_policy = aoss.CfnSecurityPolicy(
            self,
            "NetworkPolicy",
            name=f"{policy_prefix}-net",
            type="network",
            description=f"{name}: SigV4-authenticated access to the collection endpoint",
            policy=json.dumps([{"Rules": rules, "AllowFromPublic": True}], separators=(",", ":")),
        )
        self.collection = aoss.CfnCollection(
            self,
            "Collection",
            name=name,
            type="VECTORSEARCH",
            description=description,
            standby_replicas="ENABLED" if redundancy else "DISABLED",
        )
        # A collection can only be created once an encryption policy covers its name.
        self.collection.add_resource_dependency(encryption_policy)
        self.collection.add_resource_dependency(network_policy)
        for resource in (encryption_policy, network_policy, self.collection):
            resource.apply_removal_policy(removal_policy)
        self.encryption_policy = encryption_policy
        self.ref = CollectionRef(
            name=name, arn=self.collection.attr_arn, endpoint=self.collection.attr_collection_endpoint
        )


class TenantVectorIndex(Construct):
    """The tenant's index (created by a custom resource) and the data access policy around it."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        tenant: str,
        collection: CollectionRef,
        index_name: str,
        dimension: int,
        readers: list[iam.IRole],
        writers: list[iam.IRole],
        key: kms.IKey,
        retention_days: int,
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        log_group = tenant_log_group(
            self,
            "ProviderLogs",
            tenant=tenant,
            name="lambda/vector-index",
            key=key,
            retention_days=retention_days,
            removal_policy=removal_policy,
        )
        self.provider_role = lambda_role(
            self, "ProviderRole", description=f"agentmem {tenant} vector index custom resource", log_group=log_group
        )
        self.provider_role.add_to_policy(iam.PolicyStatement(actions=["aoss:APIAccessAll"], resources=[collection.arn]))
        self.provider = lambda_.Function(
            self,
            "Provider",
            description=f"Creates and updates the agentmem vector index of tenant {tenant}",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="handler.on_event",
            code=lambda_.Code.from_asset(str(INDEX_HANDLER_DIR), exclude=["__pycache__", "*.pyc"]),
            memory_size=256,
            # Long enough to outwait a data access policy that has not applied yet.
            timeout=Duration.minutes(10),
            role=self.provider_role,
            log_group=log_group,
        )

        index_resource = [f"index/{collection.name}/{index_name}"]
        grants: list[tuple[tuple[str, ...], list[iam.IRole]]] = [
            (ADMIN_PERMISSIONS, [self.provider_role]),
            (READ_PERMISSIONS, readers),
            (WRITE_PERMISSIONS, writers),
        ]
        access_rules = [
            {
                "Rules": [{"ResourceType": "index", "Resource": index_resource, "Permission": list(permissions)}],
                "Principal": [role.role_arn for role in roles],
            }
            for permissions, roles in grants
            if roles
        ]
        self.access_policy = aoss.CfnAccessPolicy(
            self,
            "AccessPolicy",
            name=f"am-{tenant}-data",
            type="data",
            description=f"agentmem tenant {tenant}: its roles, its index only",
            policy=stack.to_json_string(access_rules),
        )

        self.body = index_body(dimension)
        self.index = CustomResource(
            self,
            "Index",
            service_token=self.provider.function_arn,
            resource_type=INDEX_RESOURCE_TYPE,
            properties={
                "Endpoint": collection.endpoint,
                "CollectionName": collection.name,
                "IndexName": index_name,
                "IndexBody": json.dumps(self.body, sort_keys=True, separators=(",", ":")),
                "RetainOnDelete": "true" if removal_policy == RemovalPolicy.RETAIN else "false",
            },
            removal_policy=removal_policy,
        )
        # The provider needs the data access policy in place before it can create the index.
        self.index.node.add_dependency(self.access_policy)
        self.index_name = index_name
