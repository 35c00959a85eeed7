"""Lessons that teach the same thing, compared the way the indexer, `retrieve` and the wall compare them.

Two lessons are compared by their editors' words: the comment vectors the indexer keeps with each
lesson, and the rule of domain/teaching.py. A lesson without a vector (indexed before they were kept)
is embedded here, all such in one call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.lessons import LessonPlace, place_lessons
from agentmem.domain.models import Memory
from agentmem.ports.records import Page
from agentmem.service.memory import MemoryService
from agentmem.service.teaching_relation import teaching_relation

# The wall groups the agent's newest lessons (and the page's own): enough for every lesson an agent
# keeps within maxMemoryAgeDays at a few feedbacks a day, and a bounded cost per listing (the
# comparison is one embedding per lesson not yet cached, and a pass over every pair).
WALL_GROUPING_WINDOW = 500


@dataclass(frozen=True)
class GroupedPage:
    """A page of the wall's lessons with each one's place (None when the comparison was unavailable)."""

    page: Page[Memory]
    places: dict[str, LessonPlace | None]
    degraded: list[str] = field(default_factory=list)


def list_grouped(memory: MemoryService, agent_id: str, limit: int, cursor: str | None) -> GroupedPage:
    """One page of the agent's lessons, newest first, each with its group and conflicts.

    A lesson's group is the one given when it was indexed, the same as in `retrieve`; group sizes and
    conflicts are counted over the agent's newest `WALL_GROUPING_WINDOW` lessons and the page's own.
    When the embedder is down the page still answers,
    without groups, and says so in `degraded`.
    """
    page = memory.list_memories(agent_id, limit, cursor)
    if not page.items:
        return GroupedPage(page, {})
    universe = {m.memory_id: m for m in memory.newest_lessons(agent_id, WALL_GROUPING_WINDOW)}
    universe.update((m.memory_id, m) for m in page.items)
    lessons = list(universe.values())
    try:
        # The relation embeds a comment without a kept vector when a pair first needs it.
        places = place_lessons(lessons, teaching_relation(memory.embedder, lessons).disagree)
    except BackendUnavailable as exc:
        return GroupedPage(page, {m.memory_id: None for m in page.items}, [exc.part])
    return GroupedPage(page, {m.memory_id: places[m.memory_id] for m in page.items})
