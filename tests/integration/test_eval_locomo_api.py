"""`agentmem eval locomo` through the product: a tiny conversation ingested over the API, asked with retrieve."""

from __future__ import annotations

import json
from dataclasses import replace
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


def _two_conversations(tmp_path: Path) -> Path:
    path = tmp_path / "two-locomo.json"
    path.write_text(json.dumps([tiny_sample(), {**tiny_sample(), "sample_id": "tiny-2"}]), encoding="utf-8")
    return path


def test_a_fold_is_measured_alone_and_each_conversation_is_reported(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    result = evaluate_through_api(_two_conversations(tmp_path), embedder=minilm, conversations=["tiny-2"])
    assert result["conversations"] == 1 and list(result["by_conversation"]) == ["tiny-2"]
    assert result["by_conversation"]["tiny-2"]["questions"]["overall"] == 5


def test_the_command_line_picks_a_fold_or_its_tuning_side(tmp_path: Path) -> None:
    from agentmem.cli.main import cli
    from click.testing import CliRunner

    path = _two_conversations(tmp_path)

    def measured(*options: str) -> list[str]:
        result = CliRunner().invoke(
            cli, ["eval", "locomo", str(path), "--library", "--retriever", "lexical", "--json", *options]
        )
        assert result.exit_code == 0, result.output
        return list(json.loads(result.output)["by_conversation"])

    assert measured("--folds", "2", "--fold", "2") == ["tiny-2"]
    assert measured("--folds", "2", "--fold", "2", "--tuning-side") == ["tiny-1"]
    assert measured("--conversations", "tiny-1,tiny-2") == ["tiny-1", "tiny-2"]
    refused = CliRunner().invoke(cli, ["eval", "locomo", str(path), "--library", "--fold", "1"])
    assert refused.exit_code == 2 and "--folds and --fold go together" in refused.output
    unknown = CliRunner().invoke(cli, ["eval", "locomo", str(path), "--library", "--conversations", "conv-9"])
    assert unknown.exit_code == 2 and "conv-9" in unknown.output


def test_cross_validation_chooses_each_fold_on_the_others_through_retrieve(tmp_path: Path) -> None:
    from agentmem.eval.locomo_cv import BASELINE, cross_validate, measure_variants

    neighbours = replace(BASELINE, name="neighbours", neighbour_weight=0.5)
    measured = measure_variants(_two_conversations(tmp_path), [BASELINE, neighbours])
    assert set(measured.recalls) == {"baseline", "neighbours"}
    assert set(measured.recalls["baseline"]) == {"tiny-1", "tiny-2"}
    # Eight turns, fewer than 50: every evidence turn is recalled at 50, whatever the setting.
    assert all(value == 1.0 for by_category in measured.recalls["neighbours"]["tiny-1"].values()
               for value in by_category[50])
    cv = cross_validate(measured, 2, ["baseline", "neighbours"], "baseline")
    assert [row["reported_on"] for row in cv["folds"]] == [["tiny-1"], ["tiny-2"]]
    assert [row["tuned_on"] for row in cv["folds"]] == [["tiny-2"], ["tiny-1"]]
    assert all(row["chosen"] in ("baseline", "neighbours") for row in cv["folds"])
    assert cv["pooled"]["chosen"]["R@10"] is not None
