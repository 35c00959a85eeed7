"""`agentmem reindex --turns`: a data folder's recall indexes rebuilt from its stored turns.

What an older data folder needs after the turn search changes what it indexes: the transcripts are
the source of truth, and the command indexes every user's threads again from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentmem.adapters.local.bm25_index import LocalBm25Index
from agentmem.adapters.local.offline_llm import OfflineRuleModel
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.cli.main import cli
from agentmem.local.server import create_app
from click.testing import CliRunner

from tests.integration.local_client import LocalCaller

USER = "ana"
TURNS = {
    "trip": ["Have you booked the ferry to the islands?", "Yes, it leaves at seven on Friday."],
    "pets": ["We adopted a kitten from the shelter.", "Her name is Miso and she sleeps all day."],
}


def _app(folder: Path, minilm: Any) -> Any:
    return create_app(folder, start_worker=False, ports={
        "embedder": minilm, "llm": OfflineRuleModel(), "pii_detector": RegexPiiDetector(),
    })


def _recalled(app: Any, question: str) -> list[tuple[str, int]]:
    status, answer = LocalCaller(app)("POST", "/v1/agents/helper/retrieve",
                                      {"input": question, "userId": USER, "recallK": 3})
    assert status == 200, answer
    return [(turn["threadId"], turn["seq"]) for turn in answer["recalled"]]


def test_reindex_turns_rebuilds_lost_recall_indexes_from_the_transcripts(tmp_path: Path, minilm: Any) -> None:
    app = _app(tmp_path, minilm)
    try:
        call = LocalCaller(app)
        for thread, texts in TURNS.items():
            status, answer = call("POST", f"/v1/users/{USER}/threads/{thread}/turns",
                                  {"turns": [{"role": "user", "content": text} for text in texts]})
            assert status == 201, answer
        while app.worker.drain(timeout=60):
            pass
        assert ("pets", 1) in _recalled(app, "What pet did they adopt from the shelter?")
        tenant = app.settings.tenant
        # The keyword index is the one port the services hold only to close it.
        (lexical,) = app.services.closeables
        assert isinstance(lexical, LocalBm25Index)
        lexical.delete_owner(tenant, "turn", USER)
        app.services.memory.vectors.delete_owner(tenant, "turn", USER)
        assert _recalled(app, "What pet did they adopt from the shelter?") == []
    finally:
        app.close()

    result = CliRunner().invoke(cli, ["reindex", "--turns", "--data-dir", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "reindexed 4 turn(s) in 2 thread(s) of 1 user(s)" in result.output

    app = _app(tmp_path, minilm)
    try:
        assert _recalled(app, "What pet did they adopt from the shelter?")[0] == ("pets", 1)
        assert ("trip", 2) in _recalled(app, "When does the ferry leave?")
    finally:
        app.close()
