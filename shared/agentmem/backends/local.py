"""The local backend: every port on files of the data folder and models on this machine."""

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


class LocalBackend:
    """SQLite files in `settings.data_dir`, MiniLM, Presidio: what `agentmem serve` runs on."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.data = settings.data_dir

    def record_store(self) -> RecordStore:
        from agentmem.adapters.local.sqlite_store import SqliteRecordStore

        return SqliteRecordStore(self.data / "agentmem.db")

    def vector_index(self) -> VectorIndex:
        from agentmem.adapters.local.vector_index import LocalVectorIndex

        return LocalVectorIndex(self.data / "vectors.db")

    def embedder(self) -> Embedder:
        from agentmem.adapters.local.minilm import MiniLMEmbedder

        return MiniLMEmbedder(cache_size=self.settings.embedding_cache_size,
                              parallel_passes=self.settings.embedding_parallel_passes)

    def event_bus(self) -> EventBus:
        from agentmem.adapters.local.event_bus import SqliteEventBus

        return SqliteEventBus(self.data / "events.db")

    def lexical_index(self, vectors: VectorIndex) -> LexicalIndex | None:
        """BM25 over users' turns in a file of its own, whatever the vector index."""
        from agentmem.adapters.local.bm25_index import LocalBm25Index

        return LocalBm25Index(self.data / "lexical.db")

    def pii_detector(self) -> PiiDetector:
        """Validated structured identifiers plus Presidio over the pinned spaCy pipeline (names, places,
        organisations), the pipeline loaded once per process on first use."""
        from agentmem.adapters.local.spacy_import import import_spacy

        import_spacy()  # before Presidio imports it: spaCy's command line is left to load on first use
        from agentmem.adapters.local.presidio_pii import LocalPiiDetector

        return LocalPiiDetector()

    def conversation_stores(self) -> ConversationStores:
        from agentmem.adapters.local.key_file import KEY_FILE_NAME, LocalKeyFile
        from agentmem.adapters.local.key_store import KEY_STORE_DB, SqliteKeyStore
        from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
        from agentmem.adapters.local.vault_store import SqliteVaultStore

        transcripts = SqliteTranscriptStore(self.data / "transcripts.db")
        key_store = SqliteKeyStore(self.data / KEY_STORE_DB)
        # A data folder from before the key store had a file of its own: its keys move there first.
        key_store.import_legacy_keys(self.data / "vault.db")
        vault = SqliteVaultStore(self.data / "vault.db")
        return ConversationStores(transcripts, vault, key_store, LocalKeyFile(self.data / KEY_FILE_NAME))

    def item_store(self) -> ItemStore:
        from agentmem.adapters.local.item_store import SqliteItemStore

        return SqliteItemStore(self.data / "items.db")

    def profile_store(self) -> ProfileStore:
        from agentmem.adapters.local.profile_store import SqliteProfileStore

        return SqliteProfileStore(self.data / "profiles.db")

    def fact_store(self) -> FactStore:
        from agentmem.adapters.local.fact_store import SqliteFactStore

        return SqliteFactStore(self.data / "facts.db")

    def language_model(self) -> LanguageModel:
        return build_llm(self.settings)

    def idempotency_store(self) -> BasePersistenceLayer:
        """powertools' idempotency records in a SQLite file of the data folder."""
        from agentmem.adapters.local.idempotency_store import IDEMPOTENCY_DB, SqliteIdempotencyStore

        return SqliteIdempotencyStore(self.data / IDEMPOTENCY_DB)

    def settings_store(self) -> SettingsStore | None:
        # Locally the settings are the ones read when the process started (environment, agentmem.toml).
        return None

    def outbox_erasers(self, bus: EventBus) -> list[UserEraser]:
        # The local outbox keeps delivered events (the AWS bus keeps nothing to erase here).
        forget_events = getattr(bus, "forget_user", None)
        return [forget_events] if forget_events is not None else []

    def storage_erasers(self) -> list[UserEraser]:
        from agentmem.adapters.local.sqlite_base import checkpoint_open_databases

        data_dir = self.data

        def checkpoint_files(_tenant: str, _user: str) -> None:
            # Last: every SQLite file of the data folder folds and truncates its WAL, so no `-wal` keeps a copy.
            checkpoint_open_databases(data_dir)

        return [checkpoint_files]
