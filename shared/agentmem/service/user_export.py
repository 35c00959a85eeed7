"""A user's memory as JSON Lines: masked transcripts, the profile and the facts.

What leaves is what agentmem stores: personal data stays as vault tokens, and
the vault itself (the sealed originals) is never exported. Imported turns are
appended like new ones (any personal data in them is masked again), so
consolidation re-derives facts; the profile is restored as a user edit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from agentmem.domain.errors import InvalidInput, NotFound
from agentmem.service.conversations import TurnInput

EXPORT_FORMAT = "agentmem.user/v1"
PAGE = 200


def export_user(services: Any, user_id: str, thread_ids: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    """Header, profile, facts (superseded ones too), then the turns of `thread_ids`."""
    yield {"format": EXPORT_FORMAT, "tenant": services.settings.tenant, "userId": user_id,
           "threads": list(thread_ids)}
    view = services.profiles.view(user_id)
    if view.version:
        yield {"type": "profile", "version": view.version, "markdown": view.body}
    cursor = None
    while True:
        page = services.facts.list_facts(user_id, PAGE, cursor, include_superseded=True)
        for fact in page.items:
            yield {"type": "fact", **{k: v for k, v in dataclasses.asdict(fact).items() if k != "tenant"}}
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    for thread_id in thread_ids:
        cursor = None
        while True:
            try:
                turns = services.conversations.list_turns(user_id, thread_id, PAGE, cursor)
            except NotFound:
                break
            for turn in turns.items:
                yield {"type": "turn", "threadId": thread_id, "seq": turn.seq, "role": turn.role,
                       "content": turn.content}
            if not turns.next_cursor:
                break
            cursor = turns.next_cursor


def import_user(services: Any, records: Sequence[dict[str, Any]]) -> str:
    """Load an export into this tenant for the same user id; returns a one-line summary."""
    header = records[0]
    if header.get("format") != EXPORT_FORMAT or not header.get("userId"):
        raise InvalidInput("not an agentmem user export")
    user_id = header["userId"]
    turns: dict[str, list[TurnInput]] = {}
    profile = None
    facts = 0
    for record in records[1:]:
        kind = record.get("type")
        if kind == "turn":
            turns.setdefault(record["threadId"], []).append(TurnInput(record["role"], record["content"]))
        elif kind == "profile":
            profile = record["markdown"]
        elif kind == "fact":
            facts += 1
        else:
            raise InvalidInput(f"unknown record type {kind!r}")
    for thread_id, thread_turns in turns.items():
        for start in range(0, len(thread_turns), 50):
            services.conversations.append_turns(user_id, thread_id, thread_turns[start : start + 50])
    if profile is not None:
        current = services.profiles.view(user_id)
        services.profiles.edit(user_id, profile, current.version)
    appended = sum(len(t) for t in turns.values())
    return (f"imported {appended} turn(s) in {len(turns)} thread(s)"
            + (", the profile" if profile is not None else "")
            + f"; {facts} fact(s) listed in the file are re-derived from the turns by consolidation")
