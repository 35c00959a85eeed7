"""The composition root: the services, each built with every port and part it needs, once per process.

Handlers ask for `get_services()`; the first call reads the settings, asks the
backend object they name (`agentmem.backends`: `LocalBackend`, `AwsBackend`)
for each port, and composes the services on them. Nothing is built at import
time, so a cold start pays only for what a request uses.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from agentmem.backends import backend_for
from agentmem.backends.llm import build_llm
from agentmem.config import Settings, get_settings
from agentmem.domain.errors import AgentMemError, BackendUnavailable
from agentmem.ports.embedder import Embedder
from agentmem.ports.events import EventBus
from agentmem.ports.lexical import LexicalIndex
from agentmem.ports.llm import LanguageModel
from agentmem.ports.pii import PiiDetector
from agentmem.ports.records import RecordStore
from agentmem.ports.vectors import VectorIndex
from agentmem.service.consolidation import ConsolidationService, PiiGuardedModel
from agentmem.service.conversations import ConversationService, UserEraser
from agentmem.service.erasure import MemoryErasure
from agentmem.service.facts import FactService
from agentmem.service.items import ItemService
from agentmem.service.memory import MemoryService
from agentmem.service.profiles import ProfileService
from agentmem.service.retrieval import RetrievalService
from agentmem.service.runtime_settings import FixedSettings, RuntimeSettings
from agentmem.service.turn_recall import TurnRecallService, adjacent_turn_ids, turn_thread_id
from agentmem.service.turn_search import HybridTurnRetriever
from agentmem.service.user_memory import UserMemoryService
from agentmem.service.user_search import UserSearchService

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer

log = logging.getLogger(__name__)
T = TypeVar("T")
__all__ = [
    "GuardedEmbedder", "GuardedVectorIndex", "IdempotencyLayer", "Services", "build_idempotency_store", "build_llm",
    "build_pii_detector", "build_services", "get_services", "set_services",
]


class IdempotencyLayer:
    """One powertools idempotency persistence layer, built on the first request with a key, then kept.

    Always present on `Services` (never None): only the layer inside is built late, as most requests
    carry no key and the AWS layer builds a boto3 client.
    """

    def __init__(self, build: Callable[[], BasePersistenceLayer], built: BasePersistenceLayer | None = None):
        self._build = build
        self._layer = built
        self._lock = threading.Lock()

    def get(self) -> BasePersistenceLayer:
        with self._lock:
            if self._layer is None:
                self._layer = self._build()
            return self._layer

    def close(self) -> None:
        close = getattr(self._layer, "close", None)
        if close:
            close()


class SettingsInForce(Protocol):
    """The settings to serve with now: `RuntimeSettings` (a run-time store) or `FixedSettings`."""

    def current(self) -> Settings: ...


@dataclass
class Services:
    """Everything a handler can call into, each part built (with all it needs) before this exists."""

    settings: Settings
    memory: MemoryService
    retrieval: RetrievalService
    conversations: ConversationService
    erasure: MemoryErasure
    user_memory: UserMemoryService
    profiles: ProfileService
    facts: FactService
    items: ItemService
    consolidation: ConsolidationService
    turn_recall: TurnRecallService
    user_search: UserSearchService
    # powertools' idempotency records of feedback (api/idempotency.py).
    feedback_idempotency: IdempotencyLayer
    # The same records for turn appends: a layer of its own, as powertools keeps one configuration per layer.
    turns_idempotency: IdempotencyLayer
    # The tenant's run-time settings (AWS: the SSM parameter), applied on each `get_services()`.
    runtime: SettingsInForce
    # The ports no service above closes (the keyword index), closed with the rest.
    closeables: tuple[object, ...]

    def feedback_idempotency_store(self) -> BasePersistenceLayer:
        """The idempotency persistence layer for `settings.backend`, built on first use."""
        return self.feedback_idempotency.get()

    def turns_idempotency_store(self) -> BasePersistenceLayer:
        """The idempotency persistence layer of turn appends (same table or file, its own key prefix)."""
        return self.turns_idempotency.get()

    def refresh_settings(self) -> None:
        """Apply the run-time settings in force, if they changed (a cached read when they did not)."""
        current = self.runtime.current()
        if current is not self.settings:
            self.apply_settings(current)

    def apply_settings(self, settings: Settings) -> None:
        """Make `settings` the ones every part reads from now on."""
        self.settings = settings
        self.memory.settings = settings
        self.profiles.token_budget = settings.profile_token_budget
        store = self.memory.store
        if hasattr(store, "max_age_days") and hasattr(store, "retention_days"):  # DynamoDB: new items' TTL
            store.max_age_days = settings.max_memory_age_days
            store.retention_days = settings.retention_days

    def close(self) -> None:
        for closeable in (self.memory.store, self.memory.vectors, self.memory.bus, *self.closeables):
            close = getattr(closeable, "close", None)
            if close:
                close()
        self.conversations.close()
        for part in (self.profiles, self.facts, self.items):
            close = getattr(part.store, "close", None)
            if close:
                close()
        for layer in (self.feedback_idempotency, self.turns_idempotency):
            layer.close()


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
    pii_detector: PiiDetector | None = None,
) -> Services:
    """Compose the services on the ports of `settings.backend`; any port given explicitly is used as it is."""
    from agentmem.adapters.local.pii_regex import RegexPiiDetector

    backend = backend_for(settings)
    store = store if store is not None else backend.record_store()
    vectors = vectors if vectors is not None else backend.vector_index()
    embedder = embedder if embedder is not None else backend.embedder()
    bus = bus if bus is not None else backend.event_bus()
    lexical = lexical if lexical is not None else backend.lexical_index(vectors)
    detector = pii_detector if pii_detector is not None else backend.pii_detector()
    feedback_idempotency = IdempotencyLayer(backend.idempotency_store, idempotency_store)
    turns_idempotency = IdempotencyLayer(backend.idempotency_store)
    settings_store = backend.settings_store()
    runtime: SettingsInForce = (
        FixedSettings(settings) if settings_store is None else RuntimeSettings(settings, settings_store)
    )

    guarded_vectors = GuardedVectorIndex(vectors)
    guarded_embedder = GuardedEmbedder(embedder)
    # The masking step first: every service that stores user text is built with it (none can go without).
    stores = backend.conversation_stores()
    conversations = ConversationService(
        tenant=settings.tenant, transcripts=stores.transcripts, vault=stores.vault, key_store=stores.key_store,
        keys=stores.keys, detector=detector, bus=bus, vectors=guarded_vectors,
    )
    memory = MemoryService(
        settings=settings, store=store, vectors=guarded_vectors, embedder=guarded_embedder, bus=bus,
        # One masking step for every write path: the agent side masks with the same vault as turns.
        masker=conversations,
    )
    items = ItemService(
        tenant=settings.tenant, store=backend.item_store(), vectors=guarded_vectors, embedder=guarded_embedder,
        masker=conversations,
    )
    # Whatever the model, it only ever gets text the backend's full PII check has passed (names and
    # addresses too; the turns are masked already): the same detector the conversation side masks with.
    model = PiiGuardedModel(
        llm if llm is not None else backend.language_model(), detector, system_detector=RegexPiiDetector(),
    )
    profiles = ProfileService(
        tenant=settings.tenant, store=backend.profile_store(), token_budget=settings.profile_token_budget,
        bus=bus,
        # A user's own edit is masked like a turn, with the user's tokens.
        masker=conversations.mask_text,
    )
    facts = FactService(
        tenant=settings.tenant, store=backend.fact_store(), vectors=guarded_vectors, embedder=guarded_embedder,
        llm=model, masker=conversations.mask_text,
    )
    consolidation = ConsolidationService(
        tenant=settings.tenant, transcripts=conversations.transcripts, profiles=profiles, facts=facts, llm=model
    )
    # Users' past turns: vectors always, a keyword side where the backend has one.
    turn_recall = TurnRecallService(
        tenant=settings.tenant, transcripts=conversations.transcripts,
        search=HybridTurnRetriever(settings.tenant, embedder=guarded_embedder, vectors=guarded_vectors,
                                   lexical=lexical, adjacent=adjacent_turn_ids, group=turn_thread_id),
    )

    def forget_turn_appends(user_id: str, thread_id: str, keys: list[str]) -> None:
        from agentmem.api.idempotency import forget_turn_appends

        forget_turn_appends(turns_idempotency.get(), settings.tenant, user_id, thread_id, keys)

    erasure = MemoryErasure(
        conversations=conversations,
        forget_append_keys=forget_turn_appends,
        user_erasers=(
            *backend.outbox_erasers(bus),
            items.erase_user, profiles.erase_user, facts.erase_user, memory.erase_user_runs,
            *(_keyword_eraser(lexical) if lexical is not None else []),
            *backend.storage_erasers(),
        ),
        thread_forgetters=(profiles.rewind_thread, turn_recall.forget_thread_turns),
    )
    user_memory = UserMemoryService(conversations=conversations, profiles=profiles, facts=facts, recall=turn_recall)
    return Services(
        settings=settings, memory=memory, retrieval=RetrievalService(memory=memory, users=user_memory),
        conversations=conversations, erasure=erasure, user_memory=user_memory, profiles=profiles, facts=facts,
        items=items, consolidation=consolidation, turn_recall=turn_recall,
        user_search=UserSearchService(
            masker=conversations.mask_text, embedder=guarded_embedder, facts=facts, recall=turn_recall, items=items
        ),
        feedback_idempotency=feedback_idempotency, turns_idempotency=turns_idempotency, runtime=runtime,
        closeables=(lexical,) if lexical is not None else (),
    )


def _keyword_eraser(lexical: LexicalIndex) -> list[UserEraser]:
    """The keyword index's turns of a user go with the user (the vector index's already do)."""
    return [lambda tenant, user_id: lexical.delete_owner(tenant, "turn", user_id)]


def build_idempotency_store(settings: Settings) -> BasePersistenceLayer:
    """Where powertools keeps feedback's idempotency records: the tenant table, or a SQLite file locally."""
    return backend_for(settings).idempotency_store()


def build_pii_detector(settings: Settings) -> PiiDetector:
    """The backend's full PII detector, used before storage and before any model call.

    Locally: validated structured identifiers plus Presidio over the pinned spaCy pipeline (names,
    places, organisations), the pipeline loaded once per process on first use. On AWS: the same
    structured rules plus Amazon Comprehend.
    """
    return backend_for(settings).pii_detector()


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
