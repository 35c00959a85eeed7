"""What a user's memory adds to `retrieve`: profile, facts, recalled turns and the thread's history.

`RetrievalService` asks one `UserMemorySource`; this is it. The profile and facts come from
providers registered by the profile/facts side; the recalled turns from the turn search
(`TurnRecallService`); the history is the newest turns of the thread, read with their stored token
counts so packing never re-reads or re-counts the whole thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.log_ids import log_id
from agentmem.domain.packing import TOKENS_PER_MESSAGE, HistoryTurn
from agentmem.service.conversations import ConversationService
from agentmem.service.retrieval import UserMemory
from agentmem.service.turn_recall import RecalledTurn

log = logging.getLogger(__name__)

# Packing can keep no more turns than the budget has room for at their cheapest (framing plus a
# one-token role), and a history beyond a couple of hundred turns helps no prompt: read at most this.
MAX_HISTORY_TURNS = 200
MIN_TURN_TOKENS = TOKENS_PER_MESSAGE + 1
DEFAULT_FACT_COUNT = 10


class ProfileProvider(Protocol):
    """The user's profile body (markdown), or None when they have none."""

    def profile_for(self, user_id: str) -> str | None: ...


class FactsProvider(Protocol):
    """The user's facts most relevant to a query vector: `[{"factId", "text", "score"}]`, best first."""

    def facts_for(self, user_id: str, query_vector: np.ndarray | None, k: int) -> list[dict[str, Any]]: ...


class RecallProvider(Protocol):
    """The user's `k` past turns most relevant to a query, best first (`TurnRecallService`)."""

    def recall(self, user_id: str, query: str, query_vector: np.ndarray | None, k: int) -> list[RecalledTurn]: ...


def history_limit(token_budget: int | None) -> int:
    """How many of the newest turns to read for a budget: never more than could possibly fit."""
    if token_budget is None:
        return MAX_HISTORY_TURNS
    return max(0, min(MAX_HISTORY_TURNS, token_budget // MIN_TURN_TOKENS))


@dataclass
class UserMemoryService:
    """UserMemorySource for RetrievalService: profile, facts and history, each degrading on its own."""

    conversations: ConversationService
    profiles: ProfileProvider
    facts: FactsProvider
    recall: RecallProvider
    fact_count: int = DEFAULT_FACT_COUNT

    def for_retrieve(
        self,
        user_id: str,
        thread_id: str | None,
        input_text: str,
        query_vector: np.ndarray | None,
        token_budget: int | None = None,
        recall_k: int = 0,
    ) -> UserMemory:
        memory = UserMemory()
        try:
            memory.profile = self.profiles.profile_for(user_id)
        except BackendUnavailable:
            # Named after the part of the answer that is missing, whatever backend failed.
            memory.degraded.append("profile")
        try:
            memory.facts = self.facts.facts_for(user_id, query_vector, self.fact_count)
        except BackendUnavailable:
            memory.degraded.append("facts")
        if thread_id is not None:
            memory.history = self._history(user_id, thread_id, token_budget, memory.degraded)
        if recall_k > 0:
            # Turns of this thread's history may come back too; packing drops those it keeps as
            # history, so ask for that many more.
            wanted = recall_k + len(memory.history)
            try:
                memory.recalled = self.recall.recall(user_id, input_text, query_vector, wanted)
            except BackendUnavailable:
                memory.degraded.append("recalled")
        return memory

    def _history(
        self, user_id: str, thread_id: str, token_budget: int | None, degraded: list[str]
    ) -> list[HistoryTurn]:
        try:
            return self.conversations.recent_history(user_id, thread_id, history_limit(token_budget))
        except BackendUnavailable:
            log.warning("history unavailable", extra={"userHash": log_id(user_id), "threadHash": log_id(thread_id)})
            degraded.append("history")
            return []
