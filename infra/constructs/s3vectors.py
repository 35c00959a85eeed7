"""Amazon S3 Vectors: the tenant's vector bucket (SSE-KMS, the tenant key) and one index per kind.

Layout and limits: `agentmem.adapters.aws.s3vectors_layout`, read here and by the adapter. All of it
is CloudFormation (AWS::S3Vectors::VectorBucket and ::Index): no custom resource. Functions get
`s3vectors:*Vectors` on this tenant's three index ARNs only, so no role of one tenant can name
another tenant's index; their KMS use is limited to calls made through S3 Vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.adapters.aws import s3vectors_layout as layout
from aws_cdk import Aws, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3vectors as s3vectors
from constructs import Construct

# QueryVectors with a filter or returnMetadata also needs GetVectors (QueryVectors API reference).
READ_ACTIONS = ("s3vectors:QueryVectors", "s3vectors:GetVectors")
# ListVectors: erasing an owner lists the index's keys (the service has no delete by filter).
WRITE_ACTIONS = (*READ_ACTIONS, "s3vectors:PutVectors", "s3vectors:DeleteVectors", "s3vectors:ListVectors")
KEY_READ_ACTIONS = ("kms:Decrypt",)
KEY_WRITE_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")
# The service principal that maintains the indexes in the background needs to decrypt with the key.
INDEXING_PRINCIPAL = "indexing.s3vectors.amazonaws.com"


@dataclass(frozen=True)
class S3VectorsAccess:
    """The statements for the tenant's index ARNs; KMS only through S3 Vectors (`kms:ViaService`)."""

    index_arns: tuple[str, ...]
    key_arn: str

    def statements(self, *, write: bool) -> list[iam.PolicyStatement]:
        via_s3vectors = {"StringEquals": {"kms:ViaService": f"s3vectors.{Aws.REGION}.amazonaws.com"}}
        return [
            iam.PolicyStatement(
                actions=list(WRITE_ACTIONS if write else READ_ACTIONS), resources=list(self.index_arns)
            ),
            iam.PolicyStatement(
                actions=list(KEY_WRITE_ACTIONS if write else KEY_READ_ACTIONS),
                resources=[self.key_arn],
                conditions=via_s3vectors,
            ),
        ]


class TenantS3Vectors(Construct):
    """The vector bucket `agentmem-<tenant>-vectors` and its indexes `<tenant>-lesson|fact|turn`."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        tenant: str,
        dimension: int,
        key: kms.IKey,
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        if not 1 <= dimension <= layout.MAX_DIMENSION:
            raise ValueError(f"S3 Vectors takes dimensions 1-{layout.MAX_DIMENSION}, not {dimension}")
        self.bucket_name = layout.bucket_name(tenant)
        self.bucket = s3vectors.CfnVectorBucket(
            self,
            "Bucket",
            vector_bucket_name=self.bucket_name,
            encryption_configuration=s3vectors.CfnVectorBucket.EncryptionConfigurationProperty(
                sse_type="aws:kms", kms_key_arn=key.key_arn
            ),
        )
        self.bucket.apply_removal_policy(removal_policy)
        self.indexes: dict[str, s3vectors.CfnIndex] = {}
        for kind in layout.KINDS:
            index = s3vectors.CfnIndex(
                self,
                f"{kind.capitalize()}Index",
                vector_bucket_name=self.bucket_name,
                index_name=layout.index_name(tenant, kind),
                data_type=layout.DATA_TYPE,
                dimension=dimension,
                distance_metric=layout.DISTANCE_METRIC,
                metadata_configuration=s3vectors.CfnIndex.MetadataConfigurationProperty(
                    non_filterable_metadata_keys=list(layout.NON_FILTERABLE_KEYS)
                ),
            )
            index.add_resource_dependency(self.bucket)
            index.apply_removal_policy(removal_policy)
            self.indexes[kind] = index
        key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowS3VectorsIndexing",
                principals=[iam.ServicePrincipal(INDEXING_PRINCIPAL)],
                actions=["kms:Decrypt"],
                resources=["*"],  # in a key policy "*" means this key
                conditions={
                    "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                    "ArnLike": {
                        "aws:SourceArn": f"arn:{Aws.PARTITION}:s3vectors:{Aws.REGION}:{Aws.ACCOUNT_ID}:"
                        f"bucket/{self.bucket_name}"
                    },
                },
            )
        )
        self.access = S3VectorsAccess(
            index_arns=tuple(index.attr_index_arn for index in self.indexes.values()), key_arn=key.key_arn
        )
