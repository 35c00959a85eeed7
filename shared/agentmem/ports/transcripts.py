"""The transcript store port: append-only conversation turns per tenant, user and thread.

Append-only: a stored turn is never edited. What can go is a thread's tail or the whole thread (the
user deleting their data: `truncate`), or every thread of an erased user (`delete_user`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agentmem.domain.errors import Conflict, InvalidInput
from agentmem.ports.records import Page


@dataclass(frozen=True)
class NewTurn:
    """A turn to append: already masked, its token count computed."""

    role: str
    content: str
    tokens: int


# How long an append's key answers for it: as long as the idempotency record of its request.
APPEND_KEY_SECONDS = 24 * 60 * 60


@dataclass(frozen=True)
class AppendKey:
    """An append's Idempotency-Key, stored with its turns in the same transaction.

    `fingerprint` is a digest of what was asked to be appended (api/idempotency.py keeps the
    request's answer, but a crash between the two writes would leave only this): the key sent again
    with the same turns is answered with the turns stored the first time; with others it is a Conflict.
    """

    key: str
    fingerprint: str


def turns_fingerprint(turns: Sequence[tuple[str, str]]) -> str:
    """The fingerprint of an append: a digest of its (role, content) pairs as the caller sent them."""
    return hashlib.sha256(json.dumps([list(t) for t in turns], separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class StoredTurn:
    """A stored turn. `seq` starts at 1 in every thread and grows by one per turn."""

    tenant: str
    user_id: str
    thread_id: str
    seq: int
    role: str
    content: str
    tokens: int
    created_at: float


@dataclass(frozen=True)
class UserSummary:
    """A user of the tenant: listed from their first stored turn until they are erased."""

    user_id: str
    created_at: float


@dataclass(frozen=True)
class ThreadSummary:
    """A thread with at least one turn: its newest `seq` and when a turn was last appended."""

    thread_id: str
    last_seq: int
    last_activity_at: float


class TranscriptStore(Protocol):
    """Append-only turns. Every call names tenant and user; nothing reads across either.

    Raises `BackendUnavailable("transcripts", ...)` when the backend cannot be reached.
    """

    def append(
        self, tenant: str, user_id: str, thread_id: str, turns: Sequence[NewTurn], created_at: float,
        *, key: AppendKey | None = None,
    ) -> list[StoredTurn]:
        """Store `turns` after the thread's last turn, all or none, with consecutive `seq`s.

        Two writers appending to one thread at once never get the same `seq`. With `key`, the key is
        written in the same transaction as the turns: when this thread already holds the key (stored
        less than APPEND_KEY_SECONDS before `created_at`), nothing is written and the turns stored
        under it come back; raises Conflict when its fingerprint differs.
        """

    def list_turns(
        self, tenant: str, user_id: str, thread_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[StoredTurn]:
        """Turns oldest first. Raises InvalidInput for a cursor this listing did not return."""

    def newest_turns(self, tenant: str, user_id: str, thread_id: str, limit: int) -> list[StoredTurn]:
        """The newest `limit` turns of a thread, oldest of them first; reads only those turns."""

    def get_turns(self, tenant: str, user_id: str, keys: Sequence[tuple[str, int]]) -> list[StoredTurn]:
        """The stored turns named by `(thread_id, seq)` keys, in the order given; unknown keys are skipped."""

    def thread_exists(self, tenant: str, user_id: str, thread_id: str) -> bool:
        """True when the thread has at least one stored turn."""

    def delete_user(self, tenant: str, user_id: str) -> None:
        """Delete every turn of every thread of one user (idempotent)."""

    def has_threads(self, tenant: str, user_id: str) -> bool:
        """True when the user has at least one thread with a stored turn."""

    def truncate(self, tenant: str, user_id: str, thread_id: str, from_seq: int) -> list[StoredTurn]:
        """Delete the thread's turns with `seq >= from_seq` (all of them, and the thread, for `from_seq <= 1`)
        and the append keys recorded for them; returns the turns deleted, oldest first (idempotent).

        The next append continues after the turns kept: a `seq` removed is given again.
        """

    def list_users(
        self, tenant: str, *, limit: int, cursor: str | None = None, prefix: str = ""
    ) -> Page[UserSummary]:
        """The tenant's users whose id starts with `prefix`, by user id (code point order).

        A user is listed from the append that stored their first turn (deleting threads does not
        unlist them) until `delete_user`. Raises InvalidInput for a cursor this listing did not return.
        """

    def list_threads(
        self, tenant: str, user_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[ThreadSummary]:
        """The user's threads that hold a turn, newest activity first (ties: thread id, descending).

        A thread appended to while pages are read moves to the front: it is not met again in the
        pages after. Raises InvalidInput for a cursor this listing did not return.
        """

    def remember_append_key(self, tenant: str, user_id: str, thread_id: str, to_seq: int, key: str) -> None:
        """Record that the append ending at `to_seq` carried the client's Idempotency-Key `key`."""

    def append_keys(self, tenant: str, user_id: str, thread_id: str, from_seq: int) -> list[str]:
        """The Idempotency-Keys recorded for the thread's appends that stored a turn with `seq >= from_seq`."""

    def user_append_keys(self, tenant: str, user_id: str) -> list[tuple[str, str]]:
        """Every `(thread_id, Idempotency-Key)` recorded for the user's appends, in all their threads.

        What an erase reads before the turns go, to delete the idempotency records of those appends.
        """


def key_conflict() -> Conflict:
    """The error of an append key sent again with other turns (the same words in both adapters)."""
    return Conflict("this Idempotency-Key was used with other turns in this thread")


def _thread_binding(tenant: str, user_id: str, thread_id: str) -> str:
    return hashlib.sha256(f"{tenant}/{user_id}/{thread_id}".encode()).hexdigest()[:12]


def encode_turn_cursor(tenant: str, user_id: str, thread_id: str, after_seq: int) -> str:
    """An opaque cursor: the last `seq` of a page, bound to its thread (both adapters use it)."""
    raw = json.dumps({"s": after_seq, "t": _thread_binding(tenant, user_id, thread_id)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_turn_cursor(cursor: str, tenant: str, user_id: str, thread_id: str) -> int:
    """The `seq` a cursor continues after; InvalidInput unless this thread's listing returned it."""
    try:
        plain = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        valid = (
            isinstance(plain, dict)
            and set(plain) == {"s", "t"}
            and isinstance(plain["s"], int)
            and plain["s"] >= 0
            and plain["t"] == _thread_binding(tenant, user_id, thread_id)
        )
    except (ValueError, TypeError, binascii.Error):
        valid = False
    if not valid:
        raise InvalidInput("invalid cursor", [{"field": "cursor", "message": "not a cursor this API returned"}])
    return int(plain["s"])


def _bad_cursor() -> InvalidInput:
    return InvalidInput("invalid cursor", [{"field": "cursor", "message": "not a cursor this API returned"}])


def _encode(plain: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(plain, separators=(",", ":")).encode()).decode().rstrip("=")


def _decode(cursor: str) -> object:
    try:
        return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, TypeError, binascii.Error):
        raise _bad_cursor() from None


def encode_user_cursor(tenant: str, prefix: str, last_user_id: str) -> str:
    """An opaque cursor of the users listing: the last user id of a page, bound to the tenant and prefix."""
    return _encode({"u": last_user_id, "b": hashlib.sha256(f"{tenant}/{prefix}".encode()).hexdigest()[:12]})


def decode_user_cursor(cursor: str, tenant: str, prefix: str) -> str:
    """The user id a users cursor continues after; InvalidInput unless this listing returned it."""
    plain = _decode(cursor)
    binding = hashlib.sha256(f"{tenant}/{prefix}".encode()).hexdigest()[:12]
    if not (isinstance(plain, dict) and set(plain) == {"u", "b"} and isinstance(plain["u"], str)
            and plain["b"] == binding):
        raise _bad_cursor()
    return str(plain["u"])


def encode_thread_cursor(tenant: str, user_id: str, last: ThreadSummary) -> str:
    """An opaque cursor of a user's threads: the (activity, thread id) of a page's last thread."""
    binding = hashlib.sha256(f"{tenant}/{user_id}".encode()).hexdigest()[:12]
    return _encode({"a": last.last_activity_at, "t": last.thread_id, "b": binding})


def decode_thread_cursor(cursor: str, tenant: str, user_id: str) -> tuple[float, str]:
    """The (activity, thread id) a threads cursor continues after; InvalidInput unless this listing returned it."""
    plain = _decode(cursor)
    binding = hashlib.sha256(f"{tenant}/{user_id}".encode()).hexdigest()[:12]
    if not (isinstance(plain, dict) and set(plain) == {"a", "t", "b"} and isinstance(plain["t"], str)
            and isinstance(plain["a"], int | float) and not isinstance(plain["a"], bool) and plain["b"] == binding):
        raise _bad_cursor()
    return float(plain["a"]), str(plain["t"])


def threads_after(threads: Sequence[ThreadSummary], after: tuple[float, str] | None) -> list[ThreadSummary]:
    """`threads` newest activity first, from just after the position `after` (both adapters page this way)."""
    ordered = sorted(threads, key=lambda t: (t.last_activity_at, t.thread_id), reverse=True)
    if after is None:
        return ordered
    return [t for t in ordered if (t.last_activity_at, t.thread_id) < after]
