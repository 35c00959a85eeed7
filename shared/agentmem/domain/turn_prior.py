"""How likely a turn of a conversation is to answer a question, from its own text, before any question.

Two signals, each a factor on a turn's search score (`agentmem.domain.fusion.with_priors`):

- **Length.** Most short turns ("Wow, that's great!", "Thanks!") state no fact, and a question's
  evidence is a turn that does; a short turn can still match a question well (one shared word is a
  large share of it for BM25, and its vector says little but generically). The factor grows with the
  logarithm of the word count, so a long turn does not win by length alone.
- **Asking rather than telling.** A turn whose sentences are questions ("How was the concert? Did
  you go with your sister?") names what the answer is about without holding the answer; the reply
  does. The factor falls with the share of the turn's sentences that end in a question mark.

Both read the stored (masked) text only: a personal-data token is one word, and nothing here depends
on who speaks or on the language beyond the question mark. Weights chosen by cross-validation over the
LoCoMo development conversations (docs/locomo-recall.md).
"""

from __future__ import annotations

import math
import re

# A sentence: a run of text up to its closing punctuation ("...", "?!" and the like stay with it).
_SENTENCE = re.compile(r"[^.!?]*[^.!?\s][^.!?]*[.!?]*")


def word_count(text: str) -> int:
    """Words of `text`, split at whitespace."""
    return len(text.split())


def question_share(text: str) -> float:
    """The share of `text`'s sentences that end in a question mark (0 for a text with none)."""
    sentences = [part.strip() for part in _SENTENCE.findall(text)]
    sentences = [part for part in sentences if part]
    if not sentences:
        return 0.0
    return sum(part.endswith("?") for part in sentences) / len(sentences)


def turn_prior(text: str, *, length_weight: float, question_weight: float) -> float:
    """The factor on a turn's score: `(1 + length_weight x ln(1 + words)) x (1 - question_weight x question share)`."""
    if length_weight < 0 or not 0 <= question_weight <= 1:
        raise ValueError("length_weight must be >= 0 and question_weight between 0 and 1")
    return (1.0 + length_weight * math.log1p(word_count(text))) * (1.0 - question_weight * question_share(text))
