"""Use cases of the feedback-learning memory: runs, feedback, lessons and their indexing.

Every text an agent or an editor sends (run input and output, a feedback comment) is masked before
it is stored, with the tokens of the run's subject: the run's `userId`, or the agent's own subject
(`_agent:<agentId>`) for a run without one. A lesson's digest is built from the masked texts, so it
holds tokens only: injected into another user's run, unmasking it for that user restores nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from agentmem.config import Settings
from agentmem.domain.embedded_text import lesson_embedded_text
from agentmem.domain.errors import BackendUnavailable, Conflict, MemoryDisabled, NotFound
from agentmem.domain.lessons import (
    SECONDS_PER_DAY,
    assign_group,
    build_digest,
    comparison_text,
    editor_words,
    resolve_importance,
)
from agentmem.domain.log_ids import log_id
from agentmem.domain.models import Feedback, Memory, Rating, Run, VerdictFilter
from agentmem.domain.pii import run_subject
from agentmem.domain.teaching import TeachingTerms
from agentmem.ports.clock import new_id, now
from agentmem.ports.embedder import Embedder, vector_bytes
from agentmem.ports.events import DomainEvent, EventBus
from agentmem.ports.records import Page, RecordStore
from agentmem.ports.vectors import VectorIndex, VectorItem
from agentmem.service.teaching_relation import comparable_lessons, lesson_terms, teaching_relation

FEEDBACK_SUBMITTED = "FeedbackSubmitted"
# Lessons a sweep embeds together (one `index_memories` call).
INDEX_BATCH = 10
# A lesson being indexed is grouped against its agent's newest lessons: the groups every retrieve and
# the wall show (a lesson older than that, or past maxMemoryAgeDays, no longer takes new members).
GROUPING_WINDOW = 500
# Bounds `MemoryService._lesson_terms`: a few windows' worth (emptied when full, then refilled by one window).
_KEPT_LESSON_TERMS = 8 * GROUPING_WINDOW
# A lesson still pending this long after its feedback lost its event (or every delivery failed): the
# periodic sweep (the `sweeper` function in AWS, the local worker) indexes it. Well above the
# second indexing normally takes, so the sweep never races a delivery in flight.
PENDING_SWEEP_AGE_SECONDS = 300.0
log = logging.getLogger(__name__)


class SubjectMasker(Protocol):
    """Replaces the personal data of a subject's texts by that subject's vault tokens."""

    def mask_texts(self, subject: str, texts: Sequence[str]) -> list[str]: ...


@dataclass(frozen=True)
class FeedbackReceipt:
    feedback_id: str
    memory_id: str
    created: bool


@dataclass
class MemoryService:
    """Runs, feedback and lessons of one tenant's agents."""

    settings: Settings
    store: RecordStore
    vectors: VectorIndex
    embedder: Embedder
    bus: EventBus
    # The PII vault's masking step (ConversationService). Required, and not settable later: a service
    # that could store a run's text unmasked cannot be built (composition fails closed).
    masker: SubjectMasker
    clock: Callable[[], float] = field(default=now)
    # The teaching terms of the lessons the indexer compared, by memoryId (`_terms_of`).
    _lesson_terms: dict[str, TeachingTerms | None] = field(default_factory=dict, init=False, repr=False)

    @property
    def tenant(self) -> str:
        return self.settings.tenant

    def is_enabled(self, agent_id: str) -> bool:
        return agent_id in self.settings.enabled_agent_set

    def require_enabled(self, agent_id: str) -> None:
        if not self.is_enabled(agent_id):
            raise MemoryDisabled(f"memory is not enabled for agent {agent_id}; add it to enabledAgents")

    # Runs

    def record_run(
        self,
        agent_id: str,
        input_text: str,
        *,
        output: str | None = None,
        user_id: str | None = None,
        thread_id: str | None = None,
        injected_memory_ids: list[str] | None = None,
        run_id: str | None = None,
        masked: bool = False,
    ) -> Run:
        """Store a run, its input and output masked first (`masked=True`: the caller masked them)."""
        if not masked:
            input_text, output = self._mask_run_texts(agent_id, user_id, input_text, output)
        run = Run(
            tenant=self.tenant,
            agent_id=agent_id,
            run_id=run_id or new_id("run"),
            input=input_text,
            created_at=self.clock(),
            output=output,
            user_id=user_id,
            thread_id=thread_id,
            injected_memory_ids=list(injected_memory_ids or []),
            masked=True,  # masked here, or by the caller (`masked=True`): a run is never stored in clear
        )
        self.store.put_run(run)
        return run

    def get_run(self, agent_id: str, run_id: str) -> Run:
        run = self.store.get_run(self.tenant, agent_id, run_id)
        if run is None:
            raise NotFound(f"run {run_id} not found for agent {agent_id}")
        return run

    def set_output(self, agent_id: str, run_id: str, output: str) -> None:
        """Set a run's output, masked with the run's subject; NotFound for an unknown run."""
        run = self.get_run(agent_id, run_id)
        masked = self.mask(agent_id, run.user_id, [output])[0]
        self.store.set_run_output(self.tenant, agent_id, run_id, masked)

    def mask_comment(self, agent_id: str, run_id: str, comment: str | None) -> str | None:
        """A feedback comment masked with the tokens of its run's subject (NotFound for an unknown run),
        for `submit_feedback(..., masked=True)`."""
        if not comment:
            return comment
        self.require_enabled(agent_id)
        return self.mask(agent_id, self.get_run(agent_id, run_id).user_id, [comment])[0]

    def erase_user_runs(self, tenant: str, user_id: str) -> None:
        """Erase what the agents' records hold of a user (an eraser of ConversationService.erase_user).

        The lessons made from the user's runs lose the run's text: each keeps the editor's comment
        (it stays useful to every user), its digest is rebuilt from the comment alone and it is
        embedded again (now, or by the pending sweep when the embedder is down). Then the runs are
        deleted. A retry after a failure finds what is left and finishes it.
        """
        lessons = self.store.list_memories_of_subject(tenant, user_id)
        for lesson in lessons:
            digest = build_digest(editor_words(lesson.digest), None, "", self.settings.digest_max_chars)
            self.store.forget_run_text(tenant, lesson.agent_id, lesson.memory_id, digest)
        deleted = self.store.delete_runs_of_user(tenant, user_id)
        if lessons:
            try:
                self.index_memories([(lesson.agent_id, lesson.memory_id) for lesson in lessons])
            except BackendUnavailable:
                log.warning("lessons of an erased user left pending; the sweep embeds them again")
        log.info("runs of an erased user deleted",
                 extra={"userHash": log_id(user_id), "runs": deleted, "lessons": len(lessons)})

    def mask(self, agent_id: str, user_id: str | None, texts: Sequence[str]) -> list[str]:
        """`texts` with personal data replaced by the tokens of the run's subject (see the module docstring)."""
        if not any(texts):
            return list(texts)
        return self.masker.mask_texts(run_subject(agent_id, user_id), texts)

    def _mask_run_texts(
        self, agent_id: str, user_id: str | None, input_text: str, output: str | None
    ) -> tuple[str, str | None]:
        if output is None:
            return self.mask(agent_id, user_id, [input_text])[0], None
        masked_input, masked_output = self.mask(agent_id, user_id, [input_text, output])
        return masked_input, masked_output

    def feedback_of_run(self, run: Run) -> list[Memory]:
        """The lessons this run's feedback became (one per feedback)."""
        ids = [_derived_id("mem", self.tenant, run.agent_id, fid) for fid in run.feedback_ids]
        return self.store.get_memories(self.tenant, run.agent_id, ids)

    def list_runs(
        self, agent_id: str, limit: int, cursor: str | None, verdict: VerdictFilter = "any"
    ) -> tuple[Page[Run], dict[str, list[Memory]]]:
        """A page of the agent's runs, newest first, with the lessons each run's feedback became (by run id).

        The lessons of the whole page are read in one call, not one per run.
        """
        page = self.store.list_runs(self.tenant, agent_id, limit=limit, cursor=cursor, verdict=verdict)
        ids = [_derived_id("mem", self.tenant, agent_id, fid) for run in page.items for fid in run.feedback_ids]
        by_run: dict[str, list[Memory]] = {run.run_id: [] for run in page.items}
        for lesson in self.store.get_memories(self.tenant, agent_id, ids) if ids else []:
            by_run.setdefault(lesson.run_id, []).append(lesson)
        return page, by_run

    # Feedback

    def submit_feedback(
        self,
        agent_id: str,
        run_id: str,
        rating: Rating,
        comment: str | None,
        idempotency_key: str | None = None,
        *,
        masked: bool = False,
    ) -> FeedbackReceipt:
        """Accept an editor's verdict: store it with its lesson, then ask for the lesson to be indexed.

        The comment is masked first (`masked=True`: the caller masked it, with `mask_comment`). With an
        idempotency key the feedback id is derived from it, so a retry finds the stored feedback
        instead of writing a second memory.
        """
        self.require_enabled(agent_id)
        run = self.get_run(agent_id, run_id)
        # The comment gets the run's tokens: the same value as in the run is the same token. Masked once:
        # a second detection pass over a masked comment (a keyed request's, ~6 ms) would store what an
        # unkeyed request does not.
        if comment and not masked:
            comment = self.mask(agent_id, run.user_id, [comment])[0]
        # Of the masked comment: tokens are stable per subject, so a retry hashes the same.
        request_hash = _hash(json.dumps([rating, comment or ""]))
        if idempotency_key:
            feedback_id = _derived_id("fb", self.tenant, agent_id, run_id, idempotency_key)
        else:
            feedback_id = new_id("fb")
        memory_id = _derived_id("mem", self.tenant, agent_id, feedback_id)
        created_at = self.clock()
        feedback = Feedback(
            tenant=self.tenant,
            agent_id=agent_id,
            run_id=run_id,
            feedback_id=feedback_id,
            rating=rating,
            comment=comment,
            created_at=created_at,
            memory_id=memory_id,
            idempotency_key=idempotency_key,
            request_hash=request_hash,
        )
        memory = Memory(
            tenant=self.tenant,
            agent_id=agent_id,
            memory_id=memory_id,
            run_id=run_id,
            feedback_id=feedback_id,
            rating=rating,
            comment=comment,
            digest=self._digest(run, comment),
            importance=1.0,
            created_at=created_at,
            status="pending",
            subject=run_subject(agent_id, run.user_id),
        )
        stored, created = self.store.add_feedback(feedback, memory)
        if not created and stored.request_hash != request_hash:
            raise Conflict("this Idempotency-Key was used with a different feedback body")
        current = memory if created else self.store.get_memory(self.tenant, agent_id, stored.memory_id)
        # A retry republishes while the lesson is still pending: the first publish may be what failed.
        if current is not None and current.status == "pending":
            self._publish_index_request(current)
        return FeedbackReceipt(stored.feedback_id, stored.memory_id, created)

    def _digest(self, run: Run, masked_comment: str | None) -> str:
        digest = build_digest(masked_comment, run.output, run.input, self.settings.digest_max_chars)
        if run.masked:
            # Every part was masked with the run's subject before it was stored: a second detection
            # pass over the same words (half the feedback handler's time) would find nothing new.
            return digest
        # Runs stored before masking covered the agent side, and imported ones, may hold raw text: the
        # digest is masked again (tokens already in it are left as they are), so a lesson never carries a value.
        return self.mask(run.agent_id, run.user_id, [digest])[0]

    def _publish_index_request(self, memory: Memory) -> None:
        event = DomainEvent(
            FEEDBACK_SUBMITTED,
            {
                "tenant": memory.tenant,
                "agentId": memory.agent_id,
                "memoryId": memory.memory_id,
                "runId": memory.run_id,
                "feedbackId": memory.feedback_id,
            },
        )
        try:
            receipts = self.bus.publish([event])
            failed = [r.error for r in receipts if not r.ok]
        except BackendUnavailable as exc:
            failed = [exc.message]
        if failed:
            # The lesson is stored as pending; the pending sweep indexes it later. Nothing is lost.
            log.warning(
                "feedback event not published; lesson stays pending", extra={"memory_id": memory.memory_id}
            )

    # Indexing

    def index_memory(self, agent_id: str, memory_id: str) -> str:
        """Embed a lesson's digest and put it in the vector index. Returns what happened.

        Idempotent: an indexed lesson is indexed again harmlessly; a deleted or
        unknown one is skipped. Raises BackendUnavailable when the embedder or
        index fails, so the event is retried.
        """
        return self.index_memories([(agent_id, memory_id)])[0]

    def index_memories(self, lessons: Sequence[tuple[str, str]]) -> list[str]:
        """`index_memory` for several lessons (agent id, memory id) at once: one outcome each, in order.

        Their digests are embedded in one call (one forward pass per batch of similar lengths, far
        cheaper per lesson than one each) and their vectors written in one upsert. A lesson's comment is
        embedded in the same call when it can be compared at all: when an indexed lesson of its window,
        or another of the batch, has comparable terms (`comparable_lessons`); that lesson's comment too,
        if it has no vector yet. The vectors are kept with the lessons, so comparing lessons for
        near-duplicates (`retrieve`, the wall) costs no model call. Raises BackendUnavailable when the
        embedder or index fails: none is marked indexed then.
        """
        outcomes: list[str] = []
        todo: list[tuple[int, Memory]] = []
        for position, (agent_id, memory_id) in enumerate(lessons):
            memory = self.store.get_memory(self.tenant, agent_id, memory_id)
            outcomes.append("missing" if memory is None else "deleted" if memory.status == "deleted" else "indexed")
            if memory is not None and memory.status != "deleted":
                todo.append((position, memory))
        if not todo:
            return outcomes
        batch = [memory for _, memory in todo]
        peers = self._comparable_peers(batch)
        compared = {m.memory_id: m for m in batch if peers[m.memory_id]}
        compared.update((peer.memory_id, peer) for m in batch for peer in peers[m.memory_id]
                        if peer.memory_id not in compared and not self._has_comment_vector(peer))
        vectors, comment_vectors = self.lesson_vectors([m.digest for m in batch],
                                                       [m.digest for m in compared.values()])
        self.vectors.upsert([
            VectorItem(self.tenant, "lesson", memory.agent_id, memory.memory_id, vector, memory.created_at)
            for memory, vector in zip(batch, vectors, strict=True)
        ])
        for memory, comment_vector in zip(compared.values(), comment_vectors, strict=True):
            memory.comment_vector = vector_bytes(comment_vector)
        batch_ids = {m.memory_id for m in batch}
        for peer in compared.values():
            if peer.memory_id not in batch_ids:
                self._keep_comment_vector(peer)
        groups = self._groups(batch, peers)
        for position, memory in todo:
            if memory.status == "indexed" and memory.group_id is not None:
                if memory.memory_id in compared:  # indexed again, its comment now comparable: kept too
                    self._keep_comment_vector(memory)
                continue
            try:
                self.store.update_memory(self.tenant, memory.agent_id, memory.memory_id, status="indexed",
                                         comment_vector=memory.comment_vector, group_id=groups[memory.memory_id])
            except NotFound:
                # Deleted while it was being embedded: take back the vector just written.
                self.vectors.delete(self.tenant, "lesson", memory.agent_id, [memory.memory_id])
                outcomes[position] = "deleted"
        return outcomes

    def lesson_vectors(
        self, digests: Sequence[str], compared: Sequence[str] | None = None
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Each digest's vector (what `retrieve` searches) and the comment vectors (what grouping compares)
        of the `compared` digests (default: all of `digests`), from one embedder call, tokens read as their
        kind (`lesson_embedded_text`)."""
        compared = digests if compared is None else compared
        embedded = self.embedder.embed([lesson_embedded_text(d) for d in digests]
                                       + [lesson_embedded_text(comparison_text(d)) for d in compared])
        return list(embedded[: len(digests)]), list(embedded[len(digests) :])

    def _has_comment_vector(self, memory: Memory) -> bool:
        return memory.comment_vector is not None and len(memory.comment_vector) == 4 * self.embedder.dimension

    def _keep_comment_vector(self, memory: Memory) -> None:
        """Store the comment vector just made for an indexed lesson that had none (indexed before its comment
        could be compared with any lesson), so no later comparison embeds it again."""
        with contextlib.suppress(NotFound):  # deleted meanwhile: nothing compares with it any more
            self.store.update_memory(self.tenant, memory.agent_id, memory.memory_id,
                                     comment_vector=memory.comment_vector)

    def _comparable_peers(self, lessons: Sequence[Memory]) -> dict[str, list[Memory]]:
        """For each of `lessons` (by memoryId): the lessons of its batch and the indexed ones of its agent's
        newest `GROUPING_WINDOW` whose comments it can be related to (`comparable_lessons`)."""
        peers: dict[str, list[Memory]] = {}
        for agent_id in {m.agent_id for m in lessons}:
            batch = [m for m in lessons if m.agent_id == agent_id]
            ids = {m.memory_id for m in batch}
            # Lessons still waiting to be indexed are compared when their turn comes.
            window = [m for m in self.newest_lessons(agent_id) if m.memory_id not in ids and m.status == "indexed"]
            peers.update(comparable_lessons(batch, window, self._terms_of))
        return peers

    def _terms_of(self, lesson: Memory) -> TeachingTerms | None:
        """`lesson_terms`, kept by memoryId: the indexer reads the same ~500 lessons' words every batch, and
        a lesson's editor's words never change (an erase rebuilds its digest from them)."""
        if lesson.memory_id in self._lesson_terms:
            return self._lesson_terms[lesson.memory_id]
        if len(self._lesson_terms) >= _KEPT_LESSON_TERMS:
            self._lesson_terms.clear()
        terms = self._lesson_terms[lesson.memory_id] = lesson_terms(lesson)
        return terms

    def _groups(self, lessons: Sequence[Memory], peers: dict[str, list[Memory]]) -> dict[str, str]:
        """The group each of `lessons` (with their comment vectors) joins, oldest first (`assign_group`).

        A lesson grouped before keeps its group; the others are compared with the older lessons of their
        window and batch that their comments can be related to (`peers`): no other can teach the same thing.
        """
        groups: dict[str, str] = {}
        for agent_id in {m.agent_id for m in lessons}:
            batch = sorted((m for m in lessons if m.agent_id == agent_id), key=lambda m: (m.created_at, m.memory_id))
            involved = {m.memory_id: m for m in batch}
            involved.update((peer.memory_id, peer) for m in batch for peer in peers[m.memory_id])
            relation = teaching_relation(self.embedder, list(involved.values()))
            for lesson in batch:
                lesson.group_id = lesson.group_id or assign_group(lesson, peers[lesson.memory_id], relation.same)
                groups[lesson.memory_id] = lesson.group_id
        return groups

    def newest_lessons(self, agent_id: str, limit: int = GROUPING_WINDOW) -> list[Memory]:
        """The agent's newest `limit` lessons (not deleted), newest first."""
        found: list[Memory] = []
        cursor: str | None = None
        while len(found) < limit:
            # All that is left in one page: the store stops a page early where it must (DynamoDB at 1 MB).
            page = self.list_memories(agent_id, limit - len(found), cursor)
            found.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        return found

    def index_pending(self, limit: int = 100, *, older_than_seconds: float = 0.0) -> int:
        """Index lessons left pending (an event lost, a backend down); returns how many were indexed.

        Only lessons pending for at least `older_than_seconds` (0: every one). Raises
        BackendUnavailable when the embedder or the index fails: the next sweep tries again.
        """
        cutoff = self.clock() - older_than_seconds
        due = [(memory.agent_id, memory.memory_id)
               for memory in self.store.list_memories_by_status(self.tenant, "pending", limit=limit)
               if memory.created_at <= cutoff]
        done = 0
        for start in range(0, len(due), INDEX_BATCH):
            done += self.index_memories(due[start : start + INDEX_BATCH]).count("indexed")
        return done

    # Retention

    def expire_lessons(self, limit: int = 100) -> int:
        """Lessons past maxMemoryAgeDays lose their vector and are marked deleted; returns how many.

        Retrieval ignores them from that age already; this removes what would outlive them. Raises
        BackendUnavailable when the index cannot delete: the next sweep tries again.
        """
        cutoff = self.clock() - self.settings.max_memory_age_days * SECONDS_PER_DAY
        expired = 0
        for agent_id in self.store.list_agents_with_memories(self.tenant):
            lessons = self.store.list_memories_created_before(self.tenant, agent_id, cutoff, limit=limit)
            if not lessons:
                continue
            self.vectors.delete(self.tenant, "lesson", agent_id, [m.memory_id for m in lessons])
            for lesson in lessons:
                try:
                    self.store.update_memory(self.tenant, agent_id, lesson.memory_id, status="deleted")
                except NotFound:
                    continue  # deleted meanwhile (by an editor, or DynamoDB's TTL)
                expired += 1
        return expired

    def purge_runs(self) -> int:
        """Remove runs and feedback past retentionDays (locally; DynamoDB's TTL does it in AWS)."""
        return self.store.purge_runs_created_before(
            self.tenant, self.clock() - self.settings.retention_days * SECONDS_PER_DAY
        )

    # The Memory Learning Wall

    def known_agents(self) -> list[dict[str, str]]:
        """Every agent enabled in the configuration or holding lessons, with its memory switch."""
        names = set(self.settings.enabled_agents) | set(self.store.list_agents_with_memories(self.tenant))
        return [{"agentId": a, "memory": "enabled" if self.is_enabled(a) else "disabled"} for a in sorted(names)]

    def list_memories(self, agent_id: str, limit: int, cursor: str | None) -> Page[Memory]:
        return self.store.list_memories(self.tenant, agent_id, limit=limit, cursor=cursor)

    def set_importance(self, agent_id: str, memory_id: str, importance: str | float) -> Memory:
        weight = resolve_importance(
            importance, self.settings.importance.important, self.settings.importance.unimportant
        )
        memory = self._existing(agent_id, memory_id)
        return self.store.update_memory(self.tenant, agent_id, memory.memory_id, importance=weight)

    def delete_memory(self, agent_id: str, memory_id: str) -> None:
        """Delete a lesson: marked deleted first (never retrieved again), then removed from the index."""
        self._existing(agent_id, memory_id)
        self.store.update_memory(self.tenant, agent_id, memory_id, status="deleted")  # NotFound if raced
        try:
            self.vectors.delete(self.tenant, "lesson", agent_id, [memory_id])
        except BackendUnavailable:
            # Retrieval drops deleted lessons by their record, so a stale vector is never served.
            log.warning("vector not deleted; the record is marked deleted", extra={"memory_id": memory_id})

    def _existing(self, agent_id: str, memory_id: str) -> Memory:
        memory = self.store.get_memory(self.tenant, agent_id, memory_id)
        if memory is None or memory.status == "deleted":
            raise NotFound(f"memory {memory_id} not found for agent {agent_id}")
        return memory


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _derived_id(prefix: str, *parts: str) -> str:
    return f"{prefix}_{_hash(chr(31).join(parts))[:32]}"
