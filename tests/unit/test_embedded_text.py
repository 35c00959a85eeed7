"""What the embedder reads for a masked text: tokens as their kind."""

from __future__ import annotations

from agentmem.domain.embedded_text import tokens_as_kinds


def test_each_token_reads_as_its_kind_and_the_rest_is_unchanged() -> None:
    text = "{{PII_PERSON_a4c72700_3}}: I met {{PII_PERSON_a4c72700_1}} in {{PII_LOCATION_a4c72700_2}}!"
    assert tokens_as_kinds(text) == "person: I met person in location!"


def test_a_kind_of_several_words_reads_as_words_and_a_text_without_tokens_is_itself() -> None:
    assert tokens_as_kinds("mail {{PII_EMAIL_ADDRESS_0123abcd_12}} now") == "mail email address now"
    plain = "No {{braces}} here, nor PII_PERSON_x_1."
    assert tokens_as_kinds(plain) == plain
