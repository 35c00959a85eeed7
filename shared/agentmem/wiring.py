"""The composition root: which adapter serves which port, built lazily once per process.

Handlers ask for `get_services()`; the first call reads the settings and
builds the adapters for `backend` (local files, or AWS clients). Nothing is
built at import time, so a cold start pays only for what a request uses.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from agentmem.config import Settings, get_settings
from agentmem.domain.errors import AgentMemError, BackendUnavailable
from agentmem.ports.embedder import Embedder
from agentmem.ports.events import EventBus
from agentmem.ports.records import RecordStore
from agentmem.ports.vectors import VectorIndex
from agentmem.service.memory import MemoryService
from agentmem.service.retrieval import RetrievalService

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Services:
    """Everything a handler can call into."""

    settings: Settings
    memory: MemoryService
    retrieval: RetrievalService
    extras: dict[str, Any]

    def close(self) -> None:
        for closeable in (self.memory.store, self.memory.vectors, self.memory.bus):
            close = getattr(closeable, "close", None)
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
    else:
        if store is None:
            from agentmem.adapters.aws.dynamodb_store import DynamoDbRecordStore

            store = DynamoDbRecordStore(settings.table_name or "", max_age_days=settings.max_memory_age_days)
        if vectors is None:
            from agentmem.adapters.aws.opensearch_index import OpenSearchVectorIndex

            vectors = OpenSearchVectorIndex(
                settings.opensearch_endpoint or "",
                settings.vector_index,
                dimension=settings.embedding_dimension,
            )
        if embedder is None:
            from agentmem.adapters.aws.bedrock_embedder import BedrockEmbedder

            embedder = BedrockEmbedder(settings.embedding_model_id, settings.embedding_dimension)
        if bus is None:
            from agentmem.adapters.aws.eventbridge_bus import EventBridgeBus

            bus = EventBridgeBus(settings.event_bus_name or "")
    memory = MemoryService(
        settings=settings,
        store=store,
        vectors=GuardedVectorIndex(vectors),
        embedder=GuardedEmbedder(embedder),
        bus=bus,
    )
    retrieval = RetrievalService(memory=memory)
    return Services(settings=settings, memory=memory, retrieval=retrieval, extras={})


_lock = threading.Lock()
_services: Services | None = None


def get_services() -> Services:
    """The process's services, built on first use."""
    global _services
    with _lock:
        if _services is None:
            _services = build_services(get_settings())
        return _services


def set_services(services: Services | None) -> None:
    """Install (or clear, with None) the services handlers use: the local server and tests do this."""
    global _services
    with _lock:
        _services = services
