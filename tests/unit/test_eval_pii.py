"""evaluate_detector: span-level precision, recall and support per entity type on a hand-made file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.domain.pii import PiiSpan
from agentmem.eval.pii import TARGETS, evaluate_detector, format_table, load_records, split_records


def gold(text: str, value: str, entity_type: str) -> dict[str, object]:
    start = text.index(value)
    return {
        "entity_type": entity_type,
        "entity_value": value,
        "start_position": start,
        "end_position": start + len(value),
    }


TEXT_1 = "Ann Lee: mail ann@example.com or call 780-999-2181 or 541-714-1388."
TEXT_2 = "Visit https://www.example.be/ from 41.173.96.26 today"
TEXT_3 = "Nothing here."
RECORDS = [
    {
        "full_text": TEXT_1,
        "spans": [
            gold(TEXT_1, "Ann Lee", "PERSON"),
            gold(TEXT_1, "ann@example.com", "EMAIL_ADDRESS"),
            gold(TEXT_1, "780-999-2181", "PHONE_NUMBER"),
            gold(TEXT_1, "541-714-1388", "PHONE_NUMBER"),
        ],
    },
    {
        "full_text": TEXT_2,
        "spans": [gold(TEXT_2, "https://www.example.be/", "DOMAIN_NAME"), gold(TEXT_2, "41.173.96.26", "IP_ADDRESS")],
    },
    {"full_text": TEXT_3, "spans": []},
]


class ScriptedDetector:
    """Returns, for each text, the spans written down for it here."""

    def __init__(self, by_text: dict[str, list[tuple[str, str]]]) -> None:
        self.by_text = by_text

    def detect(self, text: str) -> list[PiiSpan]:
        spans = []
        for entity_type, value in self.by_text.get(text, []):
            start = text.index(value)
            spans.append(PiiSpan(entity_type, start, start + len(value), value))
        return spans


DETECTOR = ScriptedDetector(
    {
        TEXT_1: [
            ("EMAIL_ADDRESS", "example.com"),  # partial overlap with the gold e-mail: a true positive
            ("PHONE_NUMBER", "780-999-2181 or 541-714-1388"),  # one span covering both gold phones
            ("PHONE_NUMBER", "Ann Lee"),  # overlaps gold of another type only: a false positive
        ],
        TEXT_2: [("URL", "https://www.example.be/"), ("US_SSN", "41.173")],
        TEXT_3: [("PHONE_NUMBER", "Nothing")],
    }
)


@pytest.fixture
def result() -> dict[str, object]:
    return evaluate_detector(DETECTOR, RECORDS)


def test_precision_recall_and_support_per_type(result: dict[str, dict[str, dict[str, object]]]) -> None:
    by_type = result["by_type"]
    assert by_type["EMAIL_ADDRESS"] == {"precision": 1.0, "recall": 1.0, "support": 1}
    # 3 phone predictions, 1 matches gold; the wide one recalls both gold phones.
    assert by_type["PHONE_NUMBER"] == {"precision": pytest.approx(1 / 3), "recall": 1.0, "support": 2}
    # DOMAIN_NAME gold is scored as URL.
    assert by_type["URL"] == {"precision": 1.0, "recall": 1.0, "support": 1}
    assert "DOMAIN_NAME" not in by_type


def test_types_never_predicted_report_recall_and_no_precision(result: dict[str, dict[str, dict]]) -> None:
    assert result["by_type"]["PERSON"] == {"precision": None, "recall": 0.0, "support": 1}
    assert result["by_type"]["IP_ADDRESS"] == {"precision": None, "recall": 0.0, "support": 1}


def test_types_only_predicted_report_precision_and_no_recall(result: dict[str, dict[str, dict]]) -> None:
    assert result["by_type"]["US_SSN"] == {"precision": 0.0, "recall": None, "support": 0}


def test_overall_pools_every_type(result: dict[str, dict[str, object]]) -> None:
    # predictions: 6, of which 3 true (email, wide phone, url); gold: 6, of which 4 recalled.
    assert result["overall"] == {"precision": 0.5, "recall": pytest.approx(4 / 6), "support": 6}


def test_gold_aliases_can_be_turned_off() -> None:
    by_type = evaluate_detector(DETECTOR, RECORDS, gold_type_aliases={})["by_type"]
    assert by_type["DOMAIN_NAME"] == {"precision": None, "recall": 0.0, "support": 1}
    assert by_type["URL"] == {"precision": 0.0, "recall": None, "support": 0}


def test_result_is_json_with_the_cli_shape(result: dict[str, object]) -> None:
    decoded = json.loads(json.dumps(result))
    assert set(decoded) == {"by_type", "overall"}
    assert all(set(scores) == {"precision", "recall", "support"} for scores in decoded["by_type"].values())


def test_table_has_a_row_per_type_and_dashes_for_undefined_ratios(result: dict[str, object]) -> None:
    lines = format_table(result).splitlines()
    assert lines[0].split() == ["entity", "type", "precision", "recall", "support"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert rows["PHONE_NUMBER"] == ["0.333", "1.000", "2"]
    assert rows["PERSON"] == ["-", "0.000", "1"]
    assert lines[-1].split() == ["overall", "(micro)", "0.500", "0.667", "6"]


def test_regex_detector_scores_perfectly_on_a_small_file(tmp_path: Path) -> None:
    path = tmp_path / "pii.json"
    path.write_text(json.dumps(RECORDS[:2]), encoding="utf-8")
    by_type = evaluate_detector(RegexPiiDetector(), load_records(path))["by_type"]
    for entity_type in ("EMAIL_ADDRESS", "PHONE_NUMBER", "URL", "IP_ADDRESS"):
        assert by_type[entity_type]["precision"] == 1.0
        assert by_type[entity_type]["recall"] == 1.0
    assert by_type["PERSON"]["recall"] == 0.0


def test_load_records_refuses_a_file_that_is_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"full_text": "x"}', encoding="utf-8")
    with pytest.raises(ValueError):
        load_records(path)


def test_table_marks_each_type_with_a_target_met_or_missed(result: dict[str, object]) -> None:
    rows = {line.split()[0]: line.split()[1:] for line in format_table(result, TARGETS).splitlines()[1:]}
    assert rows["URL"][3:] == ["met", "(P>=0.95", "R>=0.99)"]
    assert rows["PHONE_NUMBER"][3] == "MISSED"  # precision 0.333
    assert rows["PERSON"][3] == "MISSED"
    assert rows["US_SSN"][3] == "MISSED"  # only predicted: no recall, so the target cannot hold
    assert rows["IP_ADDRESS"][:4] == ["-", "0.000", "1", "MISSED"]  # never predicted


def test_gold_gpe_is_scored_as_location() -> None:
    text = "She lives in Lisbon."
    records = [{"full_text": text, "spans": [gold(text, "Lisbon", "GPE")]}]
    by_type = evaluate_detector(ScriptedDetector({text: [("LOCATION", "Lisbon")]}), records)["by_type"]
    assert by_type == {"LOCATION": {"precision": 1.0, "recall": 1.0, "support": 1}}


def test_split_halves_are_the_even_and_odd_records() -> None:
    first, second = split_records(RECORDS)
    assert first == [RECORDS[0], RECORDS[2]] and second == [RECORDS[1]]
