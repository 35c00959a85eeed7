"""scripts/eval_locomo_s3vectors.py: the S3 Vectors mode's LoCoMo figure beside the local hybrid's, on a tiny file.

The script is the dev entry point (it needs the QueryVectors double); here it runs a one-conversation
file through both product paths and must print both figures, the gap and what stood in for what.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT
from tests.unit.test_eval_locomo import tiny_sample

# QueryVectors is tests/contract/fake_s3vectors_query.py, a double written here.
pytestmark = pytest.mark.double


def script() -> ModuleType:
    path = ROOT / "scripts" / "eval_locomo_s3vectors.py"
    spec = importlib.util.spec_from_file_location("eval_locomo_s3vectors", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def locomo_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The script sets fake AWS credentials in the environment; these make the test undo it.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
        monkeypatch.setenv(name, "testing")
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([tiny_sample()]), encoding="utf-8")
    return path


def test_both_figures_the_gap_and_the_stand_ins_are_printed(
    locomo_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert script().main([str(locomo_file), "--json", "--max-gap", "2"]) == 0
    printed = json.loads(capsys.readouterr().out)
    local, s3vectors = printed["local"], printed["s3vectors"]
    assert local["questions"]["overall"] == s3vectors["questions"]["overall"] == 5
    assert "DynamoDbLexicalIndex" in s3vectors["retriever"] and "S3VectorsIndex" in s3vectors["retriever"]
    assert "fake_s3vectors_query" in s3vectors["note"] and "MiniLM in place of Titan" in s3vectors["note"]
    assert s3vectors["overall"]["50"] == 1.0
    # The keyword side is there: the single-hop question sharing its words with one turn finds it in the top 5.
    assert s3vectors["by_category"]["4"]["5"] >= 0.5
    assert printed["gap_points"] == {
        k: round(100 * (local["overall"][k] - s3vectors["overall"][k]), 1) for k in s3vectors["overall"]
    }


def test_the_table_says_the_double_and_minilm_stood_in(locomo_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert script().main([str(locomo_file), "--skip-local"]) == 0
    out = capsys.readouterr().out
    assert "S3 Vectors mode" in out and "QueryVectors answered by the test double" in out
    assert "local MiniLM in place of Titan" in out and "local hybrid minus" not in out
