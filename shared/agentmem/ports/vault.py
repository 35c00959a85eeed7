"""The PII vault's ports: the key provider (KMS or a local key file), the key store and the vault store.

The key provider never sees a stored value; the key store holds only wrapped data keys; the vault
store never sees a plaintext key or value. The key store is kept apart from everything else (its own
SQLite file, its own DynamoDB table without point-in-time recovery), so that a backup of the data
taken before an erase, put next to the key store as it is after the erase, decrypts nothing of the
erased user: their only wrapped data key is gone from the one place that had it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class GeneratedKey:
    """A new data key: the plaintext (kept in memory only) and its wrapped form (the one stored)."""

    plaintext: bytes
    wrapped: bytes


class KeyProvider(Protocol):
    """Wraps per-user data keys under the tenant's key-encryption key (and keys the legacy thread hashes).

    AWS: KMS (GenerateDataKey/Decrypt/ReEncrypt with the context, GenerateMac). Local: a key file.
    Raises `BackendUnavailable("keys", ...)` when the provider cannot be reached.
    """

    def generate_data_key(self, context: Mapping[str, str]) -> GeneratedKey:
        """A fresh AES-256 data key bound to `context` (`{"tenant", "userId"}`)."""

    def unwrap(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        """The plaintext of a wrapped data key; fails for any other context."""

    def rewrap(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        """The same data key wrapped under the current key-encryption key (after a rotation)."""

    def thread_hash(self, tenant: str, user_id: str, thread_id: str) -> str:
        """Eight hex characters over `tenant/user/thread`, keyed with the tenant's secret.

        What tokens made before per-user token scopes carry. The service no longer asks for it: a
        tenant secret outlives every erase, so a hash under it links a token back to the user id for
        ever; tokens are now scoped with the subject's own data key (`envelope.token_scope_hash`).
        """


@dataclass(frozen=True)
class WrappedDataKey:
    """A user's data key as stored: only wrapped."""

    tenant: str
    user_id: str
    version: int
    wrapped: bytes
    created_at: float


@dataclass(frozen=True)
class VaultEntry:
    """One original value, encrypted under its user's data key with the token as associated data."""

    tenant: str
    user_id: str
    thread_id: str  # the scope the token is unique in (`*`: the subject's whole vault), see VaultStore
    token: str
    entity_type: str
    fingerprint: str  # value_fingerprint(): finds the token a value already has in its scope
    ciphertext: bytes
    key_version: int
    created_at: float


class KeyStore(Protocol):
    """Users' wrapped data keys, per tenant and user, in a store of their own.

    Raises `BackendUnavailable("keys", ...)` when the backend cannot be reached.
    """

    def get_data_key(self, tenant: str, user_id: str) -> WrappedDataKey | None:
        """The user's newest data key, or None when the user has none (yet, or any more)."""

    def add_data_key(self, key: WrappedDataKey) -> WrappedDataKey:
        """Store a user's data key unless one of that version exists; return the one stored.

        Two writers creating a user's first key at once both get the same key back.
        """

    def replace_wrapped_key(self, tenant: str, user_id: str, version: int, old: bytes, new: bytes) -> bool:
        """Swap the wrapped form of one data key if it is still `old` (re-wrapping); False otherwise."""

    def iter_data_keys(self, tenant: str, user_id: str | None = None) -> Iterator[WrappedDataKey]:
        """Every data key of the tenant (or of one user): what a re-wrap walks through."""

    def destroy_data_keys(self, tenant: str, user_id: str) -> None:
        """Delete every data key of a user (idempotent), leaving no copy in the store's own files.

        Their ciphertexts, wherever they are (backups of the data included), can never be read again.
        """


class VaultStore(Protocol):
    """Token counters and encrypted originals, per tenant and subject (a user, or an agent's subject).

    `thread_id` in these calls and in `VaultEntry` is the scope a token is unique in: `*` (the
    subject's whole vault) for every entry written since tokens became per subject; entries written
    before name the thread they were made in. Raises `BackendUnavailable("vault", ...)` when the
    backend cannot be reached.
    """

    def tokens_for_fingerprints(
        self, tenant: str, user_id: str, thread_id: str, fingerprints: Sequence[str]
    ) -> dict[str, str]:
        """The tokens already given in a thread to the values with these fingerprints."""

    def allocate_counters(self, tenant: str, user_id: str, thread_id: str, count: int) -> list[int]:
        """`count` token counters of a thread never handed out before (atomic; gaps are allowed)."""

    def last_counter(self, tenant: str, user_id: str, thread_id: str) -> int:
        """The highest counter handed out in a scope (0 before any): it moves whenever a value is added."""

    def value_index(self, tenant: str, user_id: str, thread_id: str) -> dict[str, str]:
        """Every fingerprint of a scope with its token: which values the scope holds, without a value."""

    def add_entry(self, entry: VaultEntry) -> str:
        """Store an entry unless its value already has a token in the scope; return the token that won.

        Two writers adding the same value to one scope at once end with one token for it.
        """

    def get_entries(self, tenant: str, user_id: str, tokens: Sequence[str]) -> list[VaultEntry]:
        """The entries of this user among `tokens` (another user's tokens are simply not found)."""

    def delete_user(self, tenant: str, user_id: str) -> None:
        """Delete every entry and counter of one user (idempotent)."""
