"""Use cases of user profiles: read, the user's own edit, versions, restore, and the writes consolidation makes.

Every change is a new version written on the condition that the version it
was based on is still the current one, so no writer ever overwrites another's
update without having read it. The body is capped at the profile token budget
when it is written and again when it is read (the budget may have shrunk).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentmem.domain.errors import Conflict, InvalidInput, NotFound, TooLarge
from agentmem.domain.log_ids import log_id
from agentmem.domain.packing import Tokenizer
from agentmem.domain.profile import (
    SCHEMA_VERSION,
    ProfileMeta,
    ProfileSchemaError,
    empty_body,
    fit_to_budget,
    normalize_body,
    render_document,
    split_document,
)
from agentmem.ports.clock import now
from agentmem.ports.events import DomainEvent, EventBus
from agentmem.ports.profiles import ProfileSource, ProfileStore, ProfileVersion
from agentmem.ports.records import Page

PROFILE_UPDATED = "ProfileUpdated"
PROFILE_UNCHANGED = "ProfileUnchanged"
PROFILE_UPDATE_FAILED = "ProfileUpdateFailed"
# Attempts to rewind a thread's watermark while consolidation writes new versions.
REWIND_ATTEMPTS = 5

log = logging.getLogger(__name__)

TextMasker = Callable[[str, str], str]
"""(user_id, text) -> the text with its personal data replaced by the user's tokens."""


@dataclass(frozen=True)
class ProfileView:
    """A profile as the API shows it; version 0 (no `updated_at`) is the empty profile of a new user."""

    user_id: str
    version: int
    body: str
    updated_at: float | None
    turn_count: int
    source: ProfileSource | None = None
    restored_from: int | None = None
    schema_version: int = SCHEMA_VERSION

    @property
    def document(self) -> str:
        """The Markdown document: frontmatter and body."""
        meta = ProfileMeta(self.user_id, self.updated_at, self.turn_count, self.schema_version)
        return render_document(meta, self.body)


@dataclass
class ProfileService:
    """The profiles of one tenant's users."""

    tenant: str
    store: ProfileStore
    token_budget: int
    # Masks personal data in a user's own edit (the conversation side's vault). Required: a profile
    # service that could store an edit unmasked cannot be built.
    masker: TextMasker
    bus: EventBus | None = None
    tokenizer: Tokenizer | None = None
    clock: Callable[[], float] = field(default=now)

    # Reading

    def current(self, user_id: str) -> ProfileVersion | None:
        """The stored current version, body capped at the budget; None for a user with no profile."""
        stored = self.store.current(self.tenant, user_id)
        return self._capped(stored) if stored else None

    def view(self, user_id: str) -> ProfileView:
        """The profile as the API shows it; the empty profile (version 0) for a user with none."""
        stored = self.current(user_id)
        if stored is None:
            return ProfileView(user_id=user_id, version=0, body=empty_body(), updated_at=None, turn_count=0)
        return _view(stored)

    def profile_for(self, user_id: str) -> str | None:
        """The profile body for `retrieve` (ProfileProvider), or None when the user has none."""
        stored = self.current(user_id)
        return stored.body if stored else None

    def versions(self, user_id: str, limit: int, cursor: str | None = None) -> Page[ProfileView]:
        page = self.store.list_versions(self.tenant, user_id, limit=limit, cursor=cursor)
        return Page([_view(self._capped(v)) for v in page.items], page.next_cursor)

    # Changing

    def edit(self, user_id: str, markdown: str, if_match: int) -> ProfileView:
        """The user's own edit of their profile, based on version `if_match`.

        Frontmatter in `markdown` is ignored (the code keeps it). The body must keep the
        schema (InvalidInput naming each problem) and fit the budget (TooLarge). Conflict when
        the profile is not at `if_match` any more. An edit that changes nothing makes no version.
        """
        current = self.store.current(self.tenant, user_id)
        self._check_match(user_id, current, if_match)
        _, body = split_document(markdown)
        try:
            body = normalize_body(body)
        except ProfileSchemaError as exc:
            raise InvalidInput(
                "the profile does not keep the schema",
                [{"field": "markdown", "message": problem} for problem in exc.problems],
            ) from None
        self._check_fits(body)
        body = normalize_body(self.masker(user_id, body))
        self._check_fits(body)
        if current is not None and body == current.body:
            return _view(current)
        saved = self.commit(user_id, body, if_match, turns_added=0, source="user")
        return _view(saved)

    def restore(self, user_id: str, version: int, if_match: int | None = None) -> ProfileView:
        """Make an old version's body the current profile again, as a new version."""
        target = self.store.get_version(self.tenant, user_id, version)
        if target is None:
            raise NotFound(f"profile version {version} of user {user_id} not found")
        current = self.store.current(self.tenant, user_id)
        if if_match is not None:
            self._check_match(user_id, current, if_match)
        if current is None:  # erased between the two reads
            raise NotFound(f"user {user_id} has no profile")
        saved = self.commit(
            user_id, target.body, current.version, turns_added=0, source="restore", restored_from=version
        )
        return _view(saved)

    def commit(
        self,
        user_id: str,
        body: str,
        based_on: int,
        *,
        turns_added: int,
        source: ProfileSource,
        restored_from: int | None = None,
        event_detail: dict[str, Any] | None = None,
        folded: tuple[str, int] | None = None,
        rewound: tuple[str, int] | None = None,
    ) -> ProfileVersion:
        """Write `body` as the version after `based_on`; Conflict when another writer got there first.

        `folded` is (thread, highest seq) of the turns consolidation folded into `body`; every
        version carries the per-thread watermark on (edits and restores keep it as it was).
        `rewound` is (thread, last seq kept) after the thread's tail was deleted: the watermark goes
        back to it, so turns that get the deleted seqs are folded when they come.

        Publishes ProfileUpdated (best effort: the profile is the record, the event is news of it).
        """
        previous = self.store.get_version(self.tenant, user_id, based_on) if based_on else None
        profile = ProfileVersion(
            tenant=self.tenant, user_id=user_id, version=based_on + 1,
            body=fit_to_budget(body, self.token_budget, self._tokenizer()), updated_at=self.clock(),
            turn_count=(previous.turn_count if previous else 0) + turns_added,
            schema_version=SCHEMA_VERSION, source=source, restored_from=restored_from,
            consolidated=_advance(previous.consolidated if previous else {}, folded, rewound),
        )
        self.store.save(profile)
        log.info("profile updated", extra={"userHash": log_id(user_id), "version": profile.version, "source": source})
        self.publish(PROFILE_UPDATED, user_id, {"version": profile.version, "source": source,
                                                **(event_detail or {})})
        return profile

    def rewind_thread(self, tenant: str, user_id: str, thread_id: str, from_seq: int, to_seq: int) -> None:
        """The thread's turns from `from_seq` on are being deleted (a ThreadForgetter).

        What the profile learnt from them stays; its watermark for the thread goes back to
        `from_seq - 1` (a new version, same body), so the turns that get those seqs next are folded.
        """
        for _ in range(REWIND_ATTEMPTS):
            current = self.store.current(tenant, user_id)
            if current is None or current.consolidated.get(thread_id, 0) < from_seq:
                return
            try:
                self.commit(
                    user_id, current.body, current.version, turns_added=0, source=current.source,
                    restored_from=current.restored_from, rewound=(thread_id, from_seq - 1),
                    event_detail={"threadId": thread_id, "rewoundTo": from_seq - 1},
                )
                return
            except Conflict:
                continue  # consolidation wrote meanwhile: rewind its version
        raise Conflict(f"profile of user {user_id} kept changing; delete the turns again")

    def erase_user(self, tenant: str, user_id: str) -> None:
        """Remove every version of the user's profile (an erasure hook; idempotent)."""
        self.store.delete_user(tenant, user_id)

    def publish(self, detail_type: str, user_id: str, detail: dict[str, Any]) -> None:
        """Tell the bus how a profile change went; a bus failure is logged, never raised."""
        if self.bus is None:
            return
        event = DomainEvent(detail_type, {"tenant": self.tenant, "userId": user_id, **detail})
        try:
            failed = [r.error for r in self.bus.publish([event]) if not r.ok]
        except Exception as exc:
            failed = [type(exc).__name__]
        if failed:
            log.warning("profile event not published", extra={"detailType": detail_type, "errors": failed})

    # Internals

    def _check_match(self, user_id: str, current: ProfileVersion | None, if_match: int) -> None:
        version = current.version if current else 0
        if version != if_match:
            raise Conflict(f"profile of {user_id} is at version {version}, not {if_match}; read it again")

    def _check_fits(self, body: str) -> None:
        tokens = self._tokenizer().count(body)
        if tokens > self.token_budget:
            raise TooLarge(f"the profile has {tokens} tokens; the budget is {self.token_budget}")

    def _capped(self, stored: ProfileVersion) -> ProfileVersion:
        body = fit_to_budget(stored.body, self.token_budget, self._tokenizer())
        if body == stored.body:
            return stored
        return ProfileVersion(**{**stored.__dict__, "body": body})

    def _tokenizer(self) -> Tokenizer:
        if self.tokenizer is None:
            from agentmem.tokens import get_token_counter

            self.tokenizer = get_token_counter()
        return self.tokenizer


def _advance(
    consolidated: Mapping[str, int], folded: tuple[str, int] | None, rewound: tuple[str, int] | None = None
) -> dict[str, int]:
    watermarks = dict(consolidated)
    if folded is not None:
        thread, seq = folded
        watermarks[thread] = max(seq, watermarks.get(thread, 0))
    if rewound is not None:
        thread, kept = rewound
        if kept <= 0:
            watermarks.pop(thread, None)
        elif thread in watermarks:
            watermarks[thread] = min(kept, watermarks[thread])
    return watermarks


def _view(stored: ProfileVersion) -> ProfileView:
    return ProfileView(
        user_id=stored.user_id, version=stored.version, body=stored.body, updated_at=stored.updated_at,
        turn_count=stored.turn_count, source=stored.source, restored_from=stored.restored_from,
        schema_version=stored.schema_version,
    )
