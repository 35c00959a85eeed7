"""The AWS backend: every port on the tenant's AWS resources, named by the settings the stack sets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentmem.backends import ConversationStores
from agentmem.backends.llm import build_llm
from agentmem.config import Settings
from agentmem.ports.embedder import Embedder
from agentmem.ports.events import EventBus
from agentmem.ports.facts import FactStore
from agentmem.ports.items import ItemStore
from agentmem.ports.lexical import LexicalIndex
from agentmem.ports.llm import LanguageModel
from agentmem.ports.pii import PiiDetector
from agentmem.ports.profiles import ProfileStore
from agentmem.ports.records import RecordStore
from agentmem.ports.settings import SettingsStore
from agentmem.ports.vectors import VectorIndex
from agentmem.service.conversations import UserEraser

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer


class AwsBackend:
    """DynamoDB (the tenant table and the key table), KMS, EventBridge, OpenSearch or S3 Vectors, Bedrock,
    Comprehend and SSM. Clients are built on first use, so building a port reaches no AWS endpoint."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.table = settings.table_name or ""

    def record_store(self) -> RecordStore:
        from agentmem.adapters.aws.dynamodb_store import DynamoDbRecordStore

        return DynamoDbRecordStore(
            self.table, max_age_days=self.settings.max_memory_age_days, retention_days=self.settings.retention_days,
        )

    def vector_index(self) -> VectorIndex:
        settings = self.settings
        if settings.vector_store == "s3vectors":
            from agentmem.adapters.aws.s3vectors_index import S3VectorsIndex

            return S3VectorsIndex(settings.vector_bucket or "", dimension=settings.embedding_dimension)
        from agentmem.adapters.aws.opensearch_index import OpenSearchVectorIndex

        return OpenSearchVectorIndex(
            settings.opensearch_endpoint or "", settings.vector_index, dimension=settings.embedding_dimension
        )

    def embedder(self) -> Embedder:
        from agentmem.adapters.aws.bedrock_embedder import BedrockEmbedder

        return BedrockEmbedder(self.settings.embedding_model_id, self.settings.embedding_dimension)

    def event_bus(self) -> EventBus:
        from agentmem.adapters.aws.eventbridge_bus import EventBridgeBus

        return EventBridgeBus(self.settings.event_bus_name or "")

    def lexical_index(self, vectors: VectorIndex) -> LexicalIndex | None:
        """The keyword index beside `vectors`: the one place that decides which vector stores have one.

        OpenSearch has a keyword side (a `text` field, BM25) in the same index; S3 Vectors has none, so its
        tenants keep per-user BM25 segments in the tenant table (adapters/aws/dynamodb_lexical.py).
        """
        from agentmem.adapters.aws.opensearch_index import OpenSearchVectorIndex

        if isinstance(vectors, OpenSearchVectorIndex):
            from agentmem.adapters.aws.opensearch_lexical import OpenSearchLexicalIndex

            return OpenSearchLexicalIndex.beside(vectors)
        if self.settings.vector_store == "s3vectors":
            from agentmem.adapters.aws.dynamodb_lexical import DynamoDbLexicalIndex

            return DynamoDbLexicalIndex(self.settings.table_name or "")
        return None

    def pii_detector(self) -> PiiDetector:
        """The structured rules (validated identifiers) plus Amazon Comprehend."""
        from agentmem.adapters.aws.comprehend_pii import CombinedPiiDetector, ComprehendPiiDetector
        from agentmem.adapters.local.pii_regex import RegexPiiDetector

        return CombinedPiiDetector(RegexPiiDetector(), ComprehendPiiDetector())

    def conversation_stores(self) -> ConversationStores:
        from agentmem.adapters.aws.dynamodb_keys import DynamoDbKeyStore
        from agentmem.adapters.aws.dynamodb_transcripts import DynamoDbTranscriptStore
        from agentmem.adapters.aws.dynamodb_vault import DynamoDbVaultStore
        from agentmem.adapters.aws.kms_keys import KmsKeyProvider

        settings = self.settings
        return ConversationStores(
            DynamoDbTranscriptStore(self.table),
            DynamoDbVaultStore(self.table),
            DynamoDbKeyStore(settings.key_table_name or ""),
            KmsKeyProvider(settings.kms_key_arn or "", settings.hmac_key_arn),
        )

    def item_store(self) -> ItemStore:
        from agentmem.adapters.aws.dynamodb_items import DynamoDbItemStore

        return DynamoDbItemStore(self.table)

    def profile_store(self) -> ProfileStore:
        from agentmem.adapters.aws.dynamodb_profiles import DynamoDbProfileStore

        return DynamoDbProfileStore(self.table)

    def fact_store(self) -> FactStore:
        from agentmem.adapters.aws.dynamodb_facts import DynamoDbFactStore

        return DynamoDbFactStore(self.table)

    def language_model(self) -> LanguageModel:
        return build_llm(self.settings)

    def idempotency_store(self) -> BasePersistenceLayer:
        """powertools' idempotency records in the tenant table."""
        from agentmem.api.idempotency import dynamodb_store

        return dynamodb_store(self.table, self.settings.tenant)

    def settings_store(self) -> SettingsStore | None:
        """The tenant's SSM parameter, when the stack named one."""
        settings = self.settings
        if not settings.settings_parameter:
            return None
        from agentmem.adapters.aws.ssm_settings import SsmSettingsParameter

        return SsmSettingsParameter(settings.settings_parameter, max_age=settings.settings_max_age_seconds)

    def outbox_erasers(self, bus: EventBus) -> list[UserEraser]:
        return []

    def storage_erasers(self) -> list[UserEraser]:
        return []
