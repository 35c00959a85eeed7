"""A question rewritten as the statement an answer would make, without a model: for the vector side.

"When did Caroline go to the support group?" -> "Caroline go to the support group". A sentence
embedding of a question sits between questions and answers; the turns a question looks for are
statements. Only the leading question word and its auxiliary go (and the question mark); every
other word stays, so the rewrite never removes what the question is about.
"""

from __future__ import annotations

import re

_QUESTION_WORDS = r"what|when|where|who|whom|whose|which|why|how(?:\s+(?:many|much|long|often|old))?"
_AUXILIARIES = r"is|are|was|were|do|does|did|has|have|had|can|could|will|would|should|might"
_LEADING = re.compile(
    rf"^\s*(?:(?:{_QUESTION_WORDS})(?:\s+(?:{_AUXILIARIES}))?|(?:{_AUXILIARIES}))\b\s*", re.IGNORECASE
)


def statement_form(question: str) -> str:
    """`question` without its leading question word and auxiliary and its final question mark.

    A text that is not a question, or that would be left empty, comes back unchanged.
    """
    rewritten = _LEADING.sub("", question, count=1).rstrip().rstrip("?").strip()
    return rewritten or question
