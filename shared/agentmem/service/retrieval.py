"""`retrieve`: the memory an agent gets before a run, packed into its token budget."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from agentmem.domain.embedded_text import lesson_embedded_text
from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.lessons import (
    SECONDS_PER_DAY,
    Candidate,
    LessonGroup,
    excerpt_visible,
    format_lessons,
    group_lessons,
    lesson_label,
    lesson_text,
    rank_lessons,
    run_excerpt,
)
from agentmem.domain.models import ScoredLesson
from agentmem.domain.packing import HistoryTurn, RecalledLine, pack_context
from agentmem.domain.pii import agent_subject
from agentmem.domain.timestamps import iso_utc
from agentmem.ports.vectors import VectorQuery
from agentmem.service.memory import MemoryService
from agentmem.service.teaching_relation import TeachingRelation, teaching_relation
from agentmem.service.turn_recall import RecalledTurn, recalled_line
from agentmem.tokens import get_token_counter

log = logging.getLogger(__name__)
# Fetch more neighbours than topK: importance may lift a less similar lesson above a more similar one.
CANDIDATE_FACTOR = 8
MAX_CANDIDATES = 100
DEFAULT_RECALL_K = 5


@dataclass
class UserMemory:
    """What a user's memory adds to a retrieve: profile, facts, recalled turns and recent history."""

    profile: str | None = None
    facts: list[dict[str, Any]] = field(default_factory=list)  # {"factId", "text", "score"}
    recalled: list[RecalledTurn] = field(default_factory=list)  # best first
    history: list[HistoryTurn] = field(default_factory=list)  # newest last
    degraded: list[str] = field(default_factory=list)


class UserMemorySource(Protocol):
    """Supplies a user's profile, facts and history (the conversation-memory side)."""

    def for_retrieve(
        self,
        user_id: str,
        thread_id: str | None,
        input_text: str,
        query_vector: np.ndarray | None,
        token_budget: int | None = None,
        recall_k: int = 0,
    ) -> UserMemory: ...


@dataclass
class RetrievalService:
    memory: MemoryService
    users: UserMemorySource | None = None

    def retrieve(
        self,
        agent_id: str,
        input_text: str,
        *,
        user_id: str | None = None,
        thread_id: str | None = None,
        token_budget: int = 2000,
        top_k: int | None = None,
        recall_k: int = DEFAULT_RECALL_K,
    ) -> dict[str, Any]:
        """The agent's lessons and the user's memory for one run, packed into `token_budget` tokens.

        `recall_k` caps the recalled turns (0: none). A disabled agent's run is recorded without its
        input: it gets no lessons, so no feedback can ever need it.
        """
        settings = self.memory.settings
        enabled = self.memory.is_enabled(agent_id)
        degraded: list[str] = []
        groups: list[LessonGroup] = []

        # Personal data never reaches the embedder or the run record: tokens of the run's subject
        # (the user, or the agent's own subject without one) stand in for it.
        input_text = self.memory.mask(agent_id, user_id, [input_text])[0]
        needs_user = user_id is not None and self.users is not None
        # Lessons are embedded with their tokens read as kinds (`lesson_embedded_text`), so the input
        # searched against them is too; the user's memory gets the input as masked. Without a token the
        # two texts are one, embedded once; with one, each is embedded alone (int8 MiniLM quantises a
        # batch as a whole, so a batch of two would move the user side's vector).
        lesson_query = lesson_embedded_text(input_text) if enabled else None
        wanted = dict.fromkeys(t for t in (lesson_query, input_text if needs_user else None) if t is not None)
        vectors: dict[str, np.ndarray] = {}
        try:
            for text in wanted:
                vectors[text] = self.memory.embedder.embed([text])[0]
        except BackendUnavailable as exc:
            degraded.append(exc.part)
        query_vector = vectors.get(input_text)
        lesson_vector = vectors.get(lesson_query) if lesson_query is not None else None
        if enabled and lesson_vector is not None:
            try:
                groups = self._lessons(agent_id, lesson_vector, top_k or settings.top_k)
            except BackendUnavailable as exc:
                degraded.append(exc.part)

        user = UserMemory()
        if user_id is not None and self.users is not None:
            user = self.users.for_retrieve(user_id, thread_id, input_text, query_vector, token_budget, recall_k)
            degraded.extend(user.degraded)

        counter = get_token_counter()
        # Packing renders the same kept lessons up to three times (fitted, returned, compared).
        rendered: dict[tuple[int, ...], str] = {}

        def render_lessons(kept: Sequence[int]) -> str:
            key = tuple(kept)
            if key not in rendered:
                rendered[key] = format_lessons([groups[i] for i in key]) or ""
            return rendered[key]

        packed = pack_context(
            budget=token_budget,
            lessons=[_group_text(g) for g in groups],
            render_lessons=render_lessons,
            examples=[_example(i, g, user_id, agent_subject(agent_id)) for i, g in enumerate(groups)],
            profile=user.profile,
            facts=[f["text"] for f in user.facts],
            recalled=[RecalledLine(t.thread_id, t.seq, recalled_line(t)) for t in user.recalled],
            recall_limit=recall_k,
            current_thread=thread_id,
            history=user.history,
            counter=counter,
        )
        # The lessons in `messages`: the answer, the run and the injection counts agree. A kept group's
        # bullet stands for its members; the best `MAX_LISTED_MEMBERS` of each are named, so an answer
        # names at most topK x MAX_LISTED_MEMBERS lessons. Overruled lessons are not in the message.
        kept_groups = groups[: packed.kept_lesson_count]
        kept_lessons = [(g, m) for g in kept_groups for m in g.listed]
        injected = [m.memory.memory_id for _, m in kept_lessons]
        run = self.memory.record_run(
            agent_id, input_text if enabled else "", user_id=user_id, thread_id=thread_id,
            injected_memory_ids=injected, masked=True,
        )
        if injected:
            try:
                self.memory.store.record_injections(settings.tenant, agent_id, injected)
            except BackendUnavailable:
                log.warning("injection counts not updated")
        kept_history = (
            user.history[len(user.history) - packed.kept_history_count :] if packed.kept_history_count else []
        )
        return {
            "runId": run.run_id,
            "memory": "enabled" if enabled else "disabled",
            "lessons": [_lesson_json(m, g) for g, m in kept_lessons],
            "profile": user.profile if packed.kept_profile else None,
            "facts": user.facts[: packed.kept_fact_count],
            "recalled": [user.recalled[i].as_json() for i in packed.kept_recalled],
            "history": [{"role": t.role, "content": t.content} for t in kept_history],
            "messages": packed.messages,
            "tokens": packed.tokens,
            "degraded": sorted(set(degraded)),
        }

    def _lessons(self, agent_id: str, query_vector: np.ndarray, top_k: int) -> list[LessonGroup]:
        settings = self.memory.settings
        now = self.memory.clock()
        hits = self.memory.vectors.search(
            VectorQuery(
                tenant=settings.tenant,
                kind="lesson",
                owner_id=agent_id,
                vector=query_vector,
                k=min(MAX_CANDIDATES, top_k * CANDIDATE_FACTOR),
                created_after=now - settings.max_memory_age_days * SECONDS_PER_DAY,
            )
        )
        threshold = settings.effective_eligibility_threshold
        hits = [h for h in hits if h.similarity >= threshold]
        if not hits:
            return []
        similarity = {h.item_id: h.similarity for h in hits}
        records = self.memory.store.get_memories(settings.tenant, agent_id, list(similarity))
        ranked = rank_lessons(
            [Candidate(m, similarity[m.memory_id]) for m in records],
            threshold=threshold,
            max_age_days=settings.max_memory_age_days,
            top_k=len(records),
            now=now,
        )
        # Groups were given at indexing; the same relation tells conflicts apart (as on the wall). It is
        # built when grouping first asks, i.e. only when lessons of both ratings are among the candidates:
        # it decodes ~40 comment vectors and their cosines, and most retrieves have one rating alone.
        relation: list[TeachingRelation] = []

        def disagree(a: str, b: str) -> bool:
            if not relation:
                relation.append(teaching_relation(self.memory.embedder, [s.memory for s in ranked]))
            return relation[0].disagree(a, b)

        return group_lessons(ranked, disagree, top_k=top_k)


def _group_text(group: LessonGroup) -> str:
    text = lesson_text(group.lesson.memory)
    return f"{text} (given by {group.editors} editors)" if group.editors > 1 else text


def _example(position: int, group: LessonGroup, user_id: str | None, agent: str) -> str | None:
    """The run excerpt shown with the group's bullet, labelled: only one the run's own user may see."""
    for member in group.members:
        if excerpt_visible(member.memory, user_id, agent):
            excerpt = run_excerpt(member.memory)
            if excerpt:
                return f"[{lesson_label(position)}] {excerpt}"
    return None


def _lesson_json(s: ScoredLesson, group: LessonGroup) -> dict[str, Any]:
    return {
        "groupId": group.group_id,
        "memoryId": s.memory.memory_id,
        "rating": s.memory.rating,
        "text": lesson_text(s.memory),
        "similarity": round(s.similarity, 6),
        "score": round(s.score, 6),
        "createdAt": iso_utc(s.memory.created_at),
    }
