"""Conversation memory: masked transcripts, the PII vault behind them, and erasing a user.

Every text of a subject (a user, or an agent's runs made without a user) is masked before it is
stored: personal data found by the detector becomes a token of that subject
(`{{PII_EMAIL_3f9a1c2b_1}}`), the same value of one subject always the same token, in every thread,
run or comment, and the original goes to the vault encrypted under the subject's data key, the
token as associated data. The eight hex characters name the subject's token scope (an HMAC keyed
with the subject's own data key, so destroyed with it by an erase), and two users' same value are
two tokens. Nothing downstream (the transcript
store, the record store, the event bus, the embedder, an LLM) sees an original value; only
`unmask` restores them, and only a user's own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agentmem.domain.envelope import (
    DataKey,
    DataKeyCache,
    DecryptionFailed,
    decrypt_value,
    encrypt_value,
    encryption_context,
    token_scope_hash,
    value_fingerprinter,
)
from agentmem.domain.errors import AgentMemError, BackendUnavailable, NotFound
from agentmem.domain.log_ids import log_id
from agentmem.domain.packing import HistoryTurn
from agentmem.domain.pii import (
    SUBJECT_TOKEN_SCOPE,
    PiiSpan,
    find_tokens,
    format_token,
    known_value_spans,
    mask,
    name_parts,
    unmask,
    value_candidates,
)
from agentmem.ports.clock import now
from agentmem.ports.events import DomainEvent, EventBus
from agentmem.ports.pii import PiiDetector
from agentmem.ports.records import Page
from agentmem.ports.transcripts import (
    AppendKey,
    NewTurn,
    StoredTurn,
    ThreadSummary,
    TranscriptStore,
    UserSummary,
    turns_fingerprint,
)
from agentmem.ports.vault import KeyProvider, KeyStore, VaultEntry, VaultStore, WrappedDataKey
from agentmem.ports.vectors import VectorIndex, VectorKind
from agentmem.service.vault_values import VaultValueIndex

TURNS_APPENDED = "TurnsAppended"
FIRST_DATA_KEY_VERSION = 1
# Vectors a user owns: erased with the user. Lessons belong to agents and stay.
USER_VECTOR_KINDS: tuple[VectorKind, ...] = ("fact", "turn")

log = logging.getLogger(__name__)

UserEraser = Callable[[str, str], None]
"""Erases one part of a user's memory: called with (tenant, user_id); must be idempotent."""

ThreadForgetter = Callable[[str, str, str, int, int], None]
"""Forgets what one part of memory keeps of a thread's turns `from_seq..to_seq`, before they are deleted:
called with (tenant, user_id, thread_id, from_seq, to_seq); must be idempotent."""

AppendKeysForgetter = Callable[[str, str, list[str]], None]
"""Deletes the idempotency records of a thread's appends: called with (user_id, thread_id, their keys)."""


class TokenCounting(Protocol):
    def count(self, text: str) -> int: ...


@dataclass(frozen=True)
class TurnInput:
    """A turn as the client sends it, before masking."""

    role: str
    content: str


@dataclass
class ConversationService:
    """Transcripts, the PII vault and erasure for the users of one tenant."""

    tenant: str
    transcripts: TranscriptStore
    vault: VaultStore
    key_store: KeyStore
    keys: KeyProvider
    detector: PiiDetector
    bus: EventBus | None = None
    vectors: VectorIndex | None = None
    counter: TokenCounting | None = None
    clock: Callable[[], float] = field(default=now)
    key_cache: DataKeyCache = field(default_factory=DataKeyCache)
    # The fingerprints of each subject's vault values, for consistent masking (read again when they change).
    known_values: VaultValueIndex = field(default_factory=VaultValueIndex)

    # Turns

    def append_turns(
        self, user_id: str, thread_id: str, turns: Sequence[TurnInput], idempotency_key: str | None = None
    ) -> list[StoredTurn]:
        """Mask and store turns at the end of a thread; returns them as stored, with `seq` and `tokens`.

        With `idempotency_key`, the key is stored with the turns (one transaction): sent again with the
        same turns, the turns stored the first time come back and nothing is appended (their event is
        published again: consolidation skips what it already folded); with other turns, Conflict.
        """
        masked = self._mask_texts(user_id, [turn.content for turn in turns])
        counter = self._counter()
        new_turns = [
            NewTurn(role=turn.role, content=text, tokens=counter.count(text))
            for turn, text in zip(turns, masked, strict=True)
        ]
        key = None if idempotency_key is None else AppendKey(
            idempotency_key, turns_fingerprint([(turn.role, turn.content) for turn in turns])
        )
        stored = self.transcripts.append(self.tenant, user_id, thread_id, new_turns, self.clock(), key=key)
        log.info(
            "turns appended",
            extra={"userHash": log_id(user_id), "threadHash": log_id(thread_id), "turns": len(stored)},
        )
        self._announce(user_id, thread_id, stored)
        return stored

    def list_turns(self, user_id: str, thread_id: str, limit: int, cursor: str | None = None) -> Page[StoredTurn]:
        """A page of a thread's masked turns, oldest first; NotFound for a thread with no turns."""
        page = self.transcripts.list_turns(self.tenant, user_id, thread_id, limit=limit, cursor=cursor)
        if not page.items and not self.transcripts.thread_exists(self.tenant, user_id, thread_id):
            raise NotFound(f"thread {thread_id} of user {user_id} not found")
        return page

    def list_users(self, limit: int, cursor: str | None = None, prefix: str = "") -> Page[UserSummary]:
        """The tenant's users (from their first turn until erased) whose id starts with `prefix`, by id."""
        return self.transcripts.list_users(self.tenant, limit=limit, cursor=cursor, prefix=prefix)

    def list_threads(self, user_id: str, limit: int, cursor: str | None = None) -> Page[ThreadSummary]:
        """The user's threads that hold a turn, newest activity first (none for an unknown user)."""
        return self.transcripts.list_threads(self.tenant, user_id, limit=limit, cursor=cursor)

    def remember_append_key(self, user_id: str, thread_id: str, stored: Sequence[StoredTurn], key: str) -> None:
        """Record the Idempotency-Key of an append that stored `stored`, so deleting its turns finds it."""
        if stored:
            self.transcripts.remember_append_key(self.tenant, user_id, thread_id, stored[-1].seq, key)

    def delete_turns(
        self, user_id: str, thread_id: str, from_seq: int, *,
        forget_append_keys: AppendKeysForgetter | None, thread_forgetters: Sequence[ThreadForgetter],
    ) -> list[StoredTurn]:
        """Delete the thread's turns with `seq >= from_seq` (the whole thread from 1); returns them, oldest first.

        First what other parts keep of them forget them (`thread_forgetters`: the recall indexes, the
        profile's watermark) and the idempotency records of their appends go (`forget_append_keys`), then
        the turns themselves (`agentmem.service.erasure.MemoryErasure` passes every part): a
        failure half-way leaves turns that deleting again removes, never an index entry without its turn.
        Facts and the profile text already learnt from them stay (deleting facts is its own route).
        Idempotent: nothing to delete is an empty list.
        """
        from_seq = max(1, from_seq)
        newest = self.transcripts.newest_turns(self.tenant, user_id, thread_id, 1)
        last = newest[0].seq if newest else 0
        self._forget(user_id, thread_id, from_seq, last, forget_append_keys, thread_forgetters)
        removed = self.transcripts.truncate(self.tenant, user_id, thread_id, from_seq)
        if removed and removed[-1].seq > last:  # appended meanwhile, and removed with the rest
            self._forget(user_id, thread_id, last + 1, removed[-1].seq, None, thread_forgetters)
        log.info(
            "turns deleted",
            extra={"userHash": log_id(user_id), "threadHash": log_id(thread_id), "turns": len(removed)},
        )
        return removed

    def recent_history(self, user_id: str, thread_id: str, limit: int) -> list[HistoryTurn]:
        """The newest `limit` turns of a thread (oldest first) with their stored token counts."""
        turns = self.transcripts.newest_turns(self.tenant, user_id, thread_id, limit)
        return [HistoryTurn(role=t.role, content=t.content, tokens=t.tokens, seq=t.seq) for t in turns]

    def mask_text(self, subject: str, text: str) -> str:
        """`text` with its personal data replaced by the subject's tokens (originals go to the vault)."""
        return self._mask_texts(subject, [text])[0]

    def mask_texts(self, subject: str, texts: Sequence[str]) -> list[str]:
        """Several texts of one subject masked at once: one vault round trip for all their values."""
        return self._mask_texts(subject, texts)

    def tokens_for_values(self, subject: str, entity_type_by_value: Mapping[str, str]) -> dict[str, str]:
        """The subject's token of each value, its entity type given by the caller (not a detector).

        For values no text detector is shown, such as a card or a phone given as a JSON number: the
        value goes to the vault like any found in a text, and gets the token it already has if any.
        """
        wanted = {value: entity_type for value, entity_type in entity_type_by_value.items() if value}
        if not wanted:
            return {}
        data_key = self._data_key(subject, create=True)
        assert data_key is not None
        return self._tokens_for(subject, token_scope_hash(data_key.plaintext), dict(wanted), data_key)

    # Vault

    def unmask(self, user_id: str, thread_id: str, text: str) -> str:
        """`text` with every token of this user restored, from any of their threads.

        Tokens of another user, of an erased user, or forged ones are left as they are. The
        thread only names where the request comes from: a new thread may quote older tokens.
        """
        tokens = [found.token for found in find_tokens(text)]
        if not tokens:
            return text
        entries = self.vault.get_entries(self.tenant, user_id, tokens)
        if not entries:
            return text
        data_key = self._data_key(user_id, create=False)
        if data_key is None:
            return text
        originals: dict[str, str] = {}
        for entry in entries:
            if entry.key_version != data_key.version:
                continue
            try:
                originals[entry.token] = decrypt_value(data_key.plaintext, entry.token, entry.ciphertext)
            except DecryptionFailed:
                # Never the value, never the token's content in the log: only that one failed.
                log.warning("vault entry did not decrypt", extra={"userHash": log_id(user_id)})
        return unmask(text, originals.get)

    def rewrap_data_keys(self, user_id: str | None = None) -> int:
        """Re-wrap every data key of the tenant (or of one user) under the current key-encryption key.

        For after a KEK rotation, when old key versions should stop being needed. The data keys
        themselves do not change, so no value is re-encrypted. Returns how many keys were re-wrapped;
        a key changed concurrently (erased, re-wrapped) is skipped.
        """
        rewrapped = 0
        for stored in list(self.key_store.iter_data_keys(self.tenant, user_id)):
            context = encryption_context(self.tenant, stored.user_id)
            new = self.keys.rewrap(stored.wrapped, context)
            if self.key_store.replace_wrapped_key(self.tenant, stored.user_id, stored.version, stored.wrapped, new):
                rewrapped += 1
        log.info("data keys re-wrapped", extra={"count": rewrapped})
        return rewrapped

    # Users

    def erase_user(
        self, user_id: str, *, forget_append_keys: AppendKeysForgetter | None, user_erasers: Sequence[UserEraser]
    ) -> None:
        """Erase a user (or an agent's subject): data keys first, so no copy anywhere decrypts, then every record.

        The idempotency records of the user's keyed appends (`forget_append_keys`: their answers hold the
        user id and the masked turns) go before the keys that find them go with the turns; then the
        transcripts, the vault, the user's vectors, and last every other part, in order (`user_erasers`:
        profile, facts, items, runs...; `agentmem.service.erasure.MemoryErasure` passes every part).
        Idempotent. The key store is read on every use of a key (the cache saves only the unwrap),
        so once the keys are destroyed no process masks or unmasks with them again.
        """
        self.key_store.destroy_data_keys(self.tenant, user_id)
        self.key_cache.forget(self.tenant, user_id)
        self.known_values.forget(self.tenant, user_id)
        if forget_append_keys is not None:
            self._forget_user_appends(user_id, forget_append_keys)
        self.transcripts.delete_user(self.tenant, user_id)
        self.vault.delete_user(self.tenant, user_id)
        if self.vectors is not None:
            for kind in USER_VECTOR_KINDS:
                self.vectors.delete_owner(self.tenant, kind, user_id)
        for erase in user_erasers:
            erase(self.tenant, user_id)
        log.info("user erased", extra={"userHash": log_id(user_id)})

    def close(self) -> None:
        for part in (self.transcripts, self.vault, self.key_store):
            close = getattr(part, "close", None)
            if close:
                close()

    # Internals

    def _forget_user_appends(self, user_id: str, forget_append_keys: AppendKeysForgetter) -> None:
        """Delete the idempotency records of every keyed append of the user, so a replay never answers
        with erased turns: sent again after the erase, it appends as for a user never seen."""
        keys_by_thread: dict[str, list[str]] = {}
        for thread_id, key in self.transcripts.user_append_keys(self.tenant, user_id):
            keys_by_thread.setdefault(thread_id, []).append(key)
        for thread_id, keys in keys_by_thread.items():
            forget_append_keys(user_id, thread_id, keys)

    def _forget(
        self, user_id: str, thread_id: str, from_seq: int, to_seq: int,
        forget_append_keys: AppendKeysForgetter | None, thread_forgetters: Sequence[ThreadForgetter],
    ) -> None:
        if forget_append_keys is not None:
            keys = self.transcripts.append_keys(self.tenant, user_id, thread_id, from_seq)
            if keys:
                forget_append_keys(user_id, thread_id, keys)
        # Also with no turn left to delete: a deletion that failed half-way may have left a watermark behind.
        for forget in thread_forgetters:
            forget(self.tenant, user_id, thread_id, from_seq, to_seq)

    def _mask_texts(self, subject: str, texts: Sequence[str]) -> list[str]:
        spans_per_text = [self._detect(text) for text in texts]
        # Consistent masking: a value already in the subject's vault is masked wherever it appears as
        # whole words, whatever the detector made of that sentence.
        data_key = self._data_key(subject, create=False)
        token_by_value = self._known_values_in(subject, data_key, texts) if data_key is not None else {}
        if not token_by_value and not any(spans_per_text):
            return list(texts)
        if data_key is None:  # the subject's first personal value: its data key, and so its token scope, begin
            data_key = self._data_key(subject, create=True)
            assert data_key is not None
        scope_hash = token_scope_hash(data_key.plaintext)
        spans_per_text = [
            spans + known_value_spans(text, token_by_value) for text, spans in zip(texts, spans_per_text, strict=True)
        ]
        # A dry run with the known tokens tells which values masking will replace (overlaps resolved,
        # tokens already in the text left alone), so tokens are fetched or made for exactly those.
        entity_type_by_value: dict[str, str] = {}
        for text, spans in zip(texts, spans_per_text, strict=True):
            for entity_type, value in mask(text, spans, scope_hash, token_by_value).assigned.values():
                entity_type_by_value.setdefault(value, entity_type)
        # A surname or first name alone names the person too: once the full name is in the vault, so are
        # its parts, and consistent masking finds them wherever they appear alone.
        for value, entity_type in list(entity_type_by_value.items()):
            if entity_type == "PERSON":
                for part in name_parts(value):
                    entity_type_by_value.setdefault(part, entity_type)
        if entity_type_by_value:
            new_tokens = self._tokens_for(subject, scope_hash, entity_type_by_value, data_key)
            token_by_value = {**token_by_value, **new_tokens}
            # A value found in one text of the batch is masked in the others too.
            spans_per_text = [
                spans + known_value_spans(text, new_tokens) for text, spans in zip(texts, spans_per_text, strict=True)
            ]
        masked = []
        for text, spans in zip(texts, spans_per_text, strict=True):
            result = mask(text, spans, scope_hash, token_by_value)
            if result.assigned:  # every value has its vault entry before any text is masked
                raise AssertionError("masking assigned a token that has no vault entry")
            masked.append(result.text)
        return masked

    def _known_values_in(self, subject: str, data_key: DataKey, texts: Sequence[str]) -> dict[str, str]:
        """The values of `texts` (runs of whole words) that the subject's vault holds, with their tokens."""
        index = self.known_values.tokens(self.vault, self.tenant, subject, data_key)
        if not index:
            return {}
        fingerprint = value_fingerprinter(data_key.plaintext, SUBJECT_TOKEN_SCOPE)
        found: dict[str, str] = {}
        for text in texts:
            for candidate in value_candidates(text):
                if candidate not in found:
                    token = index.get(fingerprint(candidate))
                    if token is not None:
                        found[candidate] = token
        return found

    def _tokens_for(
        self, subject: str, scope_hash: str, entity_type_by_value: dict[str, str], data_key: DataKey | None = None
    ) -> dict[str, str]:
        if data_key is None:
            data_key = self._data_key(subject, create=True)
        assert data_key is not None
        scope = SUBJECT_TOKEN_SCOPE
        fingerprint = value_fingerprinter(data_key.plaintext, scope)
        fingerprints = {value: fingerprint(value) for value in entity_type_by_value}
        known = self.vault.tokens_for_fingerprints(self.tenant, subject, scope, list(fingerprints.values()))
        new_values = [value for value, fp in fingerprints.items() if fp not in known]
        counters = self.vault.allocate_counters(self.tenant, subject, scope, len(new_values))
        created_at = self.clock()
        for value, counter in zip(new_values, counters, strict=True):
            token = format_token(entity_type_by_value[value], scope_hash, counter)
            entry = VaultEntry(
                tenant=self.tenant, user_id=subject, thread_id=scope, token=token,
                entity_type=entity_type_by_value[value], fingerprint=fingerprints[value],
                ciphertext=encrypt_value(data_key.plaintext, token, value),
                key_version=data_key.version, created_at=created_at,
            )
            # Another writer may have given this value a token in the meantime: theirs wins.
            known[fingerprints[value]] = self.vault.add_entry(entry)
        return {value: known[fp] for value, fp in fingerprints.items()}

    def _detect(self, text: str) -> list[PiiSpan]:
        if not text:
            return []
        try:
            return self.detector.detect(text)
        except AgentMemError:
            raise
        except Exception as exc:
            # Fail closed: a turn that could not be checked for personal data is not stored.
            log.exception("PII detection failed")
            raise BackendUnavailable("pii", f"PII detection unavailable: {type(exc).__name__}") from exc

    def _data_key(self, user_id: str, *, create: bool) -> DataKey | None:
        # Always read from the key store: a key destroyed by an erase (in any process) is never used
        # again. The cache keeps only what KMS would be asked for, the unwrap of that stored key.
        stored = self.key_store.get_data_key(self.tenant, user_id)
        context = encryption_context(self.tenant, user_id)
        plaintext: bytes | None = None
        if stored is None:
            self.key_cache.forget(self.tenant, user_id)
            if not create:
                return None
            generated = self.keys.generate_data_key(context)
            stored = self.key_store.add_data_key(
                WrappedDataKey(
                    tenant=self.tenant, user_id=user_id, version=FIRST_DATA_KEY_VERSION,
                    wrapped=generated.wrapped, created_at=self.clock(),
                )
            )
            # Whoever stored the user's first key first wins; the other generated key is dropped.
            plaintext = generated.plaintext if stored.wrapped == generated.wrapped else None
        else:
            cached = self.key_cache.get(self.tenant, user_id)
            if cached is not None and cached.version == stored.version and cached.wrapped == stored.wrapped:
                return cached
        if plaintext is None:
            plaintext = self.keys.unwrap(stored.wrapped, context)
        key = DataKey(version=stored.version, wrapped=stored.wrapped, plaintext=plaintext)
        self.key_cache.put(self.tenant, user_id, key)
        return key

    def _counter(self) -> TokenCounting:
        if self.counter is None:
            from agentmem.tokens import get_token_counter

            self.counter = get_token_counter()
        return self.counter

    def _announce(self, user_id: str, thread_id: str, stored: list[StoredTurn]) -> None:
        if self.bus is None or not stored:
            return
        # Ids and sequence numbers only: consumers read the (masked) turns from the store.
        event = DomainEvent(
            TURNS_APPENDED,
            {
                "tenant": self.tenant, "userId": user_id, "threadId": thread_id,
                "fromSeq": stored[0].seq, "toSeq": stored[-1].seq,
            },
        )
        try:
            receipts = self.bus.publish([event])
            failed = [r.error for r in receipts if not r.ok]
        except Exception as exc:  # the turns are stored; consolidation catches up on the next append
            failed = [type(exc).__name__]
        if failed:
            log.warning("TurnsAppended not published", extra={"errors": failed})
