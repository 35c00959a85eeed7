"""The local name-and-place detector: Presidio over the pinned spaCy pipeline, loaded once, never downloaded."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from agentmem.adapters.aws.comprehend_pii import CombinedPiiDetector, ComprehendPiiDetector
from agentmem.adapters.local import presidio_pii, spacy_pipeline
from agentmem.adapters.local.offline_llm import OfflineRuleModel
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.presidio_pii import LocalPiiDetector, PresidioPiiDetector, shared_analyzer
from agentmem.adapters.local.spacy_pipeline import default_model_dir, model_meta, shared_pipeline
from agentmem.config import load_settings
from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.pii import PiiSpan
from agentmem.domain.profile import rewrite_prompt
from agentmem.service.consolidation import PiiGuardedModel
from agentmem.wiring import build_pii_detector, build_services

from tests.llm_doubles import RecordingModel

TEXT = "Hi, this is Uta Kortig from Helsinki. I moved to Lisbon with Maria last May; mail uta@example.com."


def found(spans: list[PiiSpan]) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in spans}


def test_the_pinned_model_is_explosions_en_core_web_md_3_8_under_mit() -> None:
    meta = model_meta(default_model_dir())
    assert (meta["lang"], meta["name"], meta["version"], meta["license"]) == ("en", "core_web_md", "3.8.0", "MIT")
    assert meta["spacy_version"] == ">=3.8.0,<3.9.0"


def test_names_and_places_are_found_and_typed_with_presidio_names() -> None:
    spans = PresidioPiiDetector().detect(TEXT)
    assert {("PERSON", "Uta Kortig"), ("PERSON", "Maria"), ("LOCATION", "Helsinki"), ("LOCATION", "Lisbon")} <= found(
        spans
    )
    assert all(TEXT[span.start : span.end] == span.value for span in spans)


def test_ordinary_sentences_have_no_names() -> None:
    text = "Please call me back tomorrow about the invoice; the meeting moved to the afternoon."
    assert LocalPiiDetector().detect(text) == []
    # spaCy reads this sentence-initial "Flag" as an organisation: organisations are off by default.
    assert LocalPiiDetector().detect("Wrong again: 'trail magic' is house style. Flag real clichés only.") == []


def test_dates_are_not_reported_unless_asked_for() -> None:
    text = "We met on 12 March 2024 in Paris."
    assert "DATE_TIME" not in {span.entity_type for span in PresidioPiiDetector().detect(text)}
    assert "DATE_TIME" in {span.entity_type for span in PresidioPiiDetector(entities={"DATE_TIME"}).detect(text)}


def test_an_entity_type_spacy_cannot_find_is_refused() -> None:
    with pytest.raises(ValueError, match="CREDIT_CARD"):
        PresidioPiiDetector(entities={"CREDIT_CARD"})


def test_structured_identifiers_keep_their_type_over_a_name_model_guess() -> None:
    text = "Write to UtaKortig@jourrapide.com or call +46 (0)8 928 571 38, says Uta Kortig."
    spans = found(LocalPiiDetector().detect(text))
    assert ("EMAIL_ADDRESS", "UtaKortig@jourrapide.com") in spans
    assert ("PHONE_NUMBER", "+46 (0)8 928 571 38") in spans
    assert ("PERSON", "Uta Kortig") in spans


def test_every_detector_shares_one_pipeline_loaded_once() -> None:
    PresidioPiiDetector().detect(TEXT)
    LocalPiiDetector().detect(TEXT)
    assert shared_analyzer() is shared_analyzer()
    assert shared_analyzer().nlp_engine.nlp["en"] is shared_pipeline()
    assert shared_pipeline().pipe_names == ["ner"]  # only what entity recognition needs is loaded


def test_concurrent_detection_gives_what_sequential_detection_gives() -> None:
    detector = LocalPiiDetector()
    texts = [f"{TEXT} Ticket {n}." for n in range(16)]
    expected = [detector.detect(text) for text in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(detector.detect, texts)) == expected


def test_a_missing_model_is_an_unavailable_backend_never_a_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import spacy.cli

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model must never be downloaded")

    monkeypatch.setattr(spacy.cli, "download", no_download)
    monkeypatch.setenv(spacy_pipeline.MODEL_DIR_ENV, str(tmp_path / "nowhere"))
    # A process that has not loaded the pipeline yet.
    monkeypatch.setattr(spacy_pipeline, "_pipeline", None)
    monkeypatch.setattr(presidio_pii, "_analyzer", None)
    with pytest.raises(BackendUnavailable, match="no spaCy model"):
        PresidioPiiDetector().detect(TEXT)


def test_the_guard_before_the_model_withholds_names_and_places_the_masking_missed() -> None:
    recorder = RecordingModel(OfflineRuleModel())
    guard = PiiGuardedModel(recorder, LocalPiiDetector())
    system, messages = rewrite_prompt("## Identity\n- likes tea", [], 300)
    guard.complete(system, [{"role": "user", "content": messages[0]["content"] + "\n" + TEXT}], max_tokens=50)
    sent = recorder.sent()
    for value in ("Uta Kortig", "Maria", "Helsinki", "Lisbon", "uta@example.com"):
        assert value not in sent
    assert "[PERSON withheld]" in sent and "[LOCATION withheld]" in sent and "[EMAIL withheld]" in sent


def test_the_local_backend_masks_and_guards_the_model_with_names_and_places(tmp_path: Path) -> None:
    recorder = RecordingModel(OfflineRuleModel())
    services = build_services(load_settings(backend="local", data_dir=tmp_path / "data"), llm=recorder)
    try:
        assert isinstance(services.conversations.detector, LocalPiiDetector)
        system, messages = rewrite_prompt("## Identity\n- likes tea", [], 300)
        messages[0]["content"] += "\n" + TEXT
        services.facts.llm.complete(system, messages, max_tokens=50)
    finally:
        services.close()
    call = recorder.calls[0]
    assert call.system == system  # agentmem's own template is not read as names ("Recent Topics")
    for value in ("Uta Kortig", "Maria", "Helsinki", "Lisbon"):
        assert value not in call.text


def test_the_aws_backend_detects_with_comprehend_and_the_structured_rules() -> None:
    settings = load_settings(backend="aws", tenant="acme", table_name="t", key_table_name="k", event_bus_name="b",
                             kms_key_arn="k")
    detector = build_pii_detector(settings)
    assert isinstance(detector, CombinedPiiDetector)
    assert [type(part) for part in detector.detectors] == [RegexPiiDetector, ComprehendPiiDetector]
