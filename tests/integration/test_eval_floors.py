"""`agentmem eval pii|locomo` as quality gates: a floor at or under the measured figure passes, one above it fails.

Both run the real commands on tiny files written here (never ../shared/eval/), whose figures are
known by construction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentmem.cli.main import cli
from agentmem.eval.floors import locomo_shortfalls, parse_floor, pii_shortfalls
from click.testing import CliRunner

from tests.unit.test_eval_locomo import tiny_sample


def record(text: str, *values: tuple[str, str]) -> dict[str, object]:
    spans = [{"entity_type": kind, "start_position": text.index(value), "end_position": text.index(value) + len(value)}
             for kind, value in values]
    return {"full_text": text, "spans": spans}


# The structured rules find the first address and not the spelled-out one (its last label is no top-level
# domain, which a plain " at " needs: `written_emails`): EMAIL_ADDRESS recall 0.5, precision 1.0; they find no
# name at all: PERSON recall 0.0, no precision.
PII_RECORDS = [
    record("Write to ana.silva@example.com about the order.", ("EMAIL_ADDRESS", "ana.silva@example.com")),
    record("Or to ben at example dot xyzzy, says Ben Okafor.", ("EMAIL_ADDRESS", "ben at example dot xyzzy"),
           ("PERSON", "Ben Okafor")),
]


@pytest.fixture
def pii_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-pii.json"
    path.write_text(json.dumps(PII_RECORDS), encoding="utf-8")
    return path


def eval_pii(path: Path, *floors: str) -> object:
    return CliRunner().invoke(cli, ["eval", "pii", str(path), "--detector", "regex", *floors])


def test_pii_floors_at_the_measured_figures_pass(pii_file: Path) -> None:
    result = eval_pii(pii_file, "--min-recall", "EMAIL_ADDRESS=0.5", "--min-precision", "EMAIL_ADDRESS=1.0")
    assert result.exit_code == 0, result.output
    assert "all 2 floors met" in result.output


def test_a_pii_floor_raised_above_the_measured_figure_fails_and_names_it(pii_file: Path) -> None:
    result = eval_pii(pii_file, "--min-recall", "EMAIL_ADDRESS=0.51", "--min-precision", "EMAIL_ADDRESS=1.0")
    assert result.exit_code == 1
    assert "below the floor: EMAIL_ADDRESS recall 0.500 < 0.51" in result.output
    assert "precision" not in result.output.split("below the floor:")[1]


def test_a_pii_floor_on_a_figure_not_measured_fails(pii_file: Path) -> None:
    result = eval_pii(pii_file, "--min-precision", "PERSON=0.1")
    assert result.exit_code == 1 and "PERSON precision not measured < 0.1" in result.output


def test_the_pii_table_is_still_printed_before_the_verdict(pii_file: Path) -> None:
    result = eval_pii(pii_file, "--min-recall", "PERSON=0.9")
    assert "EMAIL_ADDRESS" in result.output.split("below the floor")[0]


def test_a_malformed_floor_is_a_usage_error(pii_file: Path) -> None:
    result = eval_pii(pii_file, "--min-recall", "EMAIL_ADDRESS")
    assert result.exit_code == 2 and "NAME=VALUE" in result.output


def test_a_locomo_floor_above_the_measured_recall_fails_and_one_at_it_passes(tmp_path: Path) -> None:
    # Eight turns, fewer than 50: every evidence turn is recalled at 50 (100%). One question names two
    # evidence turns, and only one can come first: R@1 is at most (4 + 0.5) / 5 = 90%, under 95.
    # --library spares loading spaCy (30 s on a busy machine); the floors are judged by the same code
    # after either path.
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([tiny_sample()]), encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", "locomo", str(path), "--library", "--min-recall-at", "50=100",
                                      "--min-recall-at", "1=95"])
    assert result.exit_code == 1, result.output
    verdict = result.output.split("below the floor: ", 1)[1]
    assert verdict.startswith("R@1 ") and "R@50" not in verdict


def test_locomo_shortfalls_compare_in_percent_and_name_missing_ks() -> None:
    result = {"overall": {"10": 0.734, "50": 0.9}}
    assert locomo_shortfalls(result, {10: 73.4, 50: 90}) == []
    assert locomo_shortfalls(result, {10: 73.5, 25: 80}) == ["R@10 73.4 < 73.5", "R@25 not measured < 80"]


def test_pii_shortfalls_read_overall_as_every_type_pooled() -> None:
    result = {"overall": {"precision": 0.9, "recall": 0.7}, "by_type": {}}
    assert pii_shortfalls(result, {"overall": 0.9}, {"overall": 0.71}) == ["overall recall 0.700 < 0.71"]


@pytest.mark.parametrize("text", ["=3", "10", "10=x"])
def test_parse_floor_refuses_malformed_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_floor(text)


def test_parse_floor_with_int_keys_refuses_a_type_name() -> None:
    with pytest.raises(ValueError):
        parse_floor("PERSON=3", key_is_int=True)
