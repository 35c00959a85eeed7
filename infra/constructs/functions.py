"""The tenant's Lambda functions, built from `functions.catalog`, with least-privilege roles.

What each function may touch is declared once, in `FUNCTION_ACCESS`; a function
added to the catalog without an entry there fails the synth rather than getting
a guessed set of permissions.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Protocol

from aws_cdk import Annotations, Aws, CfnParameter, CfnRule, CfnRuleAssertion, Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from functions.catalog import CONSUMER_BATCH_SIZE, FUNCTIONS, FunctionSpec
from infra.bundling import PYTHON_VERSION, LayerStatus
from infra.constructs.keys import log_group_prefix
from infra.settings import LOG_RETENTION_DAYS, TenantSettings

# The runtime CDK knows for PYTHON_VERSION (an AttributeError here means this CDK lacks it).
RUNTIME: lambda_.Runtime = getattr(lambda_.Runtime, f"PYTHON_{PYTHON_VERSION.replace('.', '_')}")
ARCHITECTURE = lambda_.Architecture.ARM_64
POWERTOOLS_SERVICE_NAME = "agentmem"
POWERTOOLS_METRICS_NAMESPACE = "AgentMem"
MISSING_LAYER_WARNING_ID = "agentmem:missing-dependency-layer"

_RETENTION_NAMES = (
    "ONE_DAY", "THREE_DAYS", "FIVE_DAYS", "ONE_WEEK", "TWO_WEEKS", "ONE_MONTH", "TWO_MONTHS",
    "THREE_MONTHS", "FOUR_MONTHS", "FIVE_MONTHS", "SIX_MONTHS", "ONE_YEAR", "THIRTEEN_MONTHS",
    "EIGHTEEN_MONTHS", "TWO_YEARS", "THREE_YEARS", "FIVE_YEARS", "SIX_YEARS", "SEVEN_YEARS",
    "EIGHT_YEARS", "NINE_YEARS", "TEN_YEARS",
)  # fmt: skip
RETENTION: dict[int, logs.RetentionDays] = {
    days: logs.RetentionDays[name] for days, name in zip(sorted(LOG_RETENTION_DAYS), _RETENTION_NAMES, strict=True)
}


class Access(StrEnum):
    TABLE = "table"  # items of the tenant table and its gsi1
    DATA_KEYS = "data-keys"  # GenerateDataKey/Decrypt on the tenant CMK: the per-user data keys
    KEY_STORE = "key-store"  # items of the key table (infra/constructs/key_store.py): the wrapped data keys
    PII_HMAC = "pii-hmac"  # GenerateMac on the tenant HMAC key
    PII_DETECT = "pii-detect"  # Comprehend DetectPiiEntities (masking before anything is stored)
    PUBLISH = "publish"  # PutEvents with source `agentmem` on the tenant bus
    EMBED = "embed"  # InvokeModel on the embedding model
    LLM = "llm"  # InvokeModel (Converse) on the LLM
    VECTORS_READ = "vectors-read"  # search the tenant's vector index
    VECTORS_WRITE = "vectors-write"  # search, write and delete in the tenant's vector index
    SETTINGS = "settings"  # GetParameter on the tenant's run-time settings parameter


A = Access
_MASKING = frozenset({A.DATA_KEYS, A.KEY_STORE, A.PII_HMAC, A.PII_DETECT})
FUNCTION_ACCESS: Mapping[str, frozenset[Access]] = {
    # Masks the run's input (the user's tokens, or the agent's without a user); reads the user's memory.
    "retrieve": frozenset({A.TABLE, A.EMBED, A.VECTORS_READ, A.SETTINGS}) | _MASKING,
    # Runs and feedback, masked into the vault; deleting a memory removes its vector; publishes FeedbackSubmitted.
    "feedback": frozenset({A.TABLE, A.PUBLISH, A.VECTORS_WRITE, A.SETTINGS}) | _MASKING,
    "indexer": frozenset({A.TABLE, A.EMBED, A.VECTORS_WRITE, A.SETTINGS}),
    # Masks turns into the vault; erasing a user deletes its facts' vectors; publishes TurnsAppended.
    "conversations": frozenset({A.TABLE, A.PUBLISH, A.VECTORS_WRITE, A.SETTINGS}) | _MASKING,
    # Reads turns masked already and indexes them for recall (their vectors); its guard before the LLM is
    # the regex detector (no KMS, no Comprehend); writes facts and their vectors; publishes Profile* events.
    "consolidate": frozenset({A.TABLE, A.EMBED, A.LLM, A.PUBLISH, A.VECTORS_WRITE, A.SETTINGS}),
    # Indexes lessons left pending (embeds and writes their vectors).
    "sweeper": frozenset({A.TABLE, A.EMBED, A.VECTORS_WRITE, A.SETTINGS}),
    # Health and the OpenAPI document read no settings at run time (`get_settings` only).
    "service": frozenset(),
    # Runs each MCP tool call through the retrieve, feedback and conversations handlers in-process.
    "mcp": frozenset({A.TABLE, A.EMBED, A.VECTORS_WRITE, A.PUBLISH, A.SETTINGS}) | _MASKING,
}
# What the event source mapping does with the function's role to read its queue (SQS decrypts with the
# tenant key on the role's behalf, so the role's kms:Decrypt is limited to calls made through SQS).
QUEUE_CONSUMER_ACTIONS = (
    "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes",
)  # fmt: skip
# Actions that support no resource-level permissions: their statements must name "*".
RESOURCELESS_ACTIONS = frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords", "comprehend:DetectPiiEntities"})

# What the DynamoDB adapters and powertools' idempotency layer call (tests/infra/test_least_privilege.py);
# TransactWriteItems is authorised by the actions of the items in it.
TABLE_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
)


class VectorAccess(Protocol):
    """The IAM statements that let a function read (search) or write (upsert, delete) the tenant's vectors."""

    def statements(self, *, write: bool) -> list[iam.PolicyStatement]: ...


def construct_name(function_name: str) -> str:
    """`conversations` -> `Conversations`, for construct ids."""
    return function_name[:1].upper() + function_name[1:]


def function_environment(
    settings: TenantSettings,
    *,
    table_name: str,
    key_table_name: str,
    event_bus_name: str,
    data_key_arn: str,
    hmac_key_arn: str,
    vector_endpoint: str | None = None,
    vector_bucket: str | None = None,
    settings_parameter_name: str | None = None,
) -> dict[str, str]:
    """The environment every function reads its configuration from.

    `vector_bucket` (S3 Vectors) or `vector_endpoint` (an OpenSearch Serverless collection) says
    where the vectors are. The contract's keys here are the deploy-time values; functions overlay
    the settings parameter's (changed by `agentmem config set --stack`) on them at run time.
    """
    environment = {
        "AGENTMEM_BACKEND": "aws",
        "AGENTMEM_TENANT": settings.name,
        "AGENTMEM_TABLE_NAME": table_name,
        "AGENTMEM_KEY_TABLE_NAME": key_table_name,
        "AGENTMEM_EVENT_BUS_NAME": event_bus_name,
        "AGENTMEM_KMS_KEY_ARN": data_key_arn,
        "AGENTMEM_HMAC_KEY_ARN": hmac_key_arn,
        "AGENTMEM_VECTOR_STORE": "s3vectors" if vector_bucket else "opensearch",
        "AGENTMEM_VECTOR_INDEX": settings.vector_index_name,
        "AGENTMEM_EMBEDDING_MODEL_ID": settings.embedding_model_id,
        "AGENTMEM_EMBEDDING_DIMENSION": str(settings.embedding_dimension),
        "AGENTMEM_LLM_MODEL_ID": settings.llm_model_id,
        "AGENTMEM_ENABLED_AGENTS": ",".join(settings.enabled_agents),
        "AGENTMEM_TOP_K": str(settings.top_k),
        "AGENTMEM_MAX_MEMORY_AGE_DAYS": str(settings.max_memory_age_days),
        "AGENTMEM_DIGEST_MAX_CHARS": str(settings.digest_max_chars),
        "AGENTMEM_PROFILE_TOKEN_BUDGET": str(settings.profile_token_budget),
        "AGENTMEM_RETENTION_DAYS": str(settings.retention_days),
        "AGENTMEM_IMPORTANCE__IMPORTANT": str(settings.importance.important),
        "AGENTMEM_IMPORTANCE__UNIMPORTANT": str(settings.importance.unimportant),
        "POWERTOOLS_SERVICE_NAME": POWERTOOLS_SERVICE_NAME,
        "POWERTOOLS_METRICS_NAMESPACE": POWERTOOLS_METRICS_NAMESPACE,
        # Responses carry users' (masked) conversations; keep them out of X-Ray.
        "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
    }
    if vector_bucket:
        environment["AGENTMEM_VECTOR_BUCKET"] = vector_bucket
    elif vector_endpoint:
        environment["AGENTMEM_OPENSEARCH_ENDPOINT"] = vector_endpoint
    if settings.eligibility_threshold is not None:
        environment["AGENTMEM_ELIGIBILITY_THRESHOLD"] = str(settings.eligibility_threshold)
    if settings_parameter_name is not None:
        environment["AGENTMEM_SETTINGS_PARAMETER"] = settings_parameter_name
    return environment


def bedrock_model_arns(model_id: str, *, inference_profile: bool) -> list[str]:
    """The ARNs `bedrock:InvokeModel` must be allowed on to call `model_id`."""
    if model_id.startswith("arn:"):
        return [model_id]
    if not inference_profile:
        return [f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}::foundation-model/{model_id}"]
    # A cross-region profile routes to the model in any region of its geography.
    base_model = model_id.split(".", 1)[1]
    return [
        f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}:{Aws.ACCOUNT_ID}:inference-profile/{model_id}",
        f"arn:{Aws.PARTITION}:bedrock:*::foundation-model/{base_model}",
    ]


def tenant_log_group(
    scope: Construct,
    construct_id: str,
    *,
    tenant: str,
    name: str,
    key: kms.IKey,
    retention_days: int,
    removal_policy: RemovalPolicy,
) -> logs.LogGroup:
    """A log group under the tenant's prefix, encrypted with the tenant key."""
    return logs.LogGroup(
        scope,
        construct_id,
        log_group_name=f"{log_group_prefix(tenant)}{name}",
        retention=RETENTION[retention_days],
        encryption_key=key,
        removal_policy=removal_policy,
    )


def lambda_role(scope: Construct, construct_id: str, *, description: str, log_group: logs.ILogGroup) -> iam.Role:
    """An execution role that can write to `log_group` and nothing else yet."""
    role = iam.Role(
        scope,
        construct_id,
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=description,
    )
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[log_group.log_group_arn],
        )
    )
    return role


class DependencyLayer(Construct):
    """The layer with the functions' third-party dependencies, or the guard that its absence needs.

    Without a built layer the stack still synthesises, but every function gets a
    warning annotation, and a CloudFormation rule makes `cdk deploy` fail before
    any resource changes (code without its dependencies would only fail at run
    time). With context `agentmem:requireBundle=true` synth itself fails (for CI).
    """

    def __init__(self, scope: Construct, construct_id: str, *, status: LayerStatus, require: bool) -> None:
        super().__init__(scope, construct_id)
        self.problem = status.problem
        self.layer: lambda_.LayerVersion | None = None
        if status.bundle is not None:
            self.layer = lambda_.LayerVersion(
                self,
                "Layer",
                code=lambda_.Code.from_asset(str(status.bundle.zip_path), asset_hash=status.bundle.sha256),
                compatible_architectures=[ARCHITECTURE],
                compatible_runtimes=[RUNTIME],
                description=f"agentmem runtime dependencies (sha256 {status.bundle.sha256[:16]})",
            )
            if status.drift:
                Annotations.of(self).add_warning_v2("agentmem:dependency-layer-drift", status.drift)
            return
        if require:
            Annotations.of(self).add_error(f"agentmem:requireBundle is set: {status.problem}")
        stack = Stack.of(self)
        marker = CfnParameter(
            stack,
            "DependencyLayerMissing",
            type="String",
            default="missing",
            allowed_values=["missing"],
            description="Set by the CDK app because the Lambda dependency layer was not built.",
        )
        CfnRule(
            stack,
            "RequireDependencyLayer",
            assertions=[
                CfnRuleAssertion(
                    assert_=Fn.condition_not(Fn.condition_equals(marker.value_as_string, "missing")),
                    assert_description=f"Refusing to deploy functions without their dependencies: {status.problem}",
                )
            ],
        )

    def attach(self, function: lambda_.Function) -> None:
        if self.layer is not None:
            function.add_layers(self.layer)
        else:
            Annotations.of(function).add_warning_v2(MISSING_LAYER_WARNING_ID, str(self.problem))


class TenantFunctions(Construct):
    """One function per catalog entry: arm64, Powertools environment, its own role and log group."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: TenantSettings,
        code: lambda_.Code,
        layer: DependencyLayer,
        environment: Mapping[str, str],
        table_arns: list[str],
        data_key: kms.IKey,
        hmac_key: kms.IKey,
        event_bus_arn: str,
        vector_access: VectorAccess,
        removal_policy: RemovalPolicy,
        settings_parameter_arn: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        unknown = [spec.name for spec in FUNCTIONS if spec.name not in FUNCTION_ACCESS]
        if unknown:
            raise ValueError(
                f"catalog functions without an access profile: {', '.join(unknown)}; "
                "declare what they may touch in FUNCTION_ACCESS (infra/constructs/functions.py)"
            )
        self._settings = settings
        self._table_arns = table_arns
        self._data_key = data_key
        self._hmac_key = hmac_key
        self._event_bus_arn = event_bus_arn
        self._vector_access = vector_access
        self._settings_parameter_arn = settings_parameter_arn
        self.functions: dict[str, lambda_.Function] = {}
        self.roles: dict[str, iam.Role] = {}
        for spec in FUNCTIONS:
            self._add(spec, code, layer, environment, removal_policy)

    def _add(
        self,
        spec: FunctionSpec,
        code: lambda_.Code,
        layer: DependencyLayer,
        environment: Mapping[str, str],
        removal_policy: RemovalPolicy,
    ) -> None:
        settings = self._settings
        name = construct_name(spec.name)
        log_group = tenant_log_group(
            self,
            f"{name}Logs",
            tenant=settings.name,
            name=f"lambda/{spec.name}",
            key=self._data_key,
            retention_days=settings.log_retention_days,
            removal_policy=removal_policy,
        )
        role = lambda_role(
            self, f"{name}Role", description=f"agentmem {settings.name} {spec.name}", log_group=log_group
        )
        function = lambda_.Function(
            self,
            f"{name}Function",
            function_name=f"agentmem-{settings.name}-{spec.name}",
            description=spec.description or spec.name,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=spec.handler,
            code=code,
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_seconds),
            role=role,
            log_group=log_group,
            tracing=lambda_.Tracing.ACTIVE,
            environment=dict(environment),
            reserved_concurrent_executions=settings.reserved_concurrency_for(spec.name),
        )
        layer.attach(function)
        for statement in self._statements(FUNCTION_ACCESS[spec.name]):
            role.add_to_policy(statement)
        self.functions[spec.name] = function
        self.roles[spec.name] = role

    def _statements(self, access: frozenset[Access]) -> list[iam.PolicyStatement]:
        settings = self._settings
        statements = []
        if Access.TABLE in access:
            statements.append(iam.PolicyStatement(actions=list(TABLE_ACTIONS), resources=self._table_arns))
        if Access.DATA_KEYS in access:
            statements.append(
                iam.PolicyStatement(
                    # ReEncrypt (`agentmem rewrap`) is an operator's call with their own credentials.
                    actions=["kms:GenerateDataKey", "kms:Decrypt"],
                    resources=[self._data_key.key_arn],
                )
            )
        if Access.PII_HMAC in access:
            statements.append(iam.PolicyStatement(actions=["kms:GenerateMac"], resources=[self._hmac_key.key_arn]))
        if Access.PII_DETECT in access:
            statements.append(iam.PolicyStatement(actions=["comprehend:DetectPiiEntities"], resources=["*"]))
        if Access.PUBLISH in access:
            statements.append(
                iam.PolicyStatement(
                    actions=["events:PutEvents"],
                    resources=[self._event_bus_arn],
                    conditions={"StringEquals": {"events:source": "agentmem"}},
                )
            )
        if Access.EMBED in access:
            statements.append(
                iam.PolicyStatement(
                    actions=["bedrock:InvokeModel"],
                    resources=bedrock_model_arns(settings.embedding_model_id, inference_profile=False),
                )
            )
        if Access.LLM in access:
            statements.append(
                iam.PolicyStatement(
                    actions=["bedrock:InvokeModel"],  # Converse is authorised by InvokeModel
                    resources=bedrock_model_arns(
                        settings.llm_model_id, inference_profile=settings.llm_is_inference_profile
                    ),
                )
            )
        if Access.SETTINGS in access and self._settings_parameter_arn is not None:
            statements.append(
                iam.PolicyStatement(actions=["ssm:GetParameter"], resources=[self._settings_parameter_arn])
            )
        if access & {Access.VECTORS_READ, Access.VECTORS_WRITE}:
            statements.extend(self._vector_access.statements(write=Access.VECTORS_WRITE in access))
        return statements

    def consume_from(self, name: str, queue: sqs.IQueue, key: kms.IKey) -> lambda_.EventSourceMapping:
        """Feed function `name` from `queue` in batches, failed records reported one by one."""
        role = self.roles[name]
        role.add_to_policy(iam.PolicyStatement(actions=list(QUEUE_CONSUMER_ACTIONS), resources=[queue.queue_arn]))
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["kms:Decrypt"],
                resources=[key.key_arn],
                conditions={"StringEquals": {"kms:ViaService": f"sqs.{Aws.REGION}.amazonaws.com"}},
            )
        )
        mapping = self.functions[name].add_event_source_mapping(
            "QueueSource",
            event_source_arn=queue.queue_arn,
            batch_size=CONSUMER_BATCH_SIZE,
            report_batch_item_failures=True,
        )
        # The mapping checks at creation that the role can read the queue.
        mapping.node.add_dependency(role)
        return mapping

    def roles_with(self, access: Access) -> list[iam.Role]:
        """The roles of the functions granted `access`, in catalog order."""
        return [self.roles[spec.name] for spec in FUNCTIONS if access in FUNCTION_ACCESS[spec.name]]
