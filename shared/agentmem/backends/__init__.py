"""The backends: one object per backend that builds every port for its settings.

`backend_for(settings)` names the one `settings.backend` chooses: `LocalBackend`
(files in the data folder, models on this machine) or `AwsBackend` (DynamoDB,
KMS, EventBridge, OpenSearch or S3 Vectors, Bedrock, Comprehend, SSM). Each
method builds one port and nothing else; the composition root
(`agentmem.wiring.build_services`) calls only the ones for ports it was not
given. Adapters are imported inside the methods, so a process loads only its
backend's libraries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

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
from agentmem.ports.transcripts import TranscriptStore
from agentmem.ports.vault import KeyProvider, KeyStore, VaultStore
from agentmem.ports.vectors import VectorIndex
from agentmem.service.conversations import UserEraser

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer


@dataclass(frozen=True)
class ConversationStores:
    """What the conversation side keeps: transcripts, the vault, the data keys and their wrapping keys."""

    transcripts: TranscriptStore
    vault: VaultStore
    key_store: KeyStore
    keys: KeyProvider


class Backend(Protocol):
    """Builds each port of one backend for its settings."""

    settings: Settings

    def record_store(self) -> RecordStore: ...

    def vector_index(self) -> VectorIndex: ...

    def embedder(self) -> Embedder: ...

    def event_bus(self) -> EventBus: ...

    def lexical_index(self, vectors: VectorIndex) -> LexicalIndex | None:
        """The keyword index of users' turns beside `vectors`, or None where the backend has none."""

    def pii_detector(self) -> PiiDetector: ...

    def conversation_stores(self) -> ConversationStores: ...

    def item_store(self) -> ItemStore: ...

    def profile_store(self) -> ProfileStore: ...

    def fact_store(self) -> FactStore: ...

    def language_model(self) -> LanguageModel: ...

    def idempotency_store(self) -> BasePersistenceLayer: ...

    def settings_store(self) -> SettingsStore | None:
        """Where the tenant's run-time settings are read from while serving, or None: fixed at start."""

    def outbox_erasers(self, bus: EventBus) -> list[UserEraser]:
        """Erasers of what `bus` keeps of a user, run right after the conversation side's own records."""

    def storage_erasers(self) -> list[UserEraser]:
        """Erasers run last, once every part is erased (locally: the SQLite files fold their WAL)."""


def backend_for(settings: Settings) -> Backend:
    """The backend `settings.backend` names."""
    if settings.backend == "local":
        from agentmem.backends.local import LocalBackend

        return LocalBackend(settings)
    from agentmem.backends.aws import AwsBackend

    return AwsBackend(settings)
