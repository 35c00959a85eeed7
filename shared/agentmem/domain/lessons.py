"""Lessons: how feedback becomes searchable text, how lessons are ranked, and how they are shown.

The digest puts the editor's comment first, then the run's output, then its
input, and truncates at `digestMaxChars`: when space runs out it is the input
that is lost, never the comment. The digest is what gets embedded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from agentmem.domain.errors import InvalidInput
from agentmem.domain.models import Memory, ScoredLesson

SECONDS_PER_DAY = 86_400.0
LESSONS_HEADING = "Lessons from past runs"
NAMED_IMPORTANCE = ("important", "unimportant", "neutral")
IMPORTANCE_RANGE = (0.0, 2.0)
# Two lessons whose `comparison_text` is at least this similar (MiniLM cosine) are one lesson;
# measured in docs/duplicate-threshold.md.
DUPLICATE_THRESHOLD = 0.45


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


def comparison_text(digest: str) -> str:
    """What two lessons are compared by to find near-duplicates: the editor's words, else the whole digest.

    The run's input and output differ from run to run even when editors say the same thing, so they
    would hide agreement (docs/duplicate-threshold.md measures both).
    """
    for line in digest.splitlines():
        if line.startswith("Editor: "):
            return line.removeprefix("Editor: ").strip()
    return digest


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


@dataclass(frozen=True)
class LessonGroup:
    """Near-duplicate lessons of one rating, shown as one bullet.

    `lesson` is the best-scored member (its text is the bullet's, its score the group's);
    `members` are all of them, best first; `overruled` are the older lessons of the opposite
    rating on near-identical text that this group's newer members outvoted (never injected), and
    `conflicts` the same as `(overruled memoryId, the member that overruled it)` pairs.
    """

    lesson: ScoredLesson
    members: tuple[ScoredLesson, ...]
    overruled: tuple[ScoredLesson, ...] = ()
    conflicts: tuple[tuple[str, str], ...] = ()

    @property
    def editors(self) -> int:
        return len(self.members)

    @cached_property
    def group_id(self) -> str:
        """The oldest member's memoryId: the same whatever the query or the page, until that member goes."""
        oldest = min(self.members, key=lambda s: (s.memory.created_at, s.memory.memory_id))
        return oldest.memory.memory_id


def group_lessons(
    ranked: Sequence[ScoredLesson],
    similarity: Callable[[str, str], float],
    *,
    duplicate_threshold: float,
    top_k: int,
) -> list[LessonGroup]:
    """Fold near-duplicate lessons into groups and keep the best `top_k` groups.

    Two lessons are near-duplicates when `similarity(a, b) >= duplicate_threshold`.
    - Opposite ratings on near-identical text are a conflict: the newer lesson wins, the older
      one is overruled (not injected). Lessons are visited newest first, so an overruled lesson
      overrules nothing itself.
    - The remaining lessons of one rating are grouped by single link (a chain of near-duplicates
      is one group). A group ranks by its best member's score (ties: newer first).
    `ranked` is what `rank_lessons` returned (eligible lessons, best first, uncut).
    """
    newest_first = sorted(ranked, key=lambda s: (-s.memory.created_at, s.memory.memory_id))
    overruled_by: dict[str, str] = {}
    for winner in newest_first:
        wid = winner.memory.memory_id
        if wid in overruled_by:
            continue
        for older in newest_first:
            oid = older.memory.memory_id
            if (
                older.memory.created_at <= winner.memory.created_at
                and oid != wid
                and oid not in overruled_by
                and older.memory.rating != winner.memory.rating
                and similarity(wid, oid) >= duplicate_threshold
            ):
                overruled_by[oid] = wid
    alive = [s for s in ranked if s.memory.memory_id not in overruled_by]
    parent = {s.memory.memory_id: s.memory.memory_id for s in alive}

    def root(item: str) -> str:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for rating in {s.memory.rating for s in alive}:
        same = [s.memory.memory_id for s in alive if s.memory.rating == rating]
        for i, a in enumerate(same):
            for b in same[i + 1 :]:
                if similarity(a, b) >= duplicate_threshold and root(a) != root(b):
                    parent[root(b)] = root(a)
    members: dict[str, list[ScoredLesson]] = {}
    for s in alive:  # `alive` is best first, so each group's list is too
        members.setdefault(root(s.memory.memory_id), []).append(s)
    by_id = {s.memory.memory_id: s for s in ranked}
    groups = []
    for group in members.values():
        ids = {s.memory.memory_id for s in group}
        conflicts = tuple((o, w) for o, w in overruled_by.items() if w in ids)
        groups.append(LessonGroup(group[0], tuple(group), tuple(by_id[o] for o, _ in conflicts), conflicts))
    groups.sort(key=lambda g: (-g.lesson.score, -g.lesson.memory.created_at, g.lesson.memory.memory_id))
    return groups[:top_k]


@dataclass(frozen=True)
class LessonPlace:
    """Where one lesson stands among its agent's lessons (the Memory Learning Wall's grouping).

    `group_id` and `group_size` name the lesson's group of near-duplicates (a lesson alone is a group
    of one, named by itself); `conflicts_with` the lessons of the opposite rating on near-identical
    text; `overruled_by` the newer one of them that is injected instead of this one (None: this
    lesson is not overruled).
    """

    group_id: str
    group_size: int
    conflicts_with: tuple[str, ...] = ()
    overruled_by: str | None = None


def place_lessons(lessons: Sequence[Memory], similarity: Callable[[str, str], float]) -> dict[str, LessonPlace]:
    """Every lesson's group and conflicts, by the rule `retrieve` injects by (`group_lessons`, same threshold).

    Here no query ranks the lessons: every one is a candidate, importance orders a group's members.
    An overruled lesson is in no group (it is never injected): a group of one, marked with its winner.
    """
    ranked = sorted(
        (ScoredLesson(m, 1.0, m.importance) for m in lessons),
        key=lambda s: (-s.score, -s.memory.created_at, s.memory.memory_id),
    )
    groups = group_lessons(ranked, similarity, duplicate_threshold=DUPLICATE_THRESHOLD, top_k=len(ranked))
    overruled_by = {loser: winner for g in groups for loser, winner in g.conflicts}
    beaten: dict[str, list[str]] = {}
    for loser, winner in overruled_by.items():
        beaten.setdefault(winner, []).append(loser)
    places = {}
    for group in groups:
        for member in group.members:
            mid = member.memory.memory_id
            places[mid] = LessonPlace(group.group_id, group.editors, tuple(sorted(beaten.get(mid, ()))))
    for loser, winner in overruled_by.items():
        places[loser] = LessonPlace(loser, 1, (winner,), winner)
    return places


def format_lessons(lessons: Sequence[ScoredLesson], editors: Mapping[str, int] | None = None) -> str | None:
    """The system message that shows lessons to an agent, or None when there are none.

    👍 lessons are validated patterns to keep; 👎 lessons are mistakes to avoid. `editors` maps a
    group's shown lesson to how many editors gave it; a bullet given by more than one says so.
    """
    if not lessons:
        return None
    keep = [s for s in lessons if s.memory.rating == "up"]
    avoid = [s for s in lessons if s.memory.rating == "down"]
    lines = [f"## {LESSONS_HEADING}", "Editors reviewed earlier runs like this one. Apply what they said."]
    if avoid:
        lines.append("")
        lines.append("Mistakes to avoid (👎):")
        lines.extend(_bullet(s, editors) for s in avoid)
    if keep:
        lines.append("")
        lines.append("Validated patterns to keep (👍):")
        lines.extend(_bullet(s, editors) for s in keep)
    return "\n".join(lines)


def _bullet(lesson: ScoredLesson, editors: Mapping[str, int] | None) -> str:
    count = (editors or {}).get(lesson.memory.memory_id, 1)
    said = f" (given by {count} editors)" if count > 1 else ""
    return f"- {_one_line(lesson.memory)}{said}"


def lesson_text(memory: Memory) -> str:
    """How a single lesson reads in the API's `lessons[].text` and in the injected message."""
    return _one_line(memory)


def _one_line(memory: Memory) -> str:
    return " | ".join(line.strip() for line in memory.digest.splitlines() if line.strip())
