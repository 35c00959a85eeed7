"""Which values a subject's vault already holds, as keyed fingerprints, cached per process.

Consistent masking looks every candidate value of a text up among the fingerprints of the subject's
vault (`VaultStore.value_index`), so a value masked once is masked in every later text, whatever the
detector says of it there. Reading the whole index for every text would cost a query each time; this
cache keeps it per subject and reads it again only when the subject's token counter has moved
(`VaultStore.last_counter`, one point read), that is when a value was added by any process.

What is cached is only fingerprints and tokens (HMACs under the subject's data key, never a value),
tied to the data key they were computed with: once an erase destroys that key, the entry matches
nothing and is dropped at the next look-up. A value whose counter was handed out but whose entry was
not yet written when the index was read (another writer, between its two calls) is picked up at the
next counter move; the detector still masks it where it finds it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from agentmem.domain.envelope import DataKey
from agentmem.domain.pii import SUBJECT_TOKEN_SCOPE
from agentmem.ports.vault import VaultStore

# About 200 bytes a fingerprint: the cache stays near 20 MB however many subjects pass through.
MAX_CACHED_FINGERPRINTS = 100_000


@dataclass(frozen=True)
class _Cached:
    key_version: int
    wrapped: bytes
    counter: int
    tokens: Mapping[str, str]


class VaultValueIndex:
    """The fingerprint -> token index of each subject's vault, refreshed when its counter moves."""

    def __init__(self, max_fingerprints: int = MAX_CACHED_FINGERPRINTS) -> None:
        self.max_fingerprints = max_fingerprints
        self._cached: OrderedDict[tuple[str, str], _Cached] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def tokens(self, vault: VaultStore, tenant: str, subject: str, key: DataKey) -> Mapping[str, str]:
        """The subject's fingerprint -> token index (scope `*`), for fingerprints made with `key`."""
        counter = vault.last_counter(tenant, subject, SUBJECT_TOKEN_SCOPE)
        with self._lock:
            cached = self._cached.get((tenant, subject))
            if (cached is not None and cached.counter == counter
                    and cached.key_version == key.version and cached.wrapped == key.wrapped):
                self._cached.move_to_end((tenant, subject))
                return cached.tokens
        tokens = vault.value_index(tenant, subject, SUBJECT_TOKEN_SCOPE) if counter else {}
        self._put((tenant, subject), _Cached(key.version, key.wrapped, counter, tokens))
        return tokens

    def forget(self, tenant: str, subject: str) -> None:
        """Drop what is cached of one subject (after an erase)."""
        with self._lock:
            self._drop((tenant, subject))

    def _put(self, at: tuple[str, str], entry: _Cached) -> None:
        with self._lock:
            self._drop(at)
            if len(entry.tokens) > self.max_fingerprints:
                return  # larger than the whole cache: read again each time rather than evict everyone
            self._cached[at] = entry
            self._size += len(entry.tokens)
            while self._size > self.max_fingerprints:
                _, evicted = self._cached.popitem(last=False)
                self._size -= len(evicted.tokens)

    def _drop(self, at: tuple[str, str]) -> None:
        old = self._cached.pop(at, None)
        if old is not None:
            self._size -= len(old.tokens)
