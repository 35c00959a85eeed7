"""What a sentence embedding model is given for a masked text: personal-data tokens read as their kind.

A masked turn carries tokens such as `{{PII_PERSON_a4c72700_3}}`. To the keyword side a token is one
term, and the same person is the same term everywhere (`agentmem.domain.keyword_terms`). To MiniLM it
is about fifteen word pieces of braces, hash and counter, the same hash in every turn of a user: a
short turn with two names is half noise, and every turn of a user looks alike. Read as its kind
("person", "location"), the token says what stood there in one word, as the sentence did before it
was masked. Who it was is left to the keyword side, which is exact about it.

Measured on the LoCoMo development conversations (docs/locomo-recall.md): the vector side alone, on
the same masked turns and questions, 35.2 / 45.9 -> 47.4 / 58.4 at R@5 / R@10.
"""

from __future__ import annotations

import re

from agentmem.domain.pii import TOKEN_PATTERN


def _kind(match: re.Match[str]) -> str:
    return match.group("type").lower().replace("_", " ")


def tokens_as_kinds(text: str) -> str:
    """`text` with each personal-data token replaced by its kind in lower case ("person", "email address")."""
    return TOKEN_PATTERN.sub(_kind, text)


def lesson_embedded_text(text: str) -> str:
    """What MiniLM is given for a lesson's digest or comment, and for a `retrieve` input searched against them.

    Tokens read as their kind, as for turns: `{{PII_PERSON_e8374884_42}}` is 15 word pieces to the model
    and "person" is one, so a lesson full of names costs less to embed (8.4-9.1 -> 5.1-5.3 ms of CPU per
    lesson on LoCoMo's memories, docs/speed.md) and its vector says what it is about, not whose hash it
    carries (with the hash, unrelated lessons of one subject looked alike: docs/eligibility-threshold.md).
    Both sides of the lesson search must be rendered alike: a lesson indexed before this rendering needs
    `agentmem reindex`.
    """
    return tokens_as_kinds(text)
