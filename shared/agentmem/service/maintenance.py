"""Operators' work on a tenant's data: rebuilding the vector index, exporting and importing lessons."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentmem.domain.errors import InvalidInput, NotFound
from agentmem.domain.models import Feedback, Memory, Run
from agentmem.ports.embedder import vector_bytes
from agentmem.ports.vectors import VectorItem
from agentmem.service.conversations import ConversationService
from agentmem.service.memory import MemoryService
from agentmem.service.turn_recall import TurnRecallService

EXPORT_FORMAT = "agentmem.lessons/v1"
BATCH = 32


@dataclass
class ReindexReport:
    agents: int = 0
    indexed: int = 0
    by_agent: dict[str, int] = field(default_factory=dict)


def iter_lessons(memory: MemoryService, agent_id: str, page_size: int = 100) -> Iterator[Memory]:
    """Every live lesson of an agent, newest first, page by page."""
    cursor = None
    while True:
        page = memory.store.list_memories(memory.tenant, agent_id, limit=page_size, cursor=cursor)
        yield from page.items
        if not page.next_cursor:
            return
        cursor = page.next_cursor


def reindex_lessons(
    memory: MemoryService,
    agents: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReindexReport:
    """Embed every live lesson again and write it to the vector index (after a model change or a lost index).

    The record store is the source of truth; the index is rebuilt from it, in batches.
    """
    report = ReindexReport()
    for agent_id in agents or memory.store.list_agents_with_memories(memory.tenant):
        report.agents += 1
        count = 0
        batch: list[Memory] = []
        for lesson in iter_lessons(memory, agent_id):
            batch.append(lesson)
            if len(batch) == BATCH:
                count += _index_batch(memory, agent_id, batch, progress)
                batch = []
        count += _index_batch(memory, agent_id, batch, progress)
        report.by_agent[agent_id] = count
        report.indexed += count
    return report


@dataclass
class TurnReindexReport:
    users: int = 0
    threads: int = 0
    turns: int = 0


def reindex_turns(
    conversations: ConversationService,
    recall: TurnRecallService,
    users: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> TurnReindexReport:
    """Index every stored turn again for recall (after the indexed text or the model changed).

    The transcripts are the source of truth: each thread is indexed from its first turn, as it would be
    appended today; indexing replaces a turn's documents, so an interrupted run can simply be run again.
    """
    report = TurnReindexReport()
    for user_id in users if users is not None else _all_users(conversations):
        report.users += 1
        cursor = None
        while True:
            page = conversations.list_threads(user_id, limit=100, cursor=cursor)
            for thread in page.items:
                indexed = recall.index_appended(user_id, thread.thread_id, 1, thread.last_seq)
                report.threads += 1
                report.turns += indexed
                if progress:
                    progress(indexed)
            if not page.next_cursor:
                break
            cursor = page.next_cursor
    return report


def _all_users(conversations: ConversationService) -> Iterator[str]:
    cursor = None
    while True:
        page = conversations.list_users(limit=100, cursor=cursor)
        yield from (user.user_id for user in page.items)
        if not page.next_cursor:
            return
        cursor = page.next_cursor


def _index_batch(
    memory: MemoryService, agent_id: str, batch: list[Memory], progress: Callable[[int], None] | None
) -> int:
    if not batch:
        return 0
    # Both vectors again, as the indexer makes them (a change of model or of rendering moves both; a
    # comment vector left from before would be compared with new ones by the grouping).
    vectors, comment_vectors = memory.lesson_vectors([m.digest for m in batch])
    memory.vectors.upsert(
        [
            VectorItem(memory.tenant, "lesson", agent_id, m.memory_id, v, m.created_at)
            for m, v in zip(batch, vectors, strict=True)
        ]
    )
    for m, comment_vector in zip(batch, comment_vectors, strict=True):
        changes: dict[str, Any] = {"comment_vector": vector_bytes(comment_vector)}
        if m.status == "pending":
            changes["status"] = "indexed"
        try:
            memory.store.update_memory(memory.tenant, agent_id, m.memory_id, **changes)
        except NotFound:
            continue  # deleted meanwhile; its record says so, and retrieval drops it by the record
    if progress:
        progress(len(batch))
    return len(batch)


def export_lessons(memory: MemoryService, agent_id: str) -> Iterator[dict[str, Any]]:
    """An agent's lessons as JSON-ready records, each with the run that taught it."""
    yield {"format": EXPORT_FORMAT, "tenant": memory.tenant, "agentId": agent_id}
    for lesson in iter_lessons(memory, agent_id):
        run = memory.store.get_run(memory.tenant, agent_id, lesson.run_id)
        yield {
            "memoryId": lesson.memory_id, "agentId": agent_id, "runId": lesson.run_id,
            "feedbackId": lesson.feedback_id, "rating": lesson.rating, "comment": lesson.comment,
            "digest": lesson.digest, "importance": lesson.importance, "createdAt": lesson.created_at,
            "run": None if run is None else {"input": run.input, "output": run.output, "userId": run.user_id,
                                             "createdAt": run.created_at},
        }


def import_lessons(memory: MemoryService, records: Iterable[dict[str, Any]]) -> tuple[int, int]:
    """Load lessons exported by `export_lessons` (into this tenant); returns (created, already present).

    Ids are kept, so importing the same file twice creates nothing the second time. Each lesson is
    stored pending and indexed at once.
    """
    created = existing = 0
    for number, record in enumerate(records, start=1):
        if "format" in record:
            if record["format"] != EXPORT_FORMAT:
                raise InvalidInput(f"line {number}: unknown format {record['format']!r}")
            continue
        try:
            agent_id, run_id = record["agentId"], record["runId"]
            run_data = record.get("run") or {"input": "", "output": None, "createdAt": record["createdAt"]}
            if memory.store.get_run(memory.tenant, agent_id, run_id) is None:
                memory.store.put_run(Run(memory.tenant, agent_id, run_id, run_data["input"], run_data["createdAt"],
                                         output=run_data.get("output"), user_id=run_data.get("userId")))
            feedback = Feedback(memory.tenant, agent_id, run_id, record["feedbackId"], record["rating"],
                                record.get("comment"), record["createdAt"], record["memoryId"])
            lesson = Memory(memory.tenant, agent_id, record["memoryId"], run_id, record["feedbackId"],
                            record["rating"], record.get("comment"), record["digest"],
                            float(record.get("importance", 1.0)), record["createdAt"], status="pending")
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"line {number}: not an exported lesson ({exc})") from None
        _, was_created = memory.store.add_feedback(feedback, lesson)
        if was_created:
            created += 1
            memory.index_memory(agent_id, lesson.memory_id)
        else:
            existing += 1
    return created, existing
