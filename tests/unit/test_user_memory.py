"""UserMemoryService: what a user's memory gives `retrieve`, part by part, each degrading on its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from agentmem.adapters.local.key_file import LocalKeyFile
from agentmem.adapters.local.key_store import SqliteKeyStore
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
from agentmem.adapters.local.vault_store import SqliteVaultStore
from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.pii import find_tokens
from agentmem.service.conversations import ConversationService, TurnInput
from agentmem.service.user_memory import MAX_HISTORY_TURNS, UserMemoryService, history_limit


@pytest.fixture
def conversations(tmp_path: Path) -> Iterator[ConversationService]:
    service = ConversationService(
        tenant="acme", transcripts=SqliteTranscriptStore(tmp_path / "t.db"), vault=SqliteVaultStore(tmp_path / "v.db"),
        key_store=SqliteKeyStore(tmp_path / "keys.db"), keys=LocalKeyFile(tmp_path / "vault.key"),
        detector=RegexPiiDetector(),
    )
    yield service
    service.close()


class Profiles:
    def __init__(self, down: bool = False) -> None:
        self.down = down

    def profile_for(self, user_id: str) -> str | None:
        if self.down:
            raise BackendUnavailable("store", "DynamoDB: ThrottlingException")
        return f"## Identity\n{user_id} writes Python."


class Facts:
    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def facts_for(self, user_id: str, query_vector: np.ndarray | None, k: int) -> list[dict[str, Any]]:
        self.asked.append((user_id, k))
        return [{"factId": "f1", "text": "prefers tea", "score": 0.9}]


class Recall:
    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def recall(self, user_id: str, query: str, query_vector: np.ndarray | None, k: int) -> list[Any]:
        self.asked.append((user_id, k))
        return []


class BrokenTranscripts:
    def newest_turns(self, *args: Any) -> Any:
        raise BackendUnavailable("transcripts", "DynamoDB unreachable")


def test_history_reads_no_more_turns_than_could_fit_and_never_more_than_the_cap() -> None:
    assert history_limit(None) == MAX_HISTORY_TURNS
    assert history_limit(100) == 25  # each turn costs at least 3 tokens of framing and 1 of role
    assert history_limit(32_000) == MAX_HISTORY_TURNS
    assert history_limit(0) == 0


def test_history_is_the_newest_turns_of_that_thread_only_oldest_first(conversations: ConversationService) -> None:
    for n in range(30):
        conversations.append_turns("alice", "t1", [TurnInput("user", f"turn {n}")])
    conversations.append_turns("alice", "t2", [TurnInput("user", "other thread")])
    memory = UserMemoryService(conversations, profiles=Profiles(), facts=Facts(), recall=Recall())

    history = memory.for_retrieve("alice", "t1", "hi", None, token_budget=100).history

    assert [turn.content for turn in history] == [f"turn {n}" for n in range(5, 30)]
    assert memory.for_retrieve("alice", None, "hi", None).history == []


def test_profile_and_facts_come_from_their_providers(conversations: ConversationService) -> None:
    facts = Facts()
    memory = UserMemoryService(conversations, profiles=Profiles(), facts=facts, recall=Recall(), fact_count=3)
    answer = memory.for_retrieve("alice", "t1", "hi", np.zeros(4))
    assert answer.profile == "## Identity\nalice writes Python."
    assert answer.facts == [{"factId": "f1", "text": "prefers tea", "score": 0.9}]
    assert facts.asked == [("alice", 3)]
    assert answer.degraded == []


def test_each_missing_part_is_named_and_the_rest_still_answers(conversations: ConversationService) -> None:
    conversations.transcripts = BrokenTranscripts()  # type: ignore[assignment]
    memory = UserMemoryService(conversations, profiles=Profiles(down=True), facts=Facts(), recall=Recall())
    answer = memory.for_retrieve("alice", "t1", "hi", None)
    assert answer.degraded == ["profile", "history"]
    assert answer.profile is None and answer.history == []
    assert answer.facts[0]["factId"] == "f1"


def test_a_text_masked_outside_a_thread_gets_the_users_tokens_from_their_turns(
    conversations: ConversationService,
) -> None:
    stored = conversations.append_turns("alice", "t1", [TurnInput("user", "write to jane@example.com")])
    masked = conversations.mask_text("alice", "what did jane@example.com say?")
    assert masked == f"what did {find_tokens(stored[0].content)[0].token} say?"
