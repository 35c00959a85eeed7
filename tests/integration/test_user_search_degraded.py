"""UserSearchService when a backend fails: each kind degrades on its own; an unmaskable query is refused.

The services are the local wiring's real ones (turns indexed, facts learnt through consolidation);
only the embedder of the search, or the masker, is replaced by one that fails.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from agentmem.adapters.local.offline_llm import OfflineRuleModel
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.domain.errors import BackendUnavailable
from agentmem.local.server import LocalApp, create_app
from agentmem.service.user_search import UserSearchService

from tests.integration.local_client import LocalCaller


class EmbedderDown:
    model_id, dimension = "down", 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise BackendUnavailable("embedder", "model endpoint unreachable")


@pytest.fixture
def app(tmp_path: Path, minilm: Any) -> Iterator[LocalApp]:
    app = create_app(tmp_path, start_worker=False,
                     ports={"embedder": minilm, "llm": OfflineRuleModel(), "pii_detector": RegexPiiDetector()})
    status, _ = LocalCaller(app)("POST", "/v1/users/ana/threads/t1/turns",
                                 {"turns": [{"role": "user", "content": "I work at Globex as a data engineer."}]})
    assert status == 201
    app.worker.drain()
    yield app
    app.close()


def search_with(app: LocalApp, **replaced: Any) -> UserSearchService:
    real = app.services.user_search
    return UserSearchService(**{"masker": real.masker, "embedder": real.embedder, "facts": real.facts,
                                "recall": real.recall, "items": real.items, **replaced})


def test_without_the_embedder_turns_come_from_the_keyword_index_and_facts_and_items_are_degraded(app):
    found = search_with(app, embedder=EmbedderDown()).search("ana", "Globex", 5)

    assert [t.content for t in found.turns] == ["I work at Globex as a data engineer."]
    assert found.facts == [] and found.items == [] and found.degraded == ["facts", "items"]


def test_a_kind_not_asked_for_is_neither_searched_nor_degraded(app):
    found = search_with(app, embedder=EmbedderDown()).search("ana", "Globex", 5, ("turns",))

    assert found.degraded == [] and len(found.turns) == 1


def test_a_query_that_cannot_be_masked_is_refused_not_searched_unmasked(app):
    embedded: list[str] = []

    class Recording:
        model_id, dimension = "recording", 384

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            embedded.extend(texts)
            return np.zeros((len(texts), 384), dtype=np.float32)

    def masker_down(_user: str, _text: str) -> str:
        raise BackendUnavailable("pii", "PII detection unavailable")

    with pytest.raises(BackendUnavailable):
        search_with(app, masker=masker_down, embedder=Recording()).search("ana", "mail ana@example.com", 5)
    assert embedded == []
