"""A turn's prior from its own text: longer turns and turns that tell rather than ask score higher."""

from __future__ import annotations

import math

import pytest
from agentmem.domain.turn_prior import question_share, turn_prior, word_count


def test_a_token_is_one_word() -> None:
    assert word_count("Thanks, {{PII_PERSON_a4c72700_3}}!  See you") == 4


def test_the_question_share_counts_sentences_that_end_in_a_question_mark() -> None:
    assert question_share("How was it? Did you go?") == 1.0
    assert question_share("That's great! Did you go with your sister?") == 0.5
    assert question_share("Wow... really?! Yes.") == 0.0  # "?!" is an exclamation, not a question
    assert question_share("We went on Friday") == 0.0
    assert question_share("") == 0.0


def test_a_long_statement_has_a_larger_prior_than_a_short_one_or_a_question_of_the_same_length() -> None:
    short = turn_prior("Wow, great!", length_weight=0.3, question_weight=0.35)
    long = turn_prior("We went to the lake with the kids and camped two nights.", length_weight=0.3,
                      question_weight=0.35)
    asked = turn_prior("Did you go to the lake with the kids and camp there?", length_weight=0.3,
                       question_weight=0.35)
    assert short < long
    assert asked == pytest.approx(long * 0.65)
    assert long == pytest.approx(1 + 0.3 * math.log(13))


def test_zero_weights_give_a_neutral_prior_and_bad_weights_are_refused() -> None:
    assert turn_prior("How? Why?", length_weight=0.0, question_weight=0.0) == 1.0
    with pytest.raises(ValueError):
        turn_prior("x", length_weight=-0.1, question_weight=0.0)
    with pytest.raises(ValueError):
        turn_prior("x", length_weight=0.1, question_weight=1.5)
