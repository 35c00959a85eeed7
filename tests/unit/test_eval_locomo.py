"""The LoCoMo recall evaluation on a tiny hand-made conversation, and the turn retriever it drives."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from agentmem.adapters.local.bm25_index import LocalBm25Index
from agentmem.adapters.local.minilm import MiniLMEmbedder
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.eval.locomo import (
    dialog_session,
    evaluate,
    fold_conversations,
    format_table,
    main,
    parse_evidence,
    read_conversation,
    recall_at_k,
    select_samples,
)
from agentmem.service.turn_search import ConversationTurn, HybridTurnRetriever, dense_text, lexical_text

SESSION_1 = [
    {"speaker": "Ana", "dia_id": "D1:1", "text": "Did you end up going to the pottery class on Saturday?"},
    {"speaker": "Ben", "dia_id": "D1:2", "text": "Yes! I made a lopsided bowl, but I loved it."},
    {"speaker": "Ana", "dia_id": "D1:3", "text": "My sister is moving to Lisbon next month for a new job."},
    {
        "speaker": "Ben",
        "dia_id": "D1:4",
        "text": "That's exciting, I was there once, it is lovely in summer.",
        "blip_caption": "a photo of a yellow tram on a hill",
        "query": "lisbon tram",
        "img_url": ["https://example.com/tram.jpg"],
    },
]
SESSION_2 = [
    {"speaker": "Ana", "dia_id": "D2:1", "text": "I started training for a half marathon."},
    {"speaker": "Ben", "dia_id": "D2:2", "text": "How far do you run each week?"},
    {"speaker": "Ana", "dia_id": "D2:3", "text": "About thirty kilometres, split over four runs."},
    {"speaker": "Ben", "dia_id": "D2:4", "text": "I adopted a kitten from the shelter, her name is Miso."},
]
QUESTIONS = [
    # Every word of these but one is absent from the other turns, so BM25's ranking is certain.
    {"question": "Which city is the sister moving to?", "answer": "Lisbon", "evidence": ["D1:3"], "category": 4},
    {  # one malformed entry naming two turns; only one of them can be first
        "question": "Which city is the sister moving to, and what pet was adopted?",
        "answer": "Lisbon; a kitten",
        "evidence": ["D1:3; D2:4"],
        "category": 1,
    },
    {  # D7:7 names no turn of this conversation: dropped, not counted as missed
        "question": "When did the half marathon training start?",
        "answer": "2 June 2023",
        "evidence": ["D2:1", "D7:7"],
        "category": 2,
    },
    {
        "question": "What colour is the tram in the photo?",
        "adversarial_answer": "yellow",
        "evidence": ["D1:4"],
        "category": 5,
    },
    {  # shares no word with any turn: never retrieved by keywords
        "question": "Which instrument does the neighbour play?",
        "answer": "none",
        "evidence": ["D2:3"],
        "category": 4,
    },
    {"question": "Would Ana enjoy Portugal?", "answer": "Likely yes", "evidence": [], "category": 3},
]


def tiny_sample() -> dict[str, Any]:
    return {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": SESSION_1,
            "session_2_date_time": "10:00 am on 2 June, 2023",
            "session_2": SESSION_2,
            "session_3_date_time": "9:00 am on 1 July, 2023",  # a date with no session: ignored
        },
        "qa": QUESTIONS,
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([tiny_sample()]), encoding="utf-8")
    return path


# Recall maths


def test_parse_evidence_splits_repairs_and_drops_unknown_ids() -> None:
    known = {"D1:3", "D2:4", "D8:6", "D9:17", "D11:26"}
    assert parse_evidence(["D8:6; D9:17", "D:11:26", "D1:3", "D4:36", "D1:3"], known) == (
        ["D8:6", "D9:17", "D11:26", "D1:3"],
        2,
        1,
    )
    assert parse_evidence(["D9:1 D4:4 D2:4"], known) == (["D2:4"], 1, 2)


def test_recall_at_k_is_the_share_of_evidence_in_the_top_k() -> None:
    ranked = ["D1:1", "D1:3", "D2:2", "D2:4"]
    assert recall_at_k(ranked, ["D1:3", "D2:4", "D5:5"], 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, ["D1:3", "D2:4", "D5:5"], 4) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, ["D1:1"], 1) == 1.0
    with pytest.raises(ValueError):
        recall_at_k(ranked, [], 5)


def test_read_conversation_keeps_sessions_in_order_with_dates_and_captions() -> None:
    conversation = read_conversation(tiny_sample())
    assert [[turn.turn_id for turn in session] for session in conversation.sessions] == [
        ["D1:1", "D1:2", "D1:3", "D1:4"],
        ["D2:1", "D2:2", "D2:3", "D2:4"],
    ]
    tram = conversation.sessions[0][3]
    assert tram.image_caption == "a photo of a yellow tram on a hill"
    assert tram.session_date == "1:56 pm on 8 May, 2023"
    assert conversation.sessions[1][0].created_at > tram.created_at > 0
    assert [q.evidence for q in conversation.questions][:3] == [("D1:3",), ("D1:3", "D2:4"), ("D2:1",)]
    assert (conversation.evidence_entries_split, conversation.evidence_ids_missing) == (1, 1)


def test_evaluate_averages_per_question_within_categories_and_overall(locomo_file: Path) -> None:
    result = evaluate(locomo_file, retriever="lexical", ks=(1, 50))
    assert result["by_category"] == {
        "1": {"1": 0.5, "50": 1.0},
        "2": {"1": 1.0, "50": 1.0},
        "4": {"1": 0.5, "50": 0.5},
        "5": {"1": 1.0, "50": 1.0},
    }
    assert result["overall"] == {"1": pytest.approx(3.5 / 5), "50": pytest.approx(4 / 5)}
    assert result["overall_without_adversarial"] == {"1": pytest.approx(2.5 / 4), "50": pytest.approx(3 / 4)}
    assert result["questions"] == {
        "overall": 5,
        "overall_without_adversarial": 4,
        "by_category": {"1": 1, "2": 1, "4": 2, "5": 1},
        "skipped_without_evidence": 1,
    }
    assert result["evidence"] == {"entries_split": 1, "ids_not_in_conversation": 1}
    assert (result["conversations"], result["turns"]) == (1, 8)


def test_format_table_prints_every_category_overall_and_the_paper_row(locomo_file: Path) -> None:
    table = format_table(evaluate(locomo_file, retriever="lexical"))
    lines = table.splitlines()
    assert "R@5" in lines[1] and "R@50" in lines[1]
    assert any(line.startswith("5 adversarial") for line in lines)
    overall = next(line for line in lines if line.startswith("overall (paper's"))
    assert overall.split()[-4:] == ["80.0", "80.0", "80.0", "80.0"]
    assert any(line.startswith("paper, DRAGON") and "56.7" in line for line in lines)


def test_main_prints_one_json_object_with_fractions(locomo_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(locomo_file), "--json", "--retriever", "lexical"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["overall"]) == {"5", "10", "25", "50"}
    assert all(0.0 <= value <= 1.0 for value in result["overall"].values())
    assert set(result["by_category"]) == {"1", "2", "4", "5"}


def test_hybrid_evaluation_with_minilm_finds_every_evidence_turn_in_the_top_five(
    locomo_file: Path, minilm: MiniLMEmbedder
) -> None:
    result = evaluate(locomo_file, embedder=minilm)
    assert result["retriever"] == "hybrid"
    # Eight turns: the top 5 must hold the evidence of the questions dense search can answer.
    assert result["by_category"]["5"]["5"] == 1.0
    assert result["by_category"]["2"]["5"] == 1.0


# The retriever


@pytest.fixture
def retriever(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[HybridTurnRetriever]:
    vectors = LocalVectorIndex(tmp_path / "vectors.sqlite3")
    lexical = LocalBm25Index(tmp_path / "lexical.sqlite3")
    yield HybridTurnRetriever("tenant-a", embedder=minilm, vectors=vectors, lexical=lexical)
    vectors.close()
    lexical.close()


def indexed(retriever: HybridTurnRetriever, owner: str = "user-1") -> HybridTurnRetriever:
    conversation = read_conversation(tiny_sample())
    retriever.index_sessions(owner, conversation.sessions)
    return retriever


def top_ids(retriever: HybridTurnRetriever, query: str, k: int = 3, owner: str = "user-1") -> list[str]:
    return [hit.item_id for hit in retriever.search(owner, query, k)]


def test_the_hybrid_finds_a_turn_by_meaning_when_no_word_matches(retriever: HybridTurnRetriever) -> None:
    assert top_ids(indexed(retriever), "Which animal did Ben bring home?", 1) == ["D2:4"]


def test_the_hybrid_finds_an_answer_by_keywords_in_it_and_in_the_turn_before(retriever: HybridTurnRetriever) -> None:
    assert top_ids(indexed(retriever), "How many kilometres a week?", 1) == ["D2:3"]


def test_a_reply_is_found_by_the_words_of_the_turn_before_it(tmp_path: Path) -> None:
    lexical = LocalBm25Index(tmp_path / "lexical.sqlite3")
    keywords_only = indexed(HybridTurnRetriever("t", embedder=None, vectors=None, lexical=lexical))
    # "Yes! I made a lopsided bowl" names no pottery or class; the question before it does.
    assert "D1:2" in top_ids(keywords_only, "What did Ben make at the pottery class?", 2)
    lexical.close()


def test_appended_turns_take_their_context_from_the_preceding_turn(tmp_path: Path) -> None:
    lexical = LocalBm25Index(tmp_path / "lexical.sqlite3")
    search = HybridTurnRetriever("t", embedder=None, vectors=None, lexical=lexical)
    first = ConversationTurn("1", "Ana", "Have you booked the ferry to Mallorca?")
    reply = ConversationTurn("2", "Ben", "Not yet, tomorrow.")
    search.index_session("u", [first])
    search.index_session("u", [reply], preceding=first)
    assert top_ids(search, "ferry Mallorca", 5, owner="u") == ["1", "2"]
    lexical.close()


def test_searches_see_only_their_owner_and_forget_removes_an_owner(retriever: HybridTurnRetriever) -> None:
    indexed(retriever, owner="user-1")
    assert top_ids(retriever, "kitten", 3, owner="user-2") == []
    retriever.forget("user-1")
    assert top_ids(retriever, "kitten", 3, owner="user-1") == []


def test_indexed_texts_carry_date_speaker_caption_and_previous_turn() -> None:
    previous = ConversationTurn("D1:3", "Ana", "My sister is moving to Lisbon.")
    turn = ConversationTurn("D1:4", "Ben", "Lovely!", session_date="8 May, 2023", image_caption="a tram")
    assert dense_text(turn) == "(8 May, 2023) Ben: Lovely! [shares a tram]"
    assert lexical_text(turn, previous) == (
        "(8 May, 2023) Ana: My sister is moving to Lisbon.\nBen: Lovely! [shares a tram]"
    )
    assert lexical_text(turn, None) == dense_text(turn)


def test_the_retriever_needs_an_index(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    with pytest.raises(ValueError):
        HybridTurnRetriever("t", embedder=None, vectors=None, lexical=None)
    with pytest.raises(ValueError):
        HybridTurnRetriever("t", embedder=minilm, vectors=None, lexical=None)


def test_the_next_turn_is_keyword_context_when_asked_for() -> None:
    previous = ConversationTurn("1", "Ana", "Did you go?")
    turn = ConversationTurn("2", "Ben", "Yes.", session_date="8 May, 2023")
    following = ConversationTurn("3", "Ana", "How was the pottery class?")
    assert lexical_text(turn, previous, following) == (
        "(8 May, 2023) Ana: Did you go?\nBen: Yes.\nAna: How was the pottery class?"
    )
    assert dense_text(turn, dated=False) == "Ben: Yes."


def test_next_turn_context_is_for_whole_sessions_and_refuses_an_append_after_a_turn(tmp_path: Path) -> None:
    lexical = LocalBm25Index(tmp_path / "lexical.sqlite3")
    search = HybridTurnRetriever("t", embedder=None, vectors=None, lexical=lexical, following_context=True)
    first = ConversationTurn("1", "Ana", "I finally went.")
    reply = ConversationTurn("2", "Ben", "To the ferry terminal in Mallorca?")
    search.index_session("u", [first, reply])
    assert sorted(top_ids(search, "ferry Mallorca", 5, owner="u")) == ["1", "2"]
    with pytest.raises(ValueError, match="whole sessions"):
        search.index_session("u", [ConversationTurn("3", "Ana", "Yes.")], preceding=reply)
    lexical.close()


def test_folds_split_the_conversations_and_a_subset_keeps_file_order() -> None:
    ids = ["c1", "c2", "c3", "c4", "c5"]
    folds = [fold_conversations(ids, 2, fold) for fold in (1, 2)]
    assert folds == [["c1", "c3", "c5"], ["c2", "c4"]]
    assert fold_conversations(ids, 5, 3) == ["c3"]
    with pytest.raises(ValueError):
        fold_conversations(ids, 6, 1)
    with pytest.raises(ValueError):
        fold_conversations(ids, 5, 0)
    samples = [{"sample_id": i} for i in ids]
    assert [s["sample_id"] for s in select_samples(samples, {"c4", "c2"})] == ["c2", "c4"]
    with pytest.raises(ValueError, match="c9"):
        select_samples(samples, ["c9"])


def test_the_evaluation_reports_each_conversation_and_measures_only_those_asked(tmp_path: Path) -> None:
    second = {**tiny_sample(), "sample_id": "conv-b"}
    path = tmp_path / "two.json"
    path.write_text(json.dumps([tiny_sample(), second]))
    both = evaluate(path, retriever="lexical")
    assert set(both["by_conversation"]) == {tiny_sample()["sample_id"], "conv-b"}
    one = evaluate(path, retriever="lexical", conversations=["conv-b"])
    assert one["conversations"] == 1 and list(one["by_conversation"]) == ["conv-b"]
    assert one["by_conversation"]["conv-b"]["overall"] == both["by_conversation"]["conv-b"]["overall"]


class _RecordingEmbedder:
    """The real MiniLM, keeping the texts it was given (what the vector side read)."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_tokens_are_embedded_as_their_kind_in_turns_and_queries(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    embedder = _RecordingEmbedder(minilm)
    vectors = LocalVectorIndex(tmp_path / "vectors.sqlite3")
    # No windows: the turn's own vector is the only list, so its score is the cosine.
    search = HybridTurnRetriever("t", embedder=embedder, vectors=vectors, lexical=None, window_weight=0.0)
    turn = ConversationTurn("1", "", "{{PII_PERSON_a4c72700_1}}: I adopted a kitten.", session_date="8 May 2023")
    search.index_session("u", [turn])
    assert embedder.texts == ["(8 May 2023) person: I adopted a kitten."]
    masked = "What did {{PII_PERSON_a4c72700_1}} adopt?"
    as_masked = minilm.embed([masked])[0]
    hits = search.search_with_vector("u", masked, as_masked, 1)
    # The caller's vector is of the masked text: the turn search embeds the query again as it embeds turns.
    assert embedder.texts[-1] == "What did person adopt?" and [hit.item_id for hit in hits] == ["1"]
    assert hits[0].score == pytest.approx(float(minilm.embed(["What did person adopt?"])[0] @ minilm.embed(
        ["(8 May 2023) person: I adopted a kitten."])[0]), abs=1e-4)
    embedded = len(embedder.texts)
    search.search_with_vector("u", "What did she adopt?", minilm.embed(["What did she adopt?"])[0], 1)
    assert len(embedder.texts) == embedded  # nothing to rewrite: the caller's vector is used
    as_is = HybridTurnRetriever("t", embedder=embedder, vectors=vectors, lexical=None, embed_kinds=False,
                                window_weight=0.0)
    as_is.index_session("v", [turn])
    assert embedder.texts[-1] == "(8 May 2023) {{PII_PERSON_a4c72700_1}}: I adopted a kitten."
    vectors.close()


def test_a_turn_of_the_session_that_matches_rises_with_it(tmp_path: Path) -> None:
    lexical = LocalBm25Index(tmp_path / "lexical.sqlite3")
    sessions = [
        [ConversationTurn("D1:1", "Ana", "We went camping by the lake."),
         ConversationTurn("D1:2", "Ben", "Camping again? Lovely."),
         ConversationTurn("D1:3", "Ana", "It was."),
         ConversationTurn("D1:4", "Ana", "And the kids swam there for hours, tired but happy.")],
        [ConversationTurn("D2:1", "Ana", "Work was long."),
         ConversationTurn("D2:2", "Ben", "Rest then."),
         ConversationTurn("D2:3", "Ben", "Good for them."),
         ConversationTurn("D2:4", "Ana", "Kids swam.")],
    ]
    plain = HybridTurnRetriever("t", embedder=None, vectors=None, lexical=lexical, session_weight=0.0)
    grouped = HybridTurnRetriever(
        "t", embedder=None, vectors=None, lexical=lexical, group=dialog_session, session_weight=0.5
    )
    plain.index_sessions("u", sessions)
    query = "Where did the kids swim after camping?"

    def swims(search: HybridTurnRetriever) -> list[str]:
        return [hit.item_id for hit in search.search("u", query, 8) if hit.item_id in ("D1:4", "D2:4")]

    # Alone, the shorter turn wins; the session with two camping turns lifts the one that answers.
    assert swims(plain) == ["D2:4", "D1:4"]
    assert swims(grouped) == ["D1:4", "D2:4"]
    lexical.close()
