"""The lesson rules: digest order and truncation, importance, eligibility and ranking, the injected text."""

from __future__ import annotations

import pytest
from agentmem.domain.errors import InvalidInput
from agentmem.domain.lessons import (
    Candidate,
    LessonGroup,
    build_digest,
    format_lessons,
    rank_lessons,
    resolve_importance,
)
from agentmem.domain.models import Memory
from hypothesis import given, settings
from hypothesis import strategies as st

DAY = 86_400.0
NOW = 1_800_000_000.0


def lesson(memory_id: str, *, rating="down", importance=1.0, age_days=1.0, status="indexed", digest=None) -> Memory:
    return Memory("acme", "agent", memory_id, "run", "fb", rating, "comment", digest or f"Editor: {memory_id}",
                  importance, NOW - age_days * DAY, status=status)


def test_the_digest_puts_the_comment_first_then_output_then_input():
    digest = build_digest("Too formal.", "Dear Sir", "Write to Bob", 500)
    assert digest == "Editor: Too formal.\nOutput: Dear Sir\nInput: Write to Bob"


def test_truncation_drops_the_input_before_the_comment():
    digest = build_digest("Keep this comment", "o" * 100, "i" * 1000, 60)
    assert digest.startswith("Editor: Keep this comment") and len(digest) <= 60 and "Input" not in digest


@given(comment=st.text(min_size=1, max_size=300), output=st.text(max_size=300), text=st.text(max_size=300),
       limit=st.integers(min_value=1, max_value=800))
@settings(max_examples=200, deadline=None)
def test_a_digest_never_exceeds_its_limit_and_keeps_a_comment_prefix(comment, output, text, limit):
    digest = build_digest(comment, output, text, limit)
    assert len(digest) <= limit
    if comment.strip():
        head = f"Editor: {comment.strip()}"
        kept = digest.rstrip("…")
        assert head.startswith(kept) or kept.startswith(head)


def test_empty_parts_are_left_out():
    assert build_digest(None, "", "the input", 500) == "Input: the input"


def test_named_and_numeric_importance():
    assert resolve_importance("important", 1.5, 0.3) == 1.5
    assert resolve_importance("unimportant", 1.5, 0.3) == 0.3
    assert resolve_importance("neutral", 1.5, 0.3) == 1.0
    assert resolve_importance(0, 1.5, 0.3) == 0.0 and resolve_importance(2, 1.5, 0.3) == 2.0


@pytest.mark.parametrize("value", ["huge", -0.1, 2.01, True])
def test_bad_importance_is_invalid_input_naming_the_field(value):
    with pytest.raises(InvalidInput) as caught:
        resolve_importance(value, 1.5, 0.3)
    assert caught.value.details[0]["field"] == "importance"


def test_eligibility_is_decided_on_similarity_alone():
    boosted_but_dissimilar = lesson("a", importance=2.0)
    ranked = rank_lessons([Candidate(boosted_but_dissimilar, 0.29)], threshold=0.30, max_age_days=90, top_k=5, now=NOW)
    assert ranked == []


def test_eligible_lessons_rank_by_similarity_times_importance_and_keep_top_k():
    candidates = [
        Candidate(lesson("close"), 0.9),
        Candidate(lesson("boosted", importance=1.5), 0.7),  # 1.05
        Candidate(lesson("muted", importance=0.3), 0.95),   # 0.285
        Candidate(lesson("plain"), 0.5),
    ]
    ranked = rank_lessons(candidates, threshold=0.3, max_age_days=90, top_k=3, now=NOW)
    assert [s.memory.memory_id for s in ranked] == ["boosted", "close", "plain"]
    assert ranked[0].score == pytest.approx(1.05) and ranked[0].similarity == 0.7


def test_old_and_deleted_lessons_are_not_eligible():
    candidates = [Candidate(lesson("old", age_days=91), 0.9), Candidate(lesson("gone", status="deleted"), 0.9),
                  Candidate(lesson("fresh", age_days=89), 0.9)]
    ranked = rank_lessons(candidates, threshold=0.3, max_age_days=90, top_k=5, now=NOW)
    assert [s.memory.memory_id for s in ranked] == ["fresh"]


def test_the_injected_text_says_which_lessons_to_keep_and_which_to_avoid():
    ranked = rank_lessons([Candidate(lesson("bad", rating="down", digest="Editor: never do X"), 0.8),
                           Candidate(lesson("good", rating="up", digest="Editor: always do Y"), 0.7)],
                          threshold=0.3, max_age_days=90, top_k=5, now=NOW)
    text = format_lessons([LessonGroup(s, (s,)) for s in ranked])
    assert text is not None and text.startswith("## Lessons from past runs")
    avoid, keep = text.index("Mistakes to avoid"), text.index("Validated patterns to keep")
    assert avoid < text.index("never do X") < keep < text.index("always do Y")
    assert format_lessons([]) is None
