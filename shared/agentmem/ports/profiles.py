"""The profile store port: every version of every user's profile, written conditionally on the version."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agentmem.domain.errors import InvalidInput
from agentmem.ports.records import Page

ProfileSource = Literal["consolidation", "user", "restore"]


@dataclass(frozen=True)
class ProfileVersion:
    """One version of a user's profile. `body` is the Markdown body; the frontmatter is rebuilt from the fields."""

    tenant: str
    user_id: str
    version: int  # 1, 2, 3... per user; version 0 is "no profile yet"
    body: str
    updated_at: float
    turn_count: int
    schema_version: int
    source: ProfileSource
    restored_from: int | None = None
    # The highest turn seq consolidation has folded into the profile, per thread: a replayed
    # TurnsAppended finds its turns at or below it and folds (and counts) nothing again.
    consolidated: Mapping[str, int] = field(default_factory=dict)


class ProfileStore(Protocol):
    """Versions of profiles, per tenant and user. Writes are conditional, so concurrent writers never lose one."""

    def current(self, tenant: str, user_id: str) -> ProfileVersion | None:
        """The newest version, or None when the user has no profile."""

    def get_version(self, tenant: str, user_id: str, version: int) -> ProfileVersion | None: ...

    def list_versions(
        self, tenant: str, user_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[ProfileVersion]:
        """Versions newest first. Raises InvalidInput for a cursor this store did not return."""

    def save(self, profile: ProfileVersion) -> None:
        """Store `profile` as the new current version.

        Succeeds only when the current version is `profile.version - 1` (none for version 1);
        otherwise raises Conflict and writes nothing.
        """

    def delete_user(self, tenant: str, user_id: str) -> None:
        """Remove every version of the user's profile."""


def encode_version_cursor(version: int) -> str:
    """An opaque cursor: the listing goes on below `version`."""
    return base64.urlsafe_b64encode(json.dumps({"below": version}).encode()).decode().rstrip("=")


def decode_version_cursor(cursor: str) -> int:
    """The version a cursor from `encode_version_cursor` stands for; InvalidInput for anything else."""
    try:
        plain = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        below = plain["below"]
        if isinstance(below, int) and not isinstance(below, bool) and below > 0:
            return below
    except (ValueError, TypeError, KeyError):
        pass
    raise InvalidInput("invalid cursor", [{"field": "cursor", "message": "not a cursor this API returned"}])
