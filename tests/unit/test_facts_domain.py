"""Facts: the extraction answer, fact ids, and when a new fact supersedes an old one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from agentmem.domain.facts import (
    MAX_FACTS_PER_BATCH,
    RESTATEMENT_SIMILARITY,
    SAME_SUBJECT_SIMILARITY,
    ExtractedFact,
    Fact,
    FactsFormatError,
    batch_digest,
    fact_id_for,
    normalize_subject,
    parse_extraction,
    superseded_by_new,
)


def _fact(fact_id: str, text: str, subject: str, status: str = "active") -> Fact:
    return Fact(tenant="t", user_id="u", fact_id=fact_id, text=text, subject=subject, thread_id="th",
                source_seqs=[1], created_at=1.0, valid_from=1.0, status=status)  # type: ignore[arg-type]


def test_an_answer_in_the_asked_format_gives_its_facts_with_normalized_subjects_and_cited_turns():
    answer = json.dumps({"facts": [
        {"text": "User works at  Acme\n", "subject": "Employer", "seqs": [3]},
        {"text": "User knows Python", "subject": "skill: Python 3", "seqs": [2, 99]},
    ]})
    assert parse_extraction(answer, [2, 3]) == [
        ExtractedFact("User works at Acme", "employer", (3,)),
        ExtractedFact("User knows Python", "skill:python_3", (2,)),
    ]


def test_a_fact_citing_no_offered_turn_is_attributed_to_all_of_them_and_a_missing_subject_is_general():
    answer = '```json\n{"facts": [{"text": "User lives in Porto", "seqs": [42]}]}\n```'
    assert parse_extraction(answer, [5, 6]) == [ExtractedFact("User lives in Porto", "general", (5, 6))]


def test_blank_facts_are_skipped_and_a_batch_is_capped():
    items = [{"text": " "}] + [{"text": f"User fact {i}", "subject": "s"} for i in range(30)]
    facts = parse_extraction(json.dumps({"facts": items}), [1])
    assert len(facts) == MAX_FACTS_PER_BATCH and facts[0].text == "User fact 0"


@pytest.mark.parametrize(
    "answer",
    ["The user works at Acme.", "[]", '{"items": []}', '{"facts": ["User works at Acme"]}',
     '{"facts": [{"subject": "employer"}]}'],
)
def test_anything_else_is_out_of_format(answer):
    with pytest.raises(FactsFormatError):
        parse_extraction(answer, [1])


def test_fact_ids_are_the_same_for_the_same_batch_and_differ_across_ordinals_threads_and_users():
    base = fact_id_for("acme", "ana", "t1", 3, 4, 0)
    assert base == fact_id_for("acme", "ana", "t1", 3, 4, 0)
    assert len({base, fact_id_for("acme", "ana", "t1", 3, 4, 1), fact_id_for("acme", "ana", "t2", 3, 4, 0),
                fact_id_for("acme", "bob", "t1", 3, 4, 0), fact_id_for("other", "ana", "t1", 3, 4, 0)}) == 5
    assert base.startswith("fact_") and len(base) == 37


def test_turns_that_got_the_seqs_of_a_deleted_tail_get_fact_ids_of_their_own():
    said, said_again = batch_digest(["I like teal.", "Nice."]), batch_digest(["I work at Globex.", "Noted."])
    assert said == batch_digest(["I like teal.", "Nice."])  # a replayed event: the same ids
    assert fact_id_for("acme", "ana", "t1", 5, 6, 0, said) != fact_id_for("acme", "ana", "t1", 5, 6, 0, said_again)


def test_subjects_are_normalized():
    assert normalize_subject(" Home City ") == "home_city"
    assert normalize_subject("Skill:C++") == "skill:c"
    assert normalize_subject("") == "general"


def test_a_fact_on_the_same_subject_and_similar_enough_supersedes_an_active_one():
    old = _fact("f1", "User works at Acme", "employer")
    new = ExtractedFact("User works at Globex", "employer")
    assert superseded_by_new(new, [(old, SAME_SUBJECT_SIMILARITY)]) == [old]
    assert superseded_by_new(new, [(old, SAME_SUBJECT_SIMILARITY - 0.01)]) == []


def test_a_restatement_supersedes_whatever_its_subject_and_other_subjects_are_kept():
    old = _fact("f1", "User works at Acme", "workplace")
    assert superseded_by_new(ExtractedFact("User is employed by Acme", "employer"),
                             [(old, RESTATEMENT_SIMILARITY)]) == [old]
    assert superseded_by_new(ExtractedFact("User likes coffee", "preference:coffee"),
                             [(_fact("f2", "User likes tea", "preference:tea"), 0.75)]) == []


def test_general_subjects_never_match_by_subject_and_superseded_facts_are_left_alone():
    general = _fact("f1", "User has a dog", "general")
    assert superseded_by_new(ExtractedFact("User has a cat", "general"), [(general, 0.7)]) == []
    gone = _fact("f2", "User works at Acme", "employer", status="superseded")
    assert superseded_by_new(ExtractedFact("User works at Globex", "employer"), [(gone, 0.9)]) == []


# The thresholds are measured, not guessed: these pairs hold them in place for the local model.
SAME_ATTRIBUTE_UPDATES = [
    ("User works at Acme", "User works at Globex"),
    ("User lives in Paris", "User lives in Berlin"),
    ("User's name is Ana", "User's name is Maria"),
    ("User works as a nurse", "User works as a data engineer"),
    ("User prefers short answers", "User prefers detailed answers"),
]
RESTATEMENTS = [("User works at Acme", "User is employed by Acme")]
DIFFERENT_ATTRIBUTES = [
    ("User works at Acme", "User lives in Berlin"),
    ("User knows Python", "User knows Rust"),
    ("User prefers tea", "User prefers concise answers"),
    ("User wants to be reminded to call the bank", "User wants to be reminded to renew the passport"),
]


def test_the_thresholds_separate_updates_restatements_and_other_facts_with_the_local_model(minilm):
    pairs = SAME_ATTRIBUTE_UPDATES + RESTATEMENTS + DIFFERENT_ATTRIBUTES
    texts = sorted({text for pair in pairs for text in pair})
    vectors = dict(zip(texts, minilm.embed(texts), strict=True))

    def similarity(a: str, b: str) -> float:
        return float(np.dot(vectors[a], vectors[b]))

    for a, b in SAME_ATTRIBUTE_UPDATES:
        assert SAME_SUBJECT_SIMILARITY <= similarity(a, b) < RESTATEMENT_SIMILARITY, (a, b)
    for a, b in RESTATEMENTS:
        assert similarity(a, b) >= RESTATEMENT_SIMILARITY, (a, b)
    for a, b in DIFFERENT_ATTRIBUTES:
        assert similarity(a, b) < SAME_SUBJECT_SIMILARITY, (a, b)
