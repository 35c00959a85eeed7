"""Recalled turns re-ranked by a prior on their text: real SQLite transcripts and the local BM25 index."""

from __future__ import annotations

from pathlib import Path

from agentmem.adapters.local.bm25_index import LocalBm25Index
from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
from agentmem.ports.transcripts import NewTurn
from agentmem.service.turn_recall import TurnRecallService
from agentmem.service.turn_search import HybridTurnRetriever

TENANT, USER = "t", "u"
SHORT = "The concert was great!"
LONG = "We went to the concert downtown with my sister on Friday and it was really loud"


def _recall(tmp_path: Path, weight: float) -> TurnRecallService:
    transcripts = SqliteTranscriptStore(tmp_path / f"turns-{weight}.sqlite3")
    lexical = LocalBm25Index(tmp_path / f"lexical-{weight}.sqlite3")
    # One turn a thread: a turn's keyword text holds the turn before it in its thread.
    threads = {"session-1": SHORT, "session-2": "Unrelated words about a garden", "session-3": LONG}
    for thread, text in threads.items():
        transcripts.append(TENANT, USER, thread, [NewTurn("user", text, len(text.split()))], 1_700_000_000.0)
    # Keyword side alone, no neighbours or sessions: the order is BM25's, then the prior's.
    search = HybridTurnRetriever(TENANT, embedder=None, vectors=None, lexical=lexical, session_weight=0.0,
                                 neighbour_weight=0.0)
    service = TurnRecallService(TENANT, transcripts, search, length_prior_weight=weight,
                                question_prior_weight=weight)
    for thread in threads:
        service.index_appended(USER, thread, 1, 1)
    return service


def test_a_long_turn_that_matches_a_little_less_is_recalled_before_a_short_one(tmp_path: Path) -> None:
    without = [turn.content for turn in _recall(tmp_path, 0.0).recall(USER, "concert", None, 2)]
    assert without == [SHORT, LONG]  # BM25 prefers the short turn: the word is a larger share of it
    recalled = _recall(tmp_path, 0.3).recall(USER, "concert", None, 1)
    assert [turn.content for turn in recalled] == [LONG]
    assert recalled[0].score > 0


def test_the_prior_reads_more_candidates_than_it_answers(tmp_path: Path) -> None:
    service = _recall(tmp_path, 0.3)
    # k = 1, yet the long turn (second by BM25) is found: the prior re-ranks its depth, then cuts to k.
    assert service.prior_depth > 1
    assert [turn.thread_id for turn in service.recall(USER, "concert", None, 1)] == ["session-3"]
