"""Each turn also embedded with the turns around it (its window): indexed as turns are appended, searched as
a third list, and gone with a deleted turn. Real SQLite transcripts, the local vector index and MiniLM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from agentmem.adapters.local.minilm import MiniLMEmbedder
from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.ports.transcripts import NewTurn
from agentmem.ports.vectors import VectorQuery
from agentmem.service.turn_recall import TurnRecallService, turn_item_id
from agentmem.service.turn_search import TURN_KIND, HybridTurnRetriever, window_item_id

TENANT, USER, THREAD = "t", "u", "session-1"
TURNS = [
    ("assistant", "How was your weekend with the family?"),
    ("user", "We packed the tent and drove to the coast on Saturday."),
    ("assistant", "Did the kids like sleeping by the sea?"),
]


class _Recording:
    """MiniLM, keeping the texts it embeds (what was indexed)."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def _service(tmp_path: Path, embedder: _Recording, window_weight: float) -> tuple[TurnRecallService, LocalVectorIndex]:
    transcripts = SqliteTranscriptStore(tmp_path / "turns.sqlite3")
    vectors = LocalVectorIndex(tmp_path / f"vectors-{window_weight}.sqlite3")
    search = HybridTurnRetriever(TENANT, embedder=embedder, vectors=vectors, lexical=None,
                                 window_weight=window_weight, session_weight=0.0, neighbour_weight=0.0)
    return TurnRecallService(TENANT, transcripts, search, length_prior_weight=0.0, question_prior_weight=0.0), vectors


def _vector_ids(vectors: LocalVectorIndex, embedder: _Recording) -> set[str]:
    probe = embedder.inner.embed(["anything"])[0]
    return {hit.item_id for hit in vectors.search(VectorQuery(TENANT, TURN_KIND, USER, probe, 100))}


def test_a_turn_appended_later_is_embedded_into_the_window_of_the_turn_before(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    embedder = _Recording(minilm)
    service, vectors = _service(tmp_path, embedder, 0.3)
    first, second = TURNS[0], TURNS[1]
    service.transcripts.append(TENANT, USER, THREAD, [NewTurn(first[0], first[1], 8)], 1_700_000_000.0)
    assert service.index_appended(USER, THREAD, 1, 1) == 1
    service.transcripts.append(TENANT, USER, THREAD, [NewTurn(second[0], second[1], 11)], 1_700_000_060.0)
    embedder.texts.clear()
    # Only turn 2 is new, but turn 1's window now has a next turn: it is embedded again, beside turn 2's
    # vector and window; turn 1's own vector holds no later turn and is not.
    assert service.index_appended(USER, THREAD, 2, 2) == 1
    windows = [text for text in embedder.texts if first[1] in text and second[1] in text]
    assert len(windows) == 2 and len(embedder.texts) == 3
    assert _vector_ids(vectors, embedder) == {
        turn_item_id(THREAD, 1), turn_item_id(THREAD, 2),
        window_item_id(turn_item_id(THREAD, 1)), window_item_id(turn_item_id(THREAD, 2)),
    }
    vectors.close()


def test_recall_answers_turns_only_and_a_vague_reply_between_matching_turns_gains_on_the_best(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    threads = {
        "session-1": ["My sister is moving to a new flat next month.", "Tell her good luck with all the boxes.",
                      "I will, she is nervous about it."],
        "session-2": ["Did you take the kids camping at the lake?", "Yes, and they loved every minute of it.",
                      "Sleeping in a tent by the water is magical."],
    }
    query = "Did the kids enjoy the camping trip?"
    shares = {}
    for weight in (0.0, 0.3):
        folder = tmp_path / f"w{weight}"
        folder.mkdir()
        service, vectors = _service(folder, _Recording(minilm), weight)
        for thread, texts in threads.items():
            service.transcripts.append(
                TENANT, USER, thread, [NewTurn("user", text, len(text.split())) for text in texts], 1_700_000_000.0
            )
            service.index_appended(USER, thread, 1, len(texts))
        recalled = service.recall(USER, query, minilm.embed([query])[0], 6)
        assert sorted((t.thread_id, t.seq) for t in recalled) == [(t, seq) for t in threads for seq in (1, 2, 3)]
        assert [t.thread_id for t in recalled[:3]] == ["session-2"] * 3
        reply = next(t for t in recalled if (t.thread_id, t.seq) == ("session-2", 2))
        shares[weight] = reply.score / recalled[0].score
        vectors.close()
    # "Yes, and they loved every minute of it" names neither kids nor camping; its window does.
    assert shares[0.3] > shares[0.0] + 0.05


def test_deleting_a_threads_tail_removes_the_window_of_the_turn_before_it(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    embedder = _Recording(minilm)
    service, vectors = _service(tmp_path, embedder, 0.3)
    service.transcripts.append(
        TENANT, USER, THREAD, [NewTurn(role, text, len(text.split())) for role, text in TURNS[:3]], 1_700_000_000.0
    )
    service.index_appended(USER, THREAD, 1, 3)
    service.forget_thread_turns(TENANT, USER, THREAD, 3, 3)
    # Turn 2 stays, but its window embedded turn 3's words: it goes with turn 3 and turn 3's window.
    assert _vector_ids(vectors, embedder) == {
        turn_item_id(THREAD, 1), turn_item_id(THREAD, 2), window_item_id(turn_item_id(THREAD, 1)),
    }
    vectors.close()
