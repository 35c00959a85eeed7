"""One tenant's stack: composes the constructs; holds no logic of its own beyond the wiring."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import CfnOutput, RemovalPolicy, Stack, Tags
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from functions.catalog import FUNCTIONS
from infra.bundling import LayerStatus
from infra.constructs.api import TenantApi
from infra.constructs.event_bus import TenantEventBus
from infra.constructs.functions import (
    RUNTIME,
    Access,
    DependencyLayer,
    TenantFunctions,
    VectorAccess,
    function_environment,
    tenant_log_group,
)
from infra.constructs.key_store import KeyStoreTable
from infra.constructs.keys import TenantKeys
from infra.constructs.monitoring import TenantMonitoring
from infra.constructs.s3vectors import TenantS3Vectors
from infra.constructs.settings_parameter import TenantSettingsParameter
from infra.constructs.table import MemoryTable
from infra.constructs.vectors import (
    CollectionRef,
    OpenSearchAccess,
    TenantVectorIndex,
    VectorCollection,
    dedicated_collection_name,
)
from infra.nag import acknowledge
from infra.settings import RemovalMode, TenantSettings, VectorCollectionMode

TENANT_TAG = "agentmem:tenant"


class TenantStack(Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: TenantSettings,
        code_dir: Path,
        layer_status: LayerStatus,
        require_bundle: bool = False,
        shared_collection: CollectionRef | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, description=f"agentmem tenant {settings.name}", **kwargs)
        self.settings = settings
        # Cost allocation per tenant.
        Tags.of(self).add(TENANT_TAG, settings.name)
        tenant = settings.name
        removal = RemovalPolicy.RETAIN if settings.removal_policy is RemovalMode.RETAIN else RemovalPolicy.DESTROY

        keys = TenantKeys(self, "Keys", tenant=tenant, removal_policy=removal)
        table = MemoryTable(self, "Memory", key=keys.data_key, removal_policy=removal)
        key_store = KeyStoreTable(self, "KeyStore", key=keys.data_key, removal_policy=removal)
        bus = TenantEventBus(
            self,
            "Events",
            tenant=tenant,
            key=keys.data_key,
            archive_days=settings.event_archive_days,
            removal_policy=removal,
        )

        # Where the vectors live: the tenant's S3 Vectors bucket, or an OpenSearch Serverless collection.
        s3_vectors: TenantS3Vectors | None = None
        vectors: CollectionRef | None = None
        vector_access: VectorAccess
        if settings.vector_collection is VectorCollectionMode.S3VECTORS:
            s3_vectors = TenantS3Vectors(
                self,
                "Vectors",
                tenant=tenant,
                dimension=settings.embedding_dimension,
                key=keys.data_key,
                removal_policy=removal,
            )
            vector_access = s3_vectors.access
        else:
            if settings.vector_collection is VectorCollectionMode.DEDICATED:
                vectors = VectorCollection(
                    self,
                    "Vectors",
                    name=dedicated_collection_name(tenant),
                    policy_prefix=f"am-{tenant}",
                    key=keys.data_key,
                    redundancy=settings.vector_redundancy,
                    removal_policy=removal,
                    description=f"agentmem tenant {tenant}: memory vectors",
                ).ref
            elif shared_collection is None:
                raise ValueError(f"tenant {tenant} uses the shared vector collection, but none was given")
            else:
                vectors = shared_collection
            vector_access = OpenSearchAccess(vectors.arn)

        runtime_settings = TenantSettingsParameter(self, "Settings", settings=settings)
        layer = DependencyLayer(self, "Dependencies", status=layer_status, require=require_bundle)
        functions = TenantFunctions(
            self,
            "Functions",
            settings=settings,
            code=lambda_.Code.from_asset(str(code_dir)),
            layer=layer,
            environment=function_environment(
                settings,
                table_name=table.table.table_name,
                key_table_name=key_store.table.table_name,
                event_bus_name=bus.bus.event_bus_name,
                data_key_arn=keys.data_key.key_arn,
                hmac_key_arn=keys.hmac_key.key_arn,
                vector_endpoint=vectors.endpoint if vectors else None,
                vector_bucket=s3_vectors.bucket_name if s3_vectors else None,
                settings_parameter_name=runtime_settings.parameter.parameter_name,
            ),
            table_arns=[table.table.table_arn, table.gsi1_arn],
            data_key=keys.data_key,
            hmac_key=keys.hmac_key,
            event_bus_arn=bus.bus.event_bus_arn,
            vector_access=vector_access,
            removal_policy=removal,
            settings_parameter_arn=runtime_settings.parameter.parameter_arn,
        )
        for spec in FUNCTIONS:
            consumer = bus.route(spec, keys.data_key, removal)
            if consumer is not None:
                functions.consume_from(spec.name, consumer.queue, keys.data_key)
            bus.schedule(spec, functions.functions[spec.name])
        for role in functions.roles_with(Access.KEY_STORE):
            key_store.grant(role)

        index: TenantVectorIndex | None = None
        if vectors is not None:
            index = TenantVectorIndex(
                self,
                "VectorIndex",
                tenant=tenant,
                collection=vectors,
                index_name=settings.vector_index_name,
                dimension=settings.embedding_dimension,
                readers=list(functions.roles_with(Access.VECTORS_READ)),
                writers=list(functions.roles_with(Access.VECTORS_WRITE)),
                key=keys.data_key,
                retention_days=settings.log_retention_days,
                removal_policy=removal,
            )

        api = TenantApi(
            self,
            "Http",
            tenant=tenant,
            specs=FUNCTIONS,
            functions=functions.functions,
            allowed_principals=settings.allowed_principals,
            access_log_group=tenant_log_group(
                self,
                "ApiAccessLogs",
                tenant=tenant,
                name="api-access",
                key=keys.data_key,
                retention_days=settings.log_retention_days,
                removal_policy=removal,
            ),
            rate_limit=settings.api_rate_limit,
            burst_limit=settings.api_burst_limit,
        )
        monitoring = TenantMonitoring(
            self,
            "Monitoring",
            tenant=tenant,
            key=keys.data_key,
            functions=functions.functions,
            api=api.api,
            dead_letter_queue=bus.dead_letter_queue,
            consumer_dead_letter_queues={name: q.dead_letter_queue for name, q in bus.consumer_queues.items()},
            table=table.table,
            latency_threshold_ms=settings.api_latency_alarm_ms,
            level=settings.monitoring,
        )

        self._acknowledge_findings(functions, index)

        self.keys, self.table, self.bus, self.vectors, self.s3_vectors = keys, table, bus, vectors, s3_vectors
        self.key_store = key_store
        self.functions, self.vector_index, self.api, self.monitoring = functions, index, api, monitoring

        for name, value in (
            ("ApiUrl", api.api.url),
            ("TableName", table.table.table_name),
            ("KeyTableName", key_store.table.table_name),
            ("EventBusName", bus.bus.event_bus_name),
            ("EventBusArn", bus.bus.event_bus_arn),
            ("EventArchiveArn", bus.archive.attr_arn),
            ("DlqUrl", bus.dead_letter_queue.queue_url),
            # `agentmem redrive --stack` moves each consumer's dead letters back to its queue.
            *[
                (output, url)
                for spec in FUNCTIONS
                if spec.name in bus.consumer_queues
                for output, url in zip(
                    spec.queue_outputs,
                    (bus.consumer_queues[spec.name].queue.queue_url,
                     bus.consumer_queues[spec.name].dead_letter_queue.queue_url),
                    strict=True,
                )
            ],
            ("VectorStore", "s3vectors" if s3_vectors else "opensearch"),
            *([("VectorBucketName", s3_vectors.bucket_name)] if s3_vectors else []),
            *([("CollectionEndpoint", vectors.endpoint)] if vectors else []),
            ("VectorIndexName", settings.vector_index_name),
            ("AlarmTopicArn", monitoring.alarm_topic.topic_arn),
            # What operators' commands (agentmem reindex/export/import --stack) need to reach the data.
            ("Tenant", settings.name),
            # `agentmem config get|set --stack` reads and writes it.
            ("SettingsParameterName", runtime_settings.parameter.parameter_name),
            ("KmsKeyArn", keys.data_key.key_arn),
            ("HmacKeyArn", keys.hmac_key.key_arn),
            ("EmbeddingModelId", settings.embedding_model_id),
            ("EmbeddingDimension", str(settings.embedding_dimension)),
        ):
            CfnOutput(self, name, value=value)

    def _acknowledge_findings(self, functions: TenantFunctions, index: TenantVectorIndex | None) -> None:
        for name, role in functions.roles.items():
            acknowledge(
                role,
                "AwsSolutions-IAM5[Resource::*]",
                f"{name}: only actions without resource-level permissions name '*': X-Ray's "
                "PutTraceSegments/PutTelemetryRecords (tracing) and, where the function masks personal "
                "data, Comprehend's DetectPiiEntities. Every other statement names its resources.",
            )
            if self.settings.llm_is_inference_profile and name == "consolidate":
                acknowledge(
                    role,
                    f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/"
                    f"{self.settings.llm_model_id.split('.', 1)[1]}]",
                    "A cross-region inference profile may route the call to this one model in any region "
                    "of its geography; the region is the only wildcard.",
                )
        reason = (
            f"Pinned to {RUNTIME.name}, the Python the dependency layer's binary wheels are built for "
            "(infra/bundling.py PYTHON_VERSION); moving to a newer runtime is that one constant plus a "
            "`make bundle`, done deliberately rather than by a rule."
        )
        for function in [*functions.functions.values(), *([index.provider] if index else [])]:
            acknowledge(function, "AwsSolutions-L1", reason)
