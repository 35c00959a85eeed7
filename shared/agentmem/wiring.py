"""The composition root: which adapter serves which port, built lazily once per process.

Handlers ask for `get_services()`; the first call reads the settings and
builds the adapters for `backend` (local files, or AWS clients). Nothing is
built at import time, so a cold start pays only for what a request uses.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from agentmem.config import Settings, get_settings
from agentmem.domain.errors import AgentMemError, BackendUnavailable
from agentmem.domain.pii import PiiSpan
from agentmem.ports.embedder import Embedder
from agentmem.ports.events import EventBus
from agentmem.ports.lexical import LexicalIndex
from agentmem.ports.llm import LanguageModel
from agentmem.ports.pii import PiiDetector
from agentmem.ports.records import RecordStore
from agentmem.ports.vectors import VectorIndex
from agentmem.service.consolidation import ConsolidationService
from agentmem.service.conversations import ConversationService
from agentmem.service.facts import FactService
from agentmem.service.items import ItemService
from agentmem.service.memory import MemoryService
from agentmem.service.profiles import ProfileService
from agentmem.service.retrieval import RetrievalService
from agentmem.service.runtime_settings import RuntimeSettings
from agentmem.service.turn_recall import TurnRecallService, adjacent_turn_ids
from agentmem.service.turn_search import HybridTurnRetriever
from agentmem.service.user_memory import UserMemoryService
from agentmem.service.user_search import UserSearchService

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Services:
    """Everything a handler can call into."""

    settings: Settings
    memory: MemoryService
    retrieval: RetrievalService
    conversations: ConversationService | None = None
    user_memory: UserMemoryService | None = None
    profiles: ProfileService | None = None
    facts: FactService | None = None
    items: ItemService | None = None
    consolidation: ConsolidationService | None = None
    turn_recall: TurnRecallService | None = None
    user_search: UserSearchService | None = None
    lexical: LexicalIndex | None = None
    # powertools' idempotency records of feedback (api/idempotency.py): built on the first request with a key.
    idempotency_store: BasePersistenceLayer | None = None
    # The same records for turn appends: a layer of its own, as powertools keeps one configuration per layer.
    turns_idempotency: BasePersistenceLayer | None = None
    # The tenant's run-time settings (AWS: the SSM parameter), applied on each `get_services()`.
    runtime: RuntimeSettings | None = None
    _idempotency_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def feedback_idempotency_store(self) -> BasePersistenceLayer:
        """The idempotency persistence layer for `settings.backend`, built on first use."""
        with self._idempotency_lock:
            if self.idempotency_store is None:
                self.idempotency_store = build_idempotency_store(self.settings)
            return self.idempotency_store

    def turns_idempotency_store(self) -> BasePersistenceLayer:
        """The idempotency persistence layer of turn appends (same table or file, its own key prefix)."""
        with self._idempotency_lock:
            if self.turns_idempotency is None:
                self.turns_idempotency = build_idempotency_store(self.settings)
            return self.turns_idempotency

    def forget_turn_appends(self, user_id: str, thread_id: str, keys: list[str]) -> None:
        """Delete the idempotency records of these appends of a thread (its turns deleted, or the user erased)."""
        from agentmem.api.idempotency import forget_turn_appends

        forget_turn_appends(self.turns_idempotency_store(), self.settings.tenant, user_id, thread_id, keys)

    def refresh_settings(self) -> None:
        """Apply the run-time settings in force, if they changed (a cached read when they did not)."""
        if self.runtime is None:
            return
        current = self.runtime.current()
        if current is not self.settings:
            self.apply_settings(current)

    def apply_settings(self, settings: Settings) -> None:
        """Make `settings` the ones every part reads from now on."""
        self.settings = settings
        self.memory.settings = settings
        if self.profiles is not None:
            self.profiles.token_budget = settings.profile_token_budget
        store = self.memory.store
        if hasattr(store, "max_age_days") and hasattr(store, "retention_days"):  # DynamoDB: new items' TTL
            store.max_age_days = settings.max_memory_age_days
            store.retention_days = settings.retention_days

    def close(self) -> None:
        for closeable in (self.memory.store, self.memory.vectors, self.memory.bus, self.lexical):
            close = getattr(closeable, "close", None)
            if close:
                close()
        if self.conversations is not None:
            self.conversations.close()
        for part in (self.profiles, self.facts, self.items):
            close = getattr(part.store, "close", None) if part is not None else None
            if close:
                close()
        for layer in (self.idempotency_store, self.turns_idempotency):
            close = getattr(layer, "close", None)
            if close:
                close()


class GuardedEmbedder:
    """Turns any unexpected failure of the embedder into BackendUnavailable("embedder")."""

    def __init__(self, inner: Embedder):
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return _guard("embedder", lambda: self.inner.embed(texts))


class GuardedVectorIndex:
    """Turns any unexpected failure of the vector index into BackendUnavailable("vectors")."""

    def __init__(self, inner: VectorIndex):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr) or name == "close":
            return attr
        return lambda *a, **kw: _guard("vectors", lambda: attr(*a, **kw))


def _guard(part: str, call: Callable[[], T]) -> T:
    try:
        return call()
    except AgentMemError:
        raise
    except Exception as exc:
        log.exception("%s failed", part)
        raise BackendUnavailable(part, f"{part} unavailable: {type(exc).__name__}") from exc


def build_services(
    settings: Settings,
    *,
    store: RecordStore | None = None,
    vectors: VectorIndex | None = None,
    embedder: Embedder | None = None,
    bus: EventBus | None = None,
    llm: LanguageModel | None = None,
    idempotency_store: BasePersistenceLayer | None = None,
    lexical: LexicalIndex | None = None,
) -> Services:
    """Wire the adapters for `settings.backend`; any port given explicitly is used as it is."""
    if settings.backend == "local":
        data = settings.data_dir
        if store is None:
            from agentmem.adapters.local.sqlite_store import SqliteRecordStore

            store = SqliteRecordStore(data / "agentmem.db")
        if vectors is None:
            from agentmem.adapters.local.vector_index import LocalVectorIndex

            vectors = LocalVectorIndex(data / "vectors.db")
        if embedder is None:
            from agentmem.adapters.local.minilm import MiniLMEmbedder

            embedder = MiniLMEmbedder(cache_size=settings.embedding_cache_size)
        if bus is None:
            from agentmem.adapters.local.event_bus import SqliteEventBus

            bus = SqliteEventBus(data / "events.db")
        if lexical is None:
            from agentmem.adapters.local.bm25_index import LocalBm25Index

            lexical = LocalBm25Index(data / "lexical.db")
    else:
        if store is None:
            from agentmem.adapters.aws.dynamodb_store import DynamoDbRecordStore

            store = DynamoDbRecordStore(
                settings.table_name or "", max_age_days=settings.max_memory_age_days,
                retention_days=settings.retention_days,
            )
        if vectors is None and settings.vector_store == "s3vectors":
            from agentmem.adapters.aws.s3vectors_index import S3VectorsIndex

            vectors = S3VectorsIndex(settings.vector_bucket or "", dimension=settings.embedding_dimension)
        elif vectors is None:
            from agentmem.adapters.aws.opensearch_index import OpenSearchVectorIndex

            vectors = OpenSearchVectorIndex(
                settings.opensearch_endpoint or "",
                settings.vector_index,
                dimension=settings.embedding_dimension,
            )
        if embedder is None:
            from agentmem.adapters.aws.bedrock_embedder import BedrockEmbedder

            embedder = BedrockEmbedder(settings.embedding_model_id, settings.embedding_dimension)
        if lexical is None:
            from agentmem.adapters.aws.opensearch_index import OpenSearchVectorIndex

            # OpenSearch has a keyword side (a `text` field, BM25); S3 Vectors has none: vector-only recall.
            if isinstance(vectors, OpenSearchVectorIndex):
                from agentmem.adapters.aws.opensearch_lexical import OpenSearchLexicalIndex

                lexical = OpenSearchLexicalIndex.beside(vectors)
        if bus is None:
            from agentmem.adapters.aws.eventbridge_bus import EventBridgeBus

            bus = EventBridgeBus(settings.event_bus_name or "")
    guarded_vectors = GuardedVectorIndex(vectors)
    # The masking step first: every service that stores user text is built with it (none can go without).
    conversations = build_conversations(settings, bus, guarded_vectors)
    memory = MemoryService(
        settings=settings,
        store=store,
        vectors=guarded_vectors,
        embedder=GuardedEmbedder(embedder),
        bus=bus,
        # One masking step for every write path: the agent side masks with the same vault as turns.
        masker=conversations,
    )
    items = build_items(settings, memory, conversations)
    profiles, facts, consolidation = build_user_memory(settings, memory, conversations, llm)
    turn_recall = build_turn_recall(settings, memory, conversations, lexical)
    user_memory = UserMemoryService(
        conversations=conversations, profiles=profiles, facts=facts, recall=turn_recall
    )
    retrieval = RetrievalService(memory=memory, users=user_memory)
    services = Services(
        settings=settings, memory=memory, retrieval=retrieval,
        conversations=conversations, user_memory=user_memory,
        profiles=profiles, facts=facts, consolidation=consolidation, idempotency_store=idempotency_store,
        turn_recall=turn_recall, lexical=lexical, items=items,
        user_search=UserSearchService(
            masker=conversations.mask_text, embedder=memory.embedder, facts=facts, recall=turn_recall, items=items
        ),
    )
    conversations.append_key_forgetters.append(services.forget_turn_appends)
    if settings.backend == "aws" and settings.settings_parameter:
        from agentmem.adapters.aws.ssm_settings import SsmSettingsParameter

        services.runtime = RuntimeSettings(
            settings, SsmSettingsParameter(settings.settings_parameter, max_age=settings.settings_max_age_seconds)
        )
    return services


def build_turn_recall(
    settings: Settings, memory: MemoryService, conversations: ConversationService, lexical: LexicalIndex | None
) -> TurnRecallService:
    """The search over users' past turns: vectors always, a keyword side where the backend has one.

    The keyword index is erased with the user (the vector index's turns already are).
    """
    search = HybridTurnRetriever(
        settings.tenant, embedder=memory.embedder, vectors=memory.vectors, lexical=lexical, adjacent=adjacent_turn_ids
    )
    recall = TurnRecallService(tenant=settings.tenant, transcripts=conversations.transcripts, search=search)
    conversations.thread_forgetters.append(recall.forget_thread_turns)
    if lexical is not None:
        keywords = lexical
        conversations.user_erasers.append(lambda tenant, user_id: keywords.delete_owner(tenant, "turn", user_id))
    return recall


def build_idempotency_store(settings: Settings) -> BasePersistenceLayer:
    """Where powertools keeps feedback's idempotency records: the tenant table, or a SQLite file locally."""
    if settings.backend == "local":
        from agentmem.adapters.local.idempotency_store import IDEMPOTENCY_DB, SqliteIdempotencyStore

        return SqliteIdempotencyStore(settings.data_dir / IDEMPOTENCY_DB)
    from agentmem.api.idempotency import dynamodb_store

    return dynamodb_store(settings.table_name or "", settings.tenant)


def build_pii_detector(settings: Settings) -> PiiDetector:
    """The backend's full PII detector, used before storage and before any model call.

    Locally: validated structured identifiers plus Presidio over the pinned spaCy pipeline (names,
    places, organisations), the pipeline loaded once per process on first use. On AWS: the same
    structured rules plus Amazon Comprehend.
    """
    from agentmem.adapters.local.pii_regex import RegexPiiDetector

    if settings.backend == "local":
        from agentmem.adapters.local.presidio_pii import LocalPiiDetector

        return LocalPiiDetector()
    from agentmem.adapters.aws.comprehend_pii import CombinedPiiDetector, ComprehendPiiDetector

    return CombinedPiiDetector(RegexPiiDetector(), ComprehendPiiDetector())


class _MaskingDetector:
    """The detector the conversation side masks with, read at each call, so the guard before the model
    and the masking before storage can never use different detectors."""

    def __init__(self, conversations: ConversationService) -> None:
        self._conversations = conversations

    def detect(self, text: str) -> list[PiiSpan]:
        return self._conversations.detector.detect(text)


def build_conversations(settings: Settings, bus: EventBus, vectors: VectorIndex) -> ConversationService:
    """Transcripts, the PII vault, its keys and the PII detector for `settings.backend`."""
    if settings.backend == "local":
        from agentmem.adapters.local.key_file import KEY_FILE_NAME, LocalKeyFile
        from agentmem.adapters.local.key_store import KEY_STORE_DB, SqliteKeyStore
        from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
        from agentmem.adapters.local.vault_store import SqliteVaultStore

        transcripts: Any = SqliteTranscriptStore(settings.data_dir / "transcripts.db")
        key_store: Any = SqliteKeyStore(settings.data_dir / KEY_STORE_DB)
        # A data folder from before the key store had a file of its own: its keys move there first.
        key_store.import_legacy_keys(settings.data_dir / "vault.db")
        vault: Any = SqliteVaultStore(settings.data_dir / "vault.db")
        keys: Any = LocalKeyFile(settings.data_dir / KEY_FILE_NAME)
    else:
        from agentmem.adapters.aws.dynamodb_keys import DynamoDbKeyStore
        from agentmem.adapters.aws.dynamodb_transcripts import DynamoDbTranscriptStore
        from agentmem.adapters.aws.dynamodb_vault import DynamoDbVaultStore
        from agentmem.adapters.aws.kms_keys import KmsKeyProvider

        transcripts = DynamoDbTranscriptStore(settings.table_name or "")
        vault = DynamoDbVaultStore(settings.table_name or "")
        key_store = DynamoDbKeyStore(settings.key_table_name or "")
        keys = KmsKeyProvider(settings.kms_key_arn or "", settings.hmac_key_arn)
    conversations = ConversationService(
        tenant=settings.tenant, transcripts=transcripts, vault=vault, key_store=key_store, keys=keys,
        detector=build_pii_detector(settings), bus=bus, vectors=vectors,
    )
    forget_events = getattr(bus, "forget_user", None)
    if settings.backend == "local" and forget_events is not None:  # the local outbox keeps delivered events
        conversations.user_erasers.append(forget_events)
    return conversations


def build_llm(settings: Settings) -> LanguageModel:
    """The language model consolidation uses: an OpenAI-compatible endpoint, Bedrock, or the offline rules.

    `openaiBaseUrl` (with `openaiModel`) wins, then `llmModelId` (Bedrock Converse); with
    neither, the offline rule set, which says in the log what it can and cannot extract.
    """
    if settings.openai_base_url:
        import os

        from agentmem.adapters.llm.openai_llm import OpenAICompatibleModel

        # Local servers (Ollama, vLLM) need no key; a hosted endpoint reads it from the environment.
        return OpenAICompatibleModel(
            settings.openai_base_url, settings.openai_model or "", api_key=os.environ.get("OPENAI_API_KEY")
        )
    if settings.llm_model_id:
        from agentmem.adapters.aws.bedrock_llm import BedrockConverseModel

        return BedrockConverseModel(settings.llm_model_id)
    from agentmem.adapters.local.offline_llm import OfflineRuleModel

    log.info("no language model configured; %s", OfflineRuleModel.describe())
    return OfflineRuleModel()


def build_items(settings: Settings, memory: MemoryService, conversations: ConversationService) -> ItemService:
    """Key-addressed items of users and agents (LangGraph's store); a user's are erased with the user."""
    if settings.backend == "local":
        from agentmem.adapters.local.item_store import SqliteItemStore

        store: Any = SqliteItemStore(settings.data_dir / "items.db")
    else:
        from agentmem.adapters.aws.dynamodb_items import DynamoDbItemStore

        store = DynamoDbItemStore(settings.table_name or "")
    items = ItemService(
        tenant=settings.tenant, store=store, vectors=memory.vectors,
        embedder=memory.embedder, masker=conversations,
    )
    conversations.user_erasers.append(items.erase_user)
    return items


def build_user_memory(
    settings: Settings, memory: MemoryService, conversations: ConversationService, llm: LanguageModel | None
) -> tuple[ProfileService, FactService, ConsolidationService]:
    """Profiles, facts and their consolidation, registered with the conversation side for erasure."""
    from agentmem.adapters.local.pii_regex import RegexPiiDetector
    from agentmem.service.consolidation import PiiGuardedModel

    if settings.backend == "local":
        from agentmem.adapters.local.fact_store import SqliteFactStore
        from agentmem.adapters.local.profile_store import SqliteProfileStore

        profile_store: Any = SqliteProfileStore(settings.data_dir / "profiles.db")
        fact_store: Any = SqliteFactStore(settings.data_dir / "facts.db")
    else:
        from agentmem.adapters.aws.dynamodb_facts import DynamoDbFactStore
        from agentmem.adapters.aws.dynamodb_profiles import DynamoDbProfileStore

        profile_store = DynamoDbProfileStore(settings.table_name or "")
        fact_store = DynamoDbFactStore(settings.table_name or "")
    # Whatever the model, it only ever gets text the backend's full PII check has passed (names and
    # addresses too; the turns are masked already).
    model = PiiGuardedModel(
        llm if llm is not None else build_llm(settings), _MaskingDetector(conversations),
        system_detector=RegexPiiDetector(),
    )
    profiles = ProfileService(
        tenant=settings.tenant, store=profile_store, token_budget=settings.profile_token_budget,
        bus=memory.bus,
        # A user's own edit is masked like a turn, with the user's tokens.
        masker=conversations.mask_text,
    )
    facts = FactService(
        tenant=settings.tenant, store=fact_store, vectors=memory.vectors, embedder=memory.embedder, llm=model,
        masker=conversations.mask_text,
    )
    consolidation = ConsolidationService(
        tenant=settings.tenant, transcripts=conversations.transcripts, profiles=profiles, facts=facts, llm=model
    )
    conversations.user_erasers.extend([profiles.erase_user, facts.erase_user, memory.erase_user_runs])
    conversations.thread_forgetters.append(profiles.rewind_thread)
    if settings.backend == "local":
        from agentmem.adapters.local.sqlite_base import checkpoint_open_databases

        data_dir = settings.data_dir

        def checkpoint_files(_tenant: str, _user: str) -> None:
            # Last: every SQLite file of the data folder folds and truncates its WAL, so no `-wal` keeps a copy.
            checkpoint_open_databases(data_dir)

        conversations.user_erasers.append(checkpoint_files)
    return profiles, facts, consolidation


_lock = threading.Lock()
_services: Services | None = None


def get_services() -> Services:
    """The process's services, built on first use, with the run-time settings in force applied."""
    global _services
    with _lock:
        if _services is None:
            _services = build_services(get_settings())
        _services.refresh_settings()
        return _services


def set_services(services: Services | None) -> None:
    """Install (or clear, with None) the services handlers use: the local server and tests do this."""
    global _services
    with _lock:
        _services = services
