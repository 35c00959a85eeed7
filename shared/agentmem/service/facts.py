"""Use cases of semantic facts: learn them from new turns, recall them by meaning, list and delete them.

The fact store is the record; the vector index (kind "fact", owner = the user)
only finds candidates, and every hit is checked against its record, so a fact
superseded or deleted is never served even while its vector lingers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentmem.domain.errors import BackendUnavailable, InvalidInput, NotFound
from agentmem.domain.facts import (
    RESTATEMENT_SIMILARITY,
    SAME_SUBJECT_SIMILARITY,
    ExtractedFact,
    Fact,
    FactsFormatError,
    batch_digest,
    extraction_prompt,
    fact_id_for,
    parse_extraction,
    superseded_by_new,
)
from agentmem.domain.profile import TurnText
from agentmem.ports.clock import now
from agentmem.ports.embedder import Embedder
from agentmem.ports.facts import FactStore
from agentmem.ports.llm import LanguageModel, LlmOutOfFormat
from agentmem.ports.records import Page
from agentmem.ports.vectors import VectorIndex, VectorItem, VectorQuery

log = logging.getLogger(__name__)

EXTRACTION_MAX_TOKENS = 1024
# Neighbours examined for supersession and fetched per fact asked for in recall.
SUPERSEDE_CANDIDATES = 10
RECALL_FACTOR = 3
MAX_RECALL_CANDIDATES = 100


@dataclass(frozen=True)
class LearnedFacts:
    """What one batch of turns taught: new fact ids, and the ids they superseded."""

    added: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)


@dataclass
class FactService:
    """The facts of one tenant's users."""

    tenant: str
    store: FactStore
    vectors: VectorIndex
    embedder: Embedder
    llm: LanguageModel | None = None
    # Masks a user's text with their tokens (ConversationService.mask_text): a fact the user edits is
    # masked like a turn. Without it, an edit is refused rather than stored unmasked.
    masker: Callable[[str, str], str] | None = None
    same_subject_similarity: float = SAME_SUBJECT_SIMILARITY
    restatement_similarity: float = RESTATEMENT_SIMILARITY
    clock: Callable[[], float] = field(default=now)

    # Learning

    def learn(self, user_id: str, thread_id: str, turns: Sequence[TurnText]) -> LearnedFacts:
        """Extract facts from `turns` (masked), store and index them, superseding what they replace.

        Idempotent per batch: a fact's id derives from the turns it came from, so the same
        batch learnt twice adds nothing the second time (and repairs a missing vector).
        Raises LlmOutOfFormat for an unusable answer, BackendUnavailable when a backend fails.
        """
        if self.llm is None or not any(t.role == "user" for t in turns):
            return LearnedFacts()
        system, messages = extraction_prompt(turns, self.store.subjects(self.tenant, user_id))
        answer = self.llm.complete(system, messages, max_tokens=EXTRACTION_MAX_TOKENS)
        try:
            extracted = parse_extraction(answer, [t.seq for t in turns])
        except FactsFormatError as exc:
            raise LlmOutOfFormat(f"fact extraction answer rejected: {exc}", answer) from None
        if not extracted:
            return LearnedFacts()
        vectors = self.embedder.embed([f.text for f in extracted])
        first, last = turns[0].seq, turns[-1].seq
        batch = batch_digest([t.content for t in turns])
        learned = LearnedFacts()
        for ordinal, (new, vector) in enumerate(zip(extracted, vectors, strict=True)):
            fact_id = fact_id_for(self.tenant, user_id, thread_id, first, last, ordinal, batch)
            self._learn_one(user_id, thread_id, fact_id, new, vector, learned)
        return learned

    def _learn_one(
        self, user_id: str, thread_id: str, fact_id: str, new: ExtractedFact, vector: np.ndarray,
        learned: LearnedFacts,
    ) -> None:
        existing = self.store.get(self.tenant, user_id, fact_id)
        if existing is not None:
            # A retried batch: the record is there; make sure its vector is too.
            if existing.status == "active":
                self._index(existing, vector)
            return
        replaced = superseded_by_new(
            new, self._neighbours(user_id, vector, SUPERSEDE_CANDIDATES),
            same_subject_similarity=self.same_subject_similarity,
            restatement_similarity=self.restatement_similarity,
        )
        learnt_at = self.clock()
        fact = Fact(
            tenant=self.tenant, user_id=user_id, fact_id=fact_id, text=new.text, subject=new.subject,
            thread_id=thread_id, source_seqs=list(new.seqs), created_at=learnt_at, valid_from=learnt_at,
        )
        old_ids = [old.fact_id for old in replaced]
        if not self.store.add(fact, old_ids):
            return
        self._index(fact, vector)
        if old_ids:
            self.vectors.delete(self.tenant, "fact", user_id, old_ids)
        learned.added.append(fact_id)
        learned.superseded.extend(old_ids)

    def _index(self, fact: Fact, vector: np.ndarray) -> None:
        self.vectors.upsert([VectorItem(self.tenant, "fact", fact.user_id, fact.fact_id, vector, fact.created_at)])

    def _neighbours(self, user_id: str, vector: np.ndarray, k: int) -> list[tuple[Fact, float]]:
        """The user's active facts most similar to `vector`, with their similarity, most similar first."""
        hits = self.vectors.search(VectorQuery(tenant=self.tenant, kind="fact", owner_id=user_id, vector=vector, k=k))
        if not hits:
            return []
        records = {f.fact_id: f for f in self.store.get_many(self.tenant, user_id, [h.item_id for h in hits])}
        return [
            (records[h.item_id], h.similarity)
            for h in hits
            if h.item_id in records and records[h.item_id].status == "active"
        ]

    # Recall

    def facts_for(self, user_id: str, query_vector: np.ndarray | None, k: int) -> list[dict[str, Any]]:
        """The user's `k` active facts most similar to the query, from every thread (FactsProvider)."""
        if query_vector is None or k <= 0:
            return []
        found = self._neighbours(user_id, query_vector, min(MAX_RECALL_CANDIDATES, k * RECALL_FACTOR))
        return [{"factId": f.fact_id, "text": f.text, "score": round(s, 6)} for f, s in found[:k]]

    # The user's view

    def list_facts(
        self, user_id: str, limit: int, cursor: str | None = None, include_superseded: bool = False
    ) -> Page[Fact]:
        return self.store.list_facts(
            self.tenant, user_id, limit=limit, cursor=cursor, include_superseded=include_superseded
        )

    def update_text(self, user_id: str, fact_id: str, text: str) -> Fact:
        """The user's correction of a fact: `text` masked, stored, and re-indexed by its new meaning.

        Masked and embedded before anything is written, so a failure there changes nothing; a
        superseded fact keeps being history (its text changes, it is not indexed again). NotFound
        for a fact the user does not have; BackendUnavailable when a backend fails (sent again, the
        edit completes).
        """
        if self.masker is None:
            raise BackendUnavailable("pii", "fact edits need the PII masker, which is not wired")
        if self.store.get(self.tenant, user_id, fact_id) is None:
            raise NotFound(f"fact {fact_id} of user {user_id} not found")
        line = " ".join(text.split())  # one line, as learnt facts are; never cut after masking (a token would break)
        if not line:
            raise InvalidInput("invalid fact text", [{"field": "text", "message": "the text is blank"}])
        masked = self.masker(user_id, line)
        vector = self.embedder.embed([masked])[0]
        updated = self.store.set_text(self.tenant, user_id, fact_id, masked)
        if updated is None:  # deleted meanwhile
            raise NotFound(f"fact {fact_id} of user {user_id} not found")
        if updated.status == "active":
            self._index(updated, vector)
        return updated

    def delete(self, user_id: str, fact_id: str) -> None:
        """Delete a fact for good: the record first (never served again), then its vector."""
        if not self.store.delete(self.tenant, user_id, fact_id):
            raise NotFound(f"fact {fact_id} of user {user_id} not found")
        try:
            self.vectors.delete(self.tenant, "fact", user_id, [fact_id])
        except BackendUnavailable:
            # Recall checks every hit against its record, so the orphaned vector is never served.
            log.warning("fact vector not deleted; the record is gone", extra={"factId": fact_id})

    def erase_user(self, tenant: str, user_id: str) -> None:
        """Remove every fact of the user and its vectors (an erasure hook; idempotent)."""
        self.store.delete_user(tenant, user_id)
        self.vectors.delete_owner(tenant, "fact", user_id)
