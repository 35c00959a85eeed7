"""The rule that decides when two editors teach the same thing (domain/teaching.py), and its measured rates."""

from __future__ import annotations

import pytest
from agentmem.domain.teaching import TEACHING_COSINE, disagree, same_teaching, teaching_terms
from agentmem.eval.lesson_grouping import load_pairs, measure


def test_a_quoted_phrase_is_an_anchor_and_an_apostrophe_opens_no_quote():
    terms = teaching_terms("Don't flag 'trail magic': it's our idiom.")
    assert {"trail", "magic"} <= terms.anchors and terms.negations == 1


def test_the_same_template_about_another_quoted_phrase_is_another_teaching():
    a = teaching_terms("'Trail magic' is our idiom. Never flag it.")
    b = teaching_terms("'Leave no trace' is our idiom. Never flag it.")
    assert not same_teaching(a, b, 0.99)


def test_replacing_a_word_makes_another_teaching_even_at_a_high_cosine():
    a = teaching_terms("Put the price before the description.")
    b = teaching_terms("Put the price after the description.")
    assert not same_teaching(a, b, 0.98) and not disagree(a, b, 0.98)


def test_a_negation_turns_the_same_subject_into_a_disagreement():
    a = teaching_terms("Mention competitors by name.")
    b = teaching_terms("Never mention competitors by name.")
    assert not same_teaching(a, b, 0.9) and disagree(a, b, 0.9)


def test_saying_more_about_the_same_thing_is_the_same_teaching():
    a = teaching_terms("Always cite the source of a statistic.")
    b = teaching_terms("Every statistic needs its source cited.")
    assert same_teaching(a, b, TEACHING_COSINE) and not same_teaching(a, b, TEACHING_COSINE - 0.01)


def test_a_qualifier_binds_to_its_word_so_too_formal_is_not_too_casual():
    a = teaching_terms("Too formal. Write more casually.")
    b = teaching_terms("Too casual. Write more formally.")
    assert not same_teaching(a, b, 0.95)


@pytest.fixture(scope="module")
def rates(minilm):
    return {(r.source, r.kind): r for r in measure(minilm, load_pairs())}


def test_no_hard_negative_of_either_fixture_is_ever_merged(rates):
    negatives = [r for (_, kind), r in rates.items() if kind != "paraphrase"]
    assert negatives and sum(r.pairs for r in negatives) >= 600
    assert [(r.source, r.kind, r.merged) for r in negatives if r.merged] == []


def test_most_paraphrases_of_the_pairs_fixture_are_merged_on_both_halves(rates):
    # Measured 10/15 (A, tuned on) and 9/15 (B); the floor leaves a pair of margin on each.
    assert rates[("pairs A", "paraphrase")].merged >= 8
    assert rates[("pairs B", "paraphrase")].merged >= 7


def test_agreeing_lessons_are_never_judged_to_disagree(rates):
    agreeing = [r for (source, kind), r in rates.items() if kind in ("paraphrase", "template", "distinct")
                and source.startswith("pairs")]
    assert [(r.source, r.kind) for r in agreeing if r.conflicts] == []
