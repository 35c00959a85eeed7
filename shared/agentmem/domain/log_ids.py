"""Pseudonyms for identifiers in log lines: logs never carry a raw `userId` (it may be an email).

A pseudonym is the first 12 hex characters of SHA-256 over a fixed label and the id. It lets an
operator follow one user's requests through the logs, and find them given the id
(`agentmem.domain.log_ids.log_id("u-42")`), but the logs alone do not name anyone. It is not a
secret: ids that can be guessed (`u-1`, `u-2`...) can be matched by whoever guesses them, which is
why logs carry no content either.
"""

from __future__ import annotations

import hashlib

_LABEL = b"agentmem/log-id/v1\x00"
LOG_ID_LENGTH = 12


def log_id(identifier: str | None) -> str | None:
    """The pseudonym logged in place of `identifier` (None stays None)."""
    if identifier is None:
        return None
    return hashlib.sha256(_LABEL + identifier.encode("utf-8")).hexdigest()[:LOG_ID_LENGTH]
