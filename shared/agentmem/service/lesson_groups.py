"""Near-duplicate lessons, compared the way `retrieve` and the Memory Learning Wall both compare them.

Two lessons are compared by their editors' words (`comparison_text`), embedded by the service's
embedder: the vector index holds digest vectors and returns none. The embedders cache by exact
text, so a lesson compared before costs a lookup, not a model call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.lessons import LessonPlace, comparison_text, place_lessons
from agentmem.domain.models import Memory
from agentmem.ports.embedder import Embedder, vector_from_bytes
from agentmem.ports.records import Page
from agentmem.service.memory import MemoryService

# The wall groups the agent's newest lessons (and the page's own): enough for every lesson an agent
# keeps within maxMemoryAgeDays at a few feedbacks a day, and a bounded cost per listing (the
# comparison is one embedding per lesson not yet cached, and a pass over every pair).
WALL_GROUPING_WINDOW = 500
_PAGE = 100


def comment_similarity(embedder: Embedder, lessons: Sequence[Memory]) -> Callable[[str, str], float]:
    """Cosine similarity between two of `lessons`' editor comments, by memoryId.

    The indexer keeps each lesson's comment vector with it; only a lesson without one (indexed before
    they were kept, or by another model) is embedded here, all such in one call.
    """
    if len(lessons) < 2:
        return lambda a, b: 0.0
    stored = [vector_from_bytes(m.comment_vector, embedder.dimension) if m.comment_vector else None for m in lessons]
    missing = [i for i, vector in enumerate(stored) if vector is None]
    vectors = np.empty((len(lessons), embedder.dimension), dtype=np.float32)
    if missing:
        vectors[missing] = embedder.embed([comparison_text(lessons[i].digest) for i in missing])
    for i, vector in enumerate(stored):
        if vector is not None:
            vectors[i] = vector
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    cosine = unit @ unit.T
    row = {m.memory_id: i for i, m in enumerate(lessons)}
    return lambda a, b: float(cosine[row[a], row[b]])


@dataclass(frozen=True)
class GroupedPage:
    """A page of the wall's lessons with each one's place (None when the comparison was unavailable)."""

    page: Page[Memory]
    places: dict[str, LessonPlace | None]
    degraded: list[str] = field(default_factory=list)


def list_grouped(memory: MemoryService, agent_id: str, limit: int, cursor: str | None) -> GroupedPage:
    """One page of the agent's lessons, newest first, each with its group and conflicts.

    Groups are computed over the agent's newest `WALL_GROUPING_WINDOW` lessons and the page's own, so
    a lesson's group is the same on every page. When the embedder is down the page still answers,
    without groups, and says so in `degraded`.
    """
    page = memory.list_memories(agent_id, limit, cursor)
    if not page.items:
        return GroupedPage(page, {})
    universe = {m.memory_id: m for m in _newest(memory, agent_id)}
    universe.update((m.memory_id, m) for m in page.items)
    lessons = list(universe.values())
    try:
        similarity = comment_similarity(memory.embedder, lessons)
    except BackendUnavailable as exc:
        return GroupedPage(page, {m.memory_id: None for m in page.items}, [exc.part])
    places = place_lessons(lessons, similarity)
    return GroupedPage(page, {m.memory_id: places[m.memory_id] for m in page.items})


def _newest(memory: MemoryService, agent_id: str) -> list[Memory]:
    found: list[Memory] = []
    cursor: str | None = None
    while len(found) < WALL_GROUPING_WINDOW:
        page = memory.list_memories(agent_id, min(_PAGE, WALL_GROUPING_WINDOW - len(found)), cursor)
        found.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    return found
