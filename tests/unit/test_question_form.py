"""Questions rewritten as statements for the vector side: only the leading question word and auxiliary go."""

from __future__ import annotations

import pytest
from agentmem.domain.question_form import statement_form


@pytest.mark.parametrize(("question", "statement"), [
    ("When did Caroline go to the LGBTQ support group?", "Caroline go to the LGBTQ support group"),
    ("What books has Melanie read?", "books has Melanie read"),
    ("How many children does Melanie have?", "children does Melanie have"),
    ("Would Caroline pursue writing as a career?", "Caroline pursue writing as a career"),
    ("Where has Melanie camped?", "Melanie camped"),
])
def test_the_leading_question_word_and_auxiliary_go_and_every_other_word_stays(question: str, statement: str) -> None:
    assert statement_form(question) == statement


@pytest.mark.parametrize("text", ["I like tea", "Whatever happened", "What?", ""])
def test_a_text_that_is_no_question_or_would_be_left_empty_is_unchanged(text: str) -> None:
    assert statement_form(text) == text
