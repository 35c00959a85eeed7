"""Recalled turns: a user's past turns, indexed after `TurnsAppended`, found again for `retrieve`.

Every stored turn is indexed by `HybridTurnRetriever` under its user (the owner), with the item id
`{threadId}#{seq}` (`#` never occurs in an identifier, so the id splits back unambiguously): its
vector in the VectorIndex (kind "turn") and, where the backend has a keyword side, its text in the
LexicalIndex, preceded by the turn before it in its thread. The texts are the stored turns, masked
already: personal data reaches neither index. A turn's date and time (its `createdAt`, in UTC) are
part of the indexed text, so "what did I do in May 2023" finds the turns of that month.

`recall` runs the hybrid search for a retrieve's (masked) input with the query vector the retrieve
already computed, and reads the hits' turns back from the transcript store. It reads at least
`prior_depth` of them (20), more than the `k` it answers, and re-ranks them by a prior on each turn's
own text (`agentmem.domain.turn_prior`): most short turns ("Wow, that's great!") state no fact, and a
turn that asks names what the answer is about without holding it. The prior needs each turn's words,
which only the transcripts hold, so it is applied here, after the search, the same in every backend
(one batched read of 20 turns instead of `k`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from agentmem.domain.fusion import with_priors
from agentmem.domain.turn_prior import turn_prior
from agentmem.ports.transcripts import StoredTurn, TranscriptStore, encode_turn_cursor
from agentmem.service.turn_search import ConversationTurn, HybridTurnRetriever

log = logging.getLogger(__name__)
TURN_ID_SEPARATOR = "#"
INDEX_PAGE = 200
# A turn's score is multiplied by `turn_prior` (1 + 0.2 ln(1 + words)) x (1 - 0.35 x the share of its
# sentences that are questions), over the search's best `DEFAULT_PRIOR_DEPTH` turns (or k, when more are asked
# for). Chosen by cross-validation over the development conversations (docs/locomo-recall.md).
DEFAULT_LENGTH_PRIOR_WEIGHT = 0.2
DEFAULT_QUESTION_PRIOR_WEIGHT = 0.35
DEFAULT_PRIOR_DEPTH = 20


@dataclass(frozen=True)
class RecalledTurn:
    """A past turn found for a retrieve, with its fused relevance score (higher is better)."""

    thread_id: str
    seq: int
    role: str
    content: str
    score: float
    created_at: float

    def as_json(self) -> dict[str, object]:
        return {
            "threadId": self.thread_id, "seq": self.seq, "role": self.role,
            "content": self.content, "score": round(self.score, 6),
        }


def turn_item_id(thread_id: str, seq: int) -> str:
    return f"{thread_id}{TURN_ID_SEPARATOR}{seq}"


def parse_turn_item_id(item_id: str) -> tuple[str, int] | None:
    """(threadId, seq) of an indexed turn's id; None for an id this module did not write."""
    thread_id, separator, seq = item_id.rpartition(TURN_ID_SEPARATOR)
    if not separator or not thread_id or not seq.isdigit():
        return None
    return thread_id, int(seq)


def adjacent_turn_ids(item_id: str, span: int = 1) -> list[str]:
    """The ids of the `span` turns just before and after an indexed turn in its thread (an `Adjacency`)."""
    key = parse_turn_item_id(item_id)
    if key is None:
        return []
    thread_id, seq = key
    return [turn_item_id(thread_id, seq + step) for distance in range(1, span + 1) for step in (-distance, distance)]


def turn_thread_id(item_id: str) -> str:
    """The thread (session) of an indexed turn, from its id (a `Grouping`); the id itself if it is not a turn's."""
    key = parse_turn_item_id(item_id)
    return item_id if key is None else key[0]


def turn_date(created_at: float) -> str:
    """When a turn was said, as indexed and shown: "1:56 pm on 8 May 2023" (UTC)."""
    moment = datetime.fromtimestamp(created_at, UTC)
    hour = moment.hour % 12 or 12
    return f"{hour}:{moment:%M} {'am' if moment.hour < 12 else 'pm'} on {moment.day} {moment:%B %Y}"


def as_conversation_turn(turn: StoredTurn) -> ConversationTurn:
    return ConversationTurn(
        turn_id=turn_item_id(turn.thread_id, turn.seq),
        speaker="",
        text=turn.content,
        session_date=turn_date(turn.created_at),
        created_at=turn.created_at,
    )


@dataclass
class TurnRecallService:
    """Indexes a user's appended turns and recalls the most relevant of them."""

    tenant: str
    transcripts: TranscriptStore
    search: HybridTurnRetriever
    length_prior_weight: float = DEFAULT_LENGTH_PRIOR_WEIGHT
    question_prior_weight: float = DEFAULT_QUESTION_PRIOR_WEIGHT
    prior_depth: int = DEFAULT_PRIOR_DEPTH

    def __post_init__(self) -> None:
        if self.length_prior_weight < 0 or not 0 <= self.question_prior_weight <= 1 or self.prior_depth < 1:
            raise ValueError("prior weights must be >= 0 (the question's at most 1) and prior_depth >= 1")

    def index_appended(self, user_id: str, thread_id: str, from_seq: int, to_seq: int) -> int:
        """Index turns `from_seq`..`to_seq` of a thread (idempotent: indexing again replaces them); how many.

        Where the search embeds windows, the window of the turn before `from_seq` is embedded again too: it
        now has a next turn.
        """
        refresh = self.search.indexes_windows and from_seq > 1
        # The turn before, as keyword context of the first one (and the one before that, for its window).
        first = max(1, from_seq - (2 if refresh else 1))
        turns: list[StoredTurn] = []
        cursor = encode_turn_cursor(self.tenant, user_id, thread_id, first - 1) if first > 1 else None
        while True:
            page = self.transcripts.list_turns(self.tenant, user_id, thread_id, limit=INDEX_PAGE, cursor=cursor)
            turns.extend(t for t in page.items if t.seq <= to_seq)
            if not page.next_cursor or not page.items or page.items[-1].seq >= to_seq:
                break
            cursor = page.next_cursor
        by_seq = {t.seq: as_conversation_turn(t) for t in turns}
        preceding = by_seq.get(from_seq - 1)
        new = [by_seq[t.seq] for t in turns if from_seq <= t.seq <= to_seq]
        if new:
            self.search.index_session(user_id, new, preceding)
            if refresh and preceding is not None:
                self.search.index_window(user_id, preceding, by_seq.get(from_seq - 2), new[0])
        return len(new)

    def recall(
        self, user_id: str, query: str, query_vector: np.ndarray | None, k: int
    ) -> list[RecalledTurn]:
        """The user's `k` turns most relevant to `query`, best first, read from the transcripts."""
        if k <= 0 or not query.strip():
            return []
        prior = self.length_prior_weight > 0 or self.question_prior_weight > 0
        hits = self.search.search_with_vector(user_id, query, query_vector, max(k, self.prior_depth) if prior else k)
        keyed = [(hit, key) for hit in hits if (key := parse_turn_item_id(hit.item_id)) is not None]
        read = self.transcripts.get_turns(self.tenant, user_id, [key for _, key in keyed])
        stored = {(t.thread_id, t.seq): t for t in read}
        if len(stored) < len(keyed):
            # Indexed turns whose transcript is gone (an erase in progress): never shown.
            log.info("recalled turns not in the transcripts skipped", extra={"missing": len(keyed) - len(stored)})
        found = [(hit, stored[key]) for hit, key in keyed if key in stored]
        if prior:
            turns = {hit.item_id: turn for hit, turn in found}
            factors = {
                item_id: turn_prior(turn.content, length_weight=self.length_prior_weight,
                                    question_weight=self.question_prior_weight)
                for item_id, turn in turns.items()
            }
            found = [(hit, turns[hit.item_id]) for hit in with_priors([hit for hit, _ in found], factors)]
        return [
            RecalledTurn(t.thread_id, t.seq, t.role, t.content, hit.score, t.created_at) for hit, t in found[:k]
        ]

    def forget_thread_turns(self, tenant: str, user_id: str, thread_id: str, from_seq: int, to_seq: int) -> None:
        """Remove turns `from_seq..to_seq` of a thread from the recall indexes (a ThreadForgetter)."""
        seqs = range(max(1, from_seq), to_seq + 1)
        for start in range(0, len(seqs), INDEX_PAGE):
            chunk = seqs[start : start + INDEX_PAGE]
            self.search.forget_turns(user_id, [turn_item_id(thread_id, seq) for seq in chunk])
        if from_seq > 1:
            # The turn before the first one forgotten stays, but its window embeds that turn: it goes.
            self.search.forget_windows(user_id, [turn_item_id(thread_id, from_seq - 1)])

    def forget(self, tenant: str, user_id: str) -> None:
        """Erase a user's indexed turns (a UserEraser: called with tenant and user)."""
        self.search.forget(user_id)


def recalled_line(turn: RecalledTurn) -> str:
    """How a recalled turn reads in the context message: its day, its role, its words."""
    return f"({turn_date(turn.created_at)}, {turn.role}) {turn.content}"


def recalled_lines(turns: Sequence[RecalledTurn]) -> list[str]:
    return [recalled_line(turn) for turn in turns]
