"""Envelope encryption of the PII vault: per-user data keys, AES-256-GCM, and a cache of unwrapped keys.

Each user has a 256-bit data key. It is stored only wrapped: by KMS (`GenerateDataKey`, encryption
context `{"tenant", "userId"}`) in AWS, by a key-encryption key (KEK) in a 0600 file of the data
folder locally. Every original value is encrypted with the user's data key under AES-256-GCM, with
its token as associated data, so a ciphertext moved onto another token (or another user) fails to
decrypt instead of revealing the wrong value. Destroying the user's wrapped data keys makes every
copy of their ciphertexts, backups included, undecryptable: crypto-shredding is what "erase" means.

Why not the AWS Encryption SDK or the AWS Database Encryption SDK for DynamoDB:

- The Encryption SDK puts a KMS-wrapped data key inside every message (or shares one through its
  caching materials manager). Either way the key that decrypts a value travels with the value, so a
  backup stays decryptable for as long as the tenant's KMS key exists: erasing one user would mean
  finding and deleting every copy. Per-user crypto-shredding needs the user's key in exactly one
  deletable record, which is the data key stored here. Used with a raw AES keyring over that same
  data key, the SDK would add its message format (a header of 100+ bytes per value) and a dependency,
  and nothing else.
- The Database Encryption SDK's hierarchical keyring comes close (branch keys in a key-store table),
  but it needs a second table, the Dafny-generated material providers (a heavy import on every cold
  start), and it does not exist for SQLite: the embedded mode would need a second scheme for the same
  contract. Branch keys are per tenant or per branch, not per user, unless one is created per user.
- What is written by hand here is small and standard: AES-256-GCM from `cryptography` (OpenSSL),
  a fresh 96-bit random nonce per encryption (a user's key encrypts far fewer than the 2^32 values
  NIST allows with random nonces), a version byte in front of every blob for later changes.

Nothing here performs I/O: the KMS and key-file adapters wrap and unwrap, the service composes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

DATA_KEY_BYTES = 32
NONCE_BYTES = 12
# First byte of every blob this module writes: lets a later format coexist with this one.
BLOB_VERSION = 1
_FINGERPRINT_KEY_LABEL = b"agentmem/vault/fingerprint/v1"
_TOKEN_SCOPE_LABEL = b"agentmem/vault/token-scope/v1"
TOKEN_SCOPE_HASH_LENGTH = 8


class DecryptionFailed(ValueError):
    """A blob did not authenticate: wrong key, wrong associated data, or tampered bytes."""


def encryption_context(tenant: str, user_id: str) -> dict[str, str]:
    """The context a user's data key is bound to: KMS `EncryptionContext`, or the local wrap's AAD."""
    return {"tenant": tenant, "userId": user_id}


def canonical_context(context: Mapping[str, str]) -> bytes:
    """`context` as deterministic bytes (sorted keys, no spaces): associated data for a local wrap."""
    return json.dumps(dict(context), sort_keys=True, separators=(",", ":")).encode()


def new_data_key() -> bytes:
    """A fresh random 256-bit data key (used by the local key file; KMS makes its own)."""
    return os.urandom(DATA_KEY_BYTES)


def seal(key: bytes, plaintext: bytes, associated_data: bytes) -> bytes:
    """AES-256-GCM encryption: `version || nonce || ciphertext+tag`, with a fresh random nonce."""
    _check_key(key)
    nonce = os.urandom(NONCE_BYTES)
    return bytes([BLOB_VERSION]) + nonce + AESGCM(key).encrypt(nonce, plaintext, associated_data)


def open_sealed(key: bytes, blob: bytes, associated_data: bytes) -> bytes:
    """The plaintext of a `seal` blob; DecryptionFailed unless key, data and bytes all match."""
    _check_key(key)
    if len(blob) < 1 + NONCE_BYTES + 16 or blob[0] != BLOB_VERSION:
        raise DecryptionFailed("not a vault blob of a known version")
    nonce, body = blob[1 : 1 + NONCE_BYTES], blob[1 + NONCE_BYTES :]
    try:
        return AESGCM(key).decrypt(nonce, body, associated_data)
    except InvalidTag:
        raise DecryptionFailed("the blob does not authenticate with this key and associated data") from None


def encrypt_value(data_key: bytes, token: str, value: str) -> bytes:
    """Encrypt an original value under the user's data key, its token as associated data."""
    return seal(data_key, value.encode("utf-8"), token.encode("utf-8"))


def decrypt_value(data_key: bytes, token: str, blob: bytes) -> str:
    """The original value behind `token`; DecryptionFailed if the blob belongs to another token or key."""
    return open_sealed(data_key, blob, token.encode("utf-8")).decode("utf-8")


def wrap_data_key(kek: bytes, data_key: bytes, context: Mapping[str, str]) -> bytes:
    """A data key encrypted under a key-encryption key, bound to `context` (the local KMS stand-in)."""
    return seal(kek, data_key, canonical_context(context))


def unwrap_data_key(kek: bytes, wrapped: bytes, context: Mapping[str, str]) -> bytes:
    """The data key inside `wrapped`; DecryptionFailed for another KEK or another context."""
    return open_sealed(kek, wrapped, canonical_context(context))


def value_fingerprint(data_key: bytes, thread_id: str, value: str) -> str:
    """A keyed fingerprint of `value` in one thread, to find the token it already has without storing it.

    It is an HMAC-SHA256 under a key derived from the user's data key, so it cannot be checked
    against guessed values (phone numbers, SSNs are few) without that key, and destroying the data
    key makes the fingerprints as meaningless as the ciphertexts.
    """
    _check_key(data_key)
    fingerprint_key = hmac.new(data_key, _FINGERPRINT_KEY_LABEL, hashlib.sha256).digest()
    message = thread_id.encode("utf-8") + b"\x00" + value.encode("utf-8")
    return hmac.new(fingerprint_key, message, hashlib.sha256).hexdigest()


def token_scope_hash(data_key: bytes) -> str:
    """The eight hex characters inside a subject's tokens: an HMAC-SHA256 keyed with the subject's data key.

    The data key is random per subject and exists only in the key store, destroyed by an erase: a token
    left anywhere after that (a lesson quoting it, a copy, a backup) names a scope nobody can compute
    again, so it cannot be linked back to the user id, not even with the tenant's secrets. Before, the
    hash was keyed with a tenant secret over the user id, which outlives every erase. A constant label
    as the message keeps this HMAC apart from the fingerprints' (a key derived under another label).
    """
    _check_key(data_key)
    return hmac.new(data_key, _TOKEN_SCOPE_LABEL, hashlib.sha256).hexdigest()[:TOKEN_SCOPE_HASH_LENGTH]


def value_fingerprinter(data_key: bytes, thread_id: str) -> Callable[[str], str]:
    """`value_fingerprint` of one key and thread as a function of the value, at about 2 us a value.

    For fingerprinting every candidate value of a text (consistent masking). The HMAC is the same
    RFC 2104 construction, with its inner and outer SHA-256 states (the key and the thread already
    absorbed) copied for each value: with OpenSSL 3, `hmac.digest` and `HMAC.copy` fetch the algorithm
    anew on every call and cost 5-10 us. A test holds it equal to `value_fingerprint`'s `hmac`.
    """
    _check_key(data_key)
    fingerprint_key = hmac.new(data_key, _FINGERPRINT_KEY_LABEL, hashlib.sha256).digest()
    block = fingerprint_key.ljust(hashlib.sha256().block_size, b"\x00")  # a 32-byte key fits in one block
    inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in block))
    inner.update(thread_id.encode("utf-8") + b"\x00")
    outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in block))

    def fingerprint(value: str) -> str:
        inner_hash = inner.copy()
        inner_hash.update(value.encode("utf-8"))
        outer_hash = outer.copy()
        outer_hash.update(inner_hash.digest())
        return outer_hash.hexdigest()

    return fingerprint


def _check_key(key: bytes) -> None:
    if len(key) != DATA_KEY_BYTES:
        raise ValueError(f"AES-256 needs a {DATA_KEY_BYTES}-byte key, got {len(key)} bytes")


@dataclass(frozen=True)
class DataKey:
    """A user's data key in use: its version, its wrapped form (what is stored) and the plaintext."""

    version: int
    wrapped: bytes
    plaintext: bytes


class DataKeyCache:
    """A short-lived, bounded, thread-safe cache of unwrapped data keys.

    It keeps the hot path (every append and unmask) off KMS for `ttl_seconds`. The TTL is also how
    long another process (a warm Lambda container) may keep using a key destroyed elsewhere; the
    ciphertexts are deleted with the key, so that window reaches no stored copy. `forget` drops a
    user's key at once (erasure in this process).
    """

    def __init__(
        self, ttl_seconds: float = 300.0, max_entries: int = 1024, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if ttl_seconds < 0 or max_entries < 0:
            raise ValueError("ttl_seconds and max_entries must be >= 0")
        self.ttl_seconds = ttl_seconds
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[tuple[str, str], tuple[float, DataKey]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, tenant: str, user_id: str) -> DataKey | None:
        """The cached key of a user, or None when absent or expired."""
        with self._lock:
            entry = self._entries.get((tenant, user_id))
            if entry is None:
                return None
            expires_at, key = entry
            if self._clock() >= expires_at:
                del self._entries[(tenant, user_id)]
                return None
            self._entries.move_to_end((tenant, user_id))
            return key

    def put(self, tenant: str, user_id: str, key: DataKey) -> None:
        """Remember a user's unwrapped key for the TTL; the least recently used entry goes when full."""
        if self.max_entries == 0 or self.ttl_seconds == 0:
            return
        with self._lock:
            self._entries[(tenant, user_id)] = (self._clock() + self.ttl_seconds, key)
            self._entries.move_to_end((tenant, user_id))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def forget(self, tenant: str, user_id: str) -> None:
        """Drop a user's key from the cache."""
        with self._lock:
            self._entries.pop((tenant, user_id), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
