"""`agentmem eval locomo` through the product: a tiny conversation ingested over the API, asked with retrieve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentmem.adapters.local.minilm import MiniLMEmbedder
from agentmem.eval.locomo_api import evaluate_through_api, format_extras

from tests.unit.test_eval_locomo import tiny_sample


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([tiny_sample()]), encoding="utf-8")
    return path


def test_questions_asked_through_retrieve_find_their_evidence_turns(locomo_file: Path, minilm: MiniLMEmbedder) -> None:
    result = evaluate_through_api(locomo_file, embedder=minilm)

    assert result["retriever"] == "retrieve" and result["recall_k"] == 50
    assert result["questions"]["overall"] == 5 and result["questions"]["skipped_without_evidence"] == 1
    # "Which city is the sister moving to?" shares its words with D1:3 alone: first, through retrieve.
    assert result["by_category"]["4"]["5"] >= 0.5
    # Eight turns in all, fewer than k: every evidence id is among the recalled turns at 50.
    assert result["overall"]["50"] == 1.0
    assert result["latency_ms"]["calls"] == 5 and result["latency_ms"]["p50"] > 0
    assert result["tokens"]["mean"] > result["at_defaults"]["tokens"]["mean"] > 0
    assert "latency p50" in format_extras(result)


def test_the_vector_side_alone_is_measured_apart(locomo_file: Path, minilm: MiniLMEmbedder) -> None:
    result = evaluate_through_api(locomo_file, embedder=minilm, keyword_side=False)
    assert result["retriever"] == "retrieve, vector side only"
    assert result["overall"]["50"] == 1.0
