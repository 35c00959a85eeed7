"""Lessons: how feedback becomes searchable text, how lessons are ranked, and how they are shown.

The digest puts the editor's comment first, then the run's output, then its
input, and truncates at `digestMaxChars`: when space runs out it is the input
that is lost, never the comment. The digest is what gets embedded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentmem.domain.errors import InvalidInput
from agentmem.domain.models import Memory, ScoredLesson

SECONDS_PER_DAY = 86_400.0
LESSONS_HEADING = "Lessons from past runs"
NAMED_IMPORTANCE = ("important", "unimportant", "neutral")
IMPORTANCE_RANGE = (0.0, 2.0)


def build_digest(comment: str | None, output: str | None, input_text: str, max_chars: int) -> str:
    """The text a lesson is embedded and shown by: comment, then output, then input, cut at `max_chars`.

    Empty parts are skipped. Each part is labelled so a reader (human or model)
    knows what it is reading; truncation drops the end of the digest, so the
    comment survives longest.
    """
    parts = []
    if comment and comment.strip():
        parts.append(f"Editor: {comment.strip()}")
    if output and output.strip():
        parts.append(f"Output: {output.strip()}")
    if input_text and input_text.strip():
        parts.append(f"Input: {input_text.strip()}")
    digest = "\n".join(parts)
    if len(digest) <= max_chars:
        return digest
    if max_chars <= 1:
        return digest[:max_chars]
    return _without_cut_token(digest[: max_chars - 1]).rstrip() + "…"


def _without_cut_token(text: str) -> str:
    """`text` without a PII token cut in half at its end (`… {{PII_EMAIL_3f9`): half a token is noise."""
    opening = text.rfind("{{")
    if opening != -1 and "}}" not in text[opening:]:
        return text[:opening]
    return text


def resolve_importance(value: str | float | int, important: float, unimportant: float) -> float:
    """The multiplier an editor's importance setting stands for.

    Named values map to the configured weights (neutral is 1.0); a number must lie in [0, 2].
    """
    if isinstance(value, bool):
        raise InvalidInput(
            "importance must be a name or a number",
            [{"field": "importance", "message": "must be a name or a number"}],
        )
    if isinstance(value, str):
        named = {"important": important, "unimportant": unimportant, "neutral": 1.0}
        if value not in named:
            raise InvalidInput(
                "unknown importance",
                [
                    {
                        "field": "importance",
                        "message": f"must be one of {', '.join(NAMED_IMPORTANCE)} or a number",
                    }
                ],
            )
        return named[value]
    low, high = IMPORTANCE_RANGE
    if not (low <= float(value) <= high):
        raise InvalidInput(
            "importance out of range",
            [{"field": "importance", "message": f"a number must lie in [{low:g}, {high:g}]"}],
        )
    return float(value)


@dataclass(frozen=True)
class Candidate:
    """A lesson the vector index returned, before the domain's rules are applied."""

    memory: Memory
    similarity: float


def rank_lessons(
    candidates: Iterable[Candidate],
    *,
    threshold: float,
    max_age_days: int,
    top_k: int,
    now: float,
) -> list[ScoredLesson]:
    """Choose the lessons to inject.

    Eligible: similarity >= threshold (importance plays no part here), younger
    than `max_age_days`, not deleted. Eligible lessons are ordered by
    similarity x importance (ties: newer first); the first `top_k` are kept.
    """
    oldest = now - max_age_days * SECONDS_PER_DAY
    eligible = [
        ScoredLesson(c.memory, c.similarity, c.similarity * c.memory.importance)
        for c in candidates
        if c.similarity >= threshold and c.memory.created_at >= oldest and c.memory.status != "deleted"
    ]
    eligible.sort(key=lambda s: (-s.score, -s.memory.created_at, s.memory.memory_id))
    return eligible[:top_k]


def format_lessons(lessons: Sequence[ScoredLesson]) -> str | None:
    """The system message that shows lessons to an agent, or None when there are none.

    👍 lessons are validated patterns to keep; 👎 lessons are mistakes to avoid.
    """
    if not lessons:
        return None
    keep = [s for s in lessons if s.memory.rating == "up"]
    avoid = [s for s in lessons if s.memory.rating == "down"]
    lines = [f"## {LESSONS_HEADING}", "Editors reviewed earlier runs like this one. Apply what they said."]
    if avoid:
        lines.append("")
        lines.append("Mistakes to avoid (👎):")
        lines.extend(f"- {_one_line(s.memory)}" for s in avoid)
    if keep:
        lines.append("")
        lines.append("Validated patterns to keep (👍):")
        lines.extend(f"- {_one_line(s.memory)}" for s in keep)
    return "\n".join(lines)


def lesson_text(memory: Memory) -> str:
    """How a single lesson reads in the API's `lessons[].text` and in the injected message."""
    return _one_line(memory)


def _one_line(memory: Memory) -> str:
    return " | ".join(line.strip() for line in memory.digest.splitlines() if line.strip())
