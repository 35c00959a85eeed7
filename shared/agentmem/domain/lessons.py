"""Lessons: how feedback becomes searchable text, how lessons are ranked, and how they are shown.

The digest puts the editor's comment first, then the run's output, then its
input, and truncates at `digestMaxChars`: when space runs out it is the input
that is lost, never the comment. The digest is what gets embedded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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


def comparison_text(digest: str) -> str:
    """What a lesson's comment vector embeds: the editor's words, else the whole digest.

    The run's input and output differ from run to run even when editors say the same thing, so they
    would hide agreement. Only lessons with an editor's words are ever grouped (domain/teaching.py).
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


# A group's bullet stands for all its members, but `lessons[]` lists at most this many of them (the
# best first), so an answer lists at most topK x MAX_LISTED_MEMBERS lessons however large a group is.
MAX_LISTED_MEMBERS = 3
# A relation between two lessons by memoryId (the same teaching; a disagreement): service/teaching_relation.py.
LessonPair = Callable[[str, str], bool]


def group_key(memory: Memory) -> str:
    """The id of the lesson's group: given once, when the lesson is indexed (`assign_group`).

    A lesson indexed before groups were kept is a group of its own, named by itself.
    """
    return memory.group_id or memory.memory_id


def assign_group(lesson: Memory, earlier: Sequence[Memory], same: LessonPair) -> str:
    """The group a newly indexed lesson joins: the oldest group it teaches the same thing as, or its own.

    A group is named by its first lesson, its representative, and a lesson joins it only when it
    teaches the same thing as that representative (complete to the representative, never a chain
    through intermediate lessons). Only representatives of the same rating, older than `lesson`, count.
    """
    representatives = sorted(
        (m for m in earlier
         if m.memory_id != lesson.memory_id and m.rating == lesson.rating and m.status != "deleted"
         and group_key(m) == m.memory_id and (m.created_at, m.memory_id) < (lesson.created_at, lesson.memory_id)),
        key=lambda m: (m.created_at, m.memory_id),
    )
    for representative in representatives:
        if same(lesson.memory_id, representative.memory_id):
            return representative.memory_id
    return lesson.memory_id


@dataclass(frozen=True)
class LessonGroup:
    """Lessons of one rating that teach the same thing, shown as one bullet.

    `lesson` is the best-scored member (its words are the bullet's, its score the group's);
    `members` are all of them, best first; `overruled` are the lessons of an older group of the
    opposite rating that says the opposite about the same thing (never injected), and `conflicts` the same as
    `(overruled memoryId, this group's lesson that overruled it)` pairs.
    """

    lesson: ScoredLesson
    members: tuple[ScoredLesson, ...]
    overruled: tuple[ScoredLesson, ...] = ()
    conflicts: tuple[tuple[str, str], ...] = ()

    @property
    def editors(self) -> int:
        return len(self.members)

    @property
    def group_id(self) -> str:
        """The id given when the lesson was indexed: the same in `retrieve` and on the wall."""
        return group_key(self.lesson.memory)

    @property
    def listed(self) -> tuple[ScoredLesson, ...]:
        """The members an answer names in `lessons[]`: the best `MAX_LISTED_MEMBERS`."""
        return self.members[:MAX_LISTED_MEMBERS]

    @property
    def newest(self) -> float:
        return max(m.memory.created_at for m in self.members)


def group_lessons(ranked: Sequence[ScoredLesson], disagree: LessonPair, *, top_k: int) -> list[LessonGroup]:
    """Fold `ranked` lessons into their groups and keep the best `top_k` groups (distinct teachings).

    - Members of one group share the group id given at indexing (`assign_group`).
    - Two groups of opposite ratings whose best lessons are about the same thing and say the opposite
      (`disagree`) are a conflict: the group with the newer lesson wins, the other is overruled (not
      injected). Lessons that share a subject but agree, or differ in subject, are never overruled.
    A group ranks by its best member's score (ties: newer first). `ranked` is what `rank_lessons`
    returned (eligible lessons, best first, uncut).
    """
    by_key: dict[str, list[ScoredLesson]] = {}
    for s in ranked:
        by_key.setdefault(group_key(s.memory), []).append(s)
    candidates = list(by_key.values())
    newest = {id(g): max(m.memory.created_at for m in g) for g in candidates}
    newest_first = sorted(candidates, key=lambda g: (-newest[id(g)], g[0].memory.memory_id))
    # Only groups of opposite ratings can conflict, so a winner is compared with those alone: linear in
    # the candidates where they all share a rating, not quadratic (a retrieve groups ~40 of them).
    by_rating: dict[str, list[list[ScoredLesson]]] = {}
    for g in newest_first:
        by_rating.setdefault(g[0].memory.rating, []).append(g)
    overruled_by: dict[int, ScoredLesson] = {}  # id(group list) -> the winning group's lesson
    for winner in newest_first:
        if id(winner) in overruled_by:
            continue
        rating = winner[0].memory.rating
        for other_rating, others in by_rating.items():
            if other_rating == rating:
                continue
            for older in others:
                if (
                    id(older) not in overruled_by
                    and newest[id(older)] <= newest[id(winner)]
                    and disagree(winner[0].memory.memory_id, older[0].memory.memory_id)
                ):
                    overruled_by[id(older)] = winner[0]
    losers_of: dict[int, list[list[ScoredLesson]]] = {}  # id(winning lesson) -> its losers, in candidate order
    for loser in candidates:
        won = overruled_by.get(id(loser))
        if won is not None:
            losers_of.setdefault(id(won), []).append(loser)
    groups = []
    for members in candidates:
        if id(members) in overruled_by:
            continue
        beaten = [(loser, overruled_by[id(loser)]) for loser in losers_of.get(id(members[0]), ())]
        overruled = tuple(m for loser, _ in beaten for m in loser)
        conflicts = tuple((m.memory.memory_id, w.memory.memory_id) for loser, w in beaten for m in loser)
        groups.append(LessonGroup(members[0], tuple(members), overruled, conflicts))
    groups.sort(key=lambda g: (-g.lesson.score, -g.lesson.memory.created_at, g.lesson.memory.memory_id))
    return groups[:top_k]


@dataclass(frozen=True)
class LessonPlace:
    """Where one lesson stands among its agent's lessons (the Memory Learning Wall's grouping).

    `group_id` and `group_size` name the lesson's group (a lesson alone is a group of one, named by
    itself); `conflicts_with` the lessons of the opposite rating that teach the same thing;
    `overruled_by` the newer one of them that is injected instead of this one (None: not overruled).
    """

    group_id: str
    group_size: int
    conflicts_with: tuple[str, ...] = ()
    overruled_by: str | None = None


def place_lessons(lessons: Sequence[Memory], disagree: LessonPair) -> dict[str, LessonPlace]:
    """Every lesson's group and conflicts, by the rule `retrieve` injects by (`group_lessons`).

    Here no query ranks the lessons: every one is a candidate, importance orders a group's members.
    An overruled lesson keeps its group id, marked with the lesson that overrules it.
    """
    ranked = sorted(
        (ScoredLesson(m, 1.0, m.importance) for m in lessons),
        key=lambda s: (-s.score, -s.memory.created_at, s.memory.memory_id),
    )
    groups = group_lessons(ranked, disagree, top_k=len(ranked))
    sizes: dict[str, int] = {}
    for m in lessons:
        sizes[group_key(m)] = sizes.get(group_key(m), 0) + 1
    overruled_by = {loser: winner for g in groups for loser, winner in g.conflicts}
    beaten: dict[str, list[str]] = {}
    for loser, winner in overruled_by.items():
        beaten.setdefault(winner, []).append(loser)
    places = {}
    for m in lessons:
        key = group_key(m)
        places[m.memory_id] = LessonPlace(
            key, sizes[key], tuple(sorted(beaten.get(m.memory_id, ()))), overruled_by.get(m.memory_id)
        )
        if m.memory_id in overruled_by:
            places[m.memory_id] = LessonPlace(key, sizes[key], (overruled_by[m.memory_id],), overruled_by[m.memory_id])
    return places


def lesson_label(position: int) -> str:
    """The label that ties a bullet of the system message to its run's example in the context message."""
    return f"L{position + 1}"


def format_lessons(groups: Sequence[LessonGroup]) -> str | None:
    """The system message that shows lessons to an agent, or None when there are none.

    It holds only what editors wrote and agentmem's own fixed wording: never a run's input or output
    (those are data, shown apart: `run_excerpt`). 👍 lessons are validated patterns to keep; 👎
    lessons are mistakes to avoid; a bullet given by more than one editor says so. Each bullet is
    labelled by its position in `groups`.
    """
    if not groups:
        return None
    labelled = [(lesson_label(i), g) for i, g in enumerate(groups)]
    keep = [(label, g) for label, g in labelled if g.lesson.memory.rating == "up"]
    avoid = [(label, g) for label, g in labelled if g.lesson.memory.rating == "down"]
    lines = [f"## {LESSONS_HEADING}", "Editors reviewed earlier runs like this one. Apply what they said."]
    if avoid:
        lines.append("")
        lines.append("Mistakes to avoid (👎):")
        lines.extend(_bullet(label, g) for label, g in avoid)
    if keep:
        lines.append("")
        lines.append("Validated patterns to keep (👍):")
        lines.extend(_bullet(label, g) for label, g in keep)
    return "\n".join(lines)


def _bullet(label: str, group: LessonGroup) -> str:
    said = f" (given by {group.editors} editors)" if group.editors > 1 else ""
    return f"- [{label}] {lesson_text(group.lesson.memory)}{said}"


def _split_digest(digest: str) -> tuple[str | None, str | None]:
    """(the editor's words, the run part) of a digest built by `build_digest`.

    The comment comes first and the run's output and input after it, each on a labelled line; a
    comment holding such a label itself is cut there, so its rest is treated as run text (shown as
    data, never as an instruction): the safe side of an ambiguity.
    """
    if not digest.startswith("Editor: "):
        return None, digest.strip() or None
    body = digest.removeprefix("Editor: ")
    cuts = [i for i in (body.find("\nOutput: "), body.find("\nInput: ")) if i != -1]
    cut = min(cuts) if cuts else len(body)
    words = " ".join(body[:cut].split()) or None
    run = body[cut:].strip() or None
    return words, run


def editor_words(digest: str) -> str | None:
    """The editor's comment a digest starts with, or None for a lesson given without one."""
    return _split_digest(digest)[0]


def lesson_text(memory: Memory) -> str:
    """How a lesson reads in the system message and in `lessons[].text`: the editor's words only."""
    words = editor_words(memory.digest)
    if words:
        return words
    verdict = "approved" if memory.rating == "up" else "rejected"
    return f"An editor {verdict} the output of a similar run, without a comment."


def run_excerpt(memory: Memory) -> str | None:
    """The run part of a lesson's digest ("Output: … | Input: …" on one line), or None when it has none.

    It is what a user or the agent wrote, so it is shown as data in the context message, and only
    where `excerpt_visible` allows.
    """
    run = _split_digest(memory.digest)[1]
    if run is None:
        return None
    return " | ".join(" ".join(line.split()) for line in run.splitlines() if line.strip())


def excerpt_visible(memory: Memory, user_id: str | None, agent_subject: str) -> bool:
    """Whether a lesson's run excerpt may be shown in a run for `user_id`.

    A run made for a user stays with that user; a run made without one (the agent's own work,
    `agent_subject`) may be shown to every user. A lesson whose run is unknown (stored before the
    run's subject was kept) or erased shows no excerpt.
    """
    if memory.subject is None:
        return False
    return memory.subject == agent_subject or (user_id is not None and memory.subject == user_id)
