"""Presidio's analysis without its no-op steps gives `AnalyzerEngine.analyze`'s very results, in its order."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_analysis import RequestedAnalysis, requested_analysis
from agentmem.adapters.local.presidio_pii import PresidioPiiDetector, shared_analyzer

TEXTS = [
    "Hi, this is Uta Kortig from Helsinki. I moved to Lisbon with Maria last May; mail uta@example.com.",
    "Send it to 221B Baker Street, London NW1 6XE, attention Sherlock Holmes.",
    "My son turned 46 and was born on 3 March 1978; we met at Civic Impulse LLC in Dublin D02 X285.",
    "Patel, Shah and Mehta is the firm; the Greek restaurant on Main St is closed.",
    "When did Caroline go to the LGBTQ support group?",
    "",
    "no names here at all, just words",
]


def as_tuples(results) -> list[tuple]:
    return [
        (r.entity_type, r.start, r.end, r.score, dict(r.recognition_metadata or {}), r.analysis_explanation)
        for r in results
    ]


@pytest.fixture(scope="module")
def analyzer():
    return shared_analyzer()


def entities() -> list[str]:
    return PresidioPiiDetector()._requested


def test_the_local_analyzer_needs_no_context_step_and_gives_analyzes_results(analyzer) -> None:
    analysis = RequestedAnalysis(analyzer, "en", entities())
    assert analysis.trimmed
    for text in TEXTS:
        expected = as_tuples(analyzer.analyze(text=text, language="en", entities=entities()))
        got = as_tuples(analysis(text))
        # The recognizer ids hold the object's id, so they match within one process: compared whole.
        assert got == expected, text


def test_a_recognizer_with_context_words_sends_every_call_through_analyze() -> None:
    from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer, RecognizerRegistry

    registry = RecognizerRegistry(supported_languages=["en"])
    registry.add_recognizer(PatternRecognizer(
        supported_entity="TICKET", name="TicketRecognizer", patterns=[Pattern("ticket", r"\bT-\d{4}\b", 0.4)],
        context=["ticket"],
    ))
    class CountingEngine(AnalyzerEngine):
        calls = 0

        def analyze(self, *args, **kwargs):
            CountingEngine.calls += 1
            return super().analyze(*args, **kwargs)

    engine = CountingEngine(nlp_engine=shared_analyzer().nlp_engine, registry=registry, supported_languages=["en"])
    analysis = RequestedAnalysis(engine, "en", ["TICKET"])
    assert not analysis.trimmed
    text = "Your ticket is T-1234."
    got = as_tuples(analysis(text))
    assert CountingEngine.calls == 1
    assert got == as_tuples(engine.analyze(text=text, language="en", entities=["TICKET"]))
    assert [g[:3] for g in got] == [("TICKET", 15, 21)]


def test_the_analysis_is_built_once_per_analyzer_and_entity_list_and_again_after_a_recognizer_is_added(
    analyzer,
) -> None:
    first = requested_analysis(analyzer, "en", entities())
    assert requested_analysis(analyzer, "en", entities()) is first
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry

    registry = RecognizerRegistry(supported_languages=["en"])
    engine = AnalyzerEngine(nlp_engine=analyzer.nlp_engine, registry=registry, supported_languages=["en"])
    before = requested_analysis(engine, "en", ["PERSON"])
    from presidio_analyzer.predefined_recognizers import SpacyRecognizer

    registry.add_recognizer(SpacyRecognizer(supported_language="en", supported_entities=["PERSON"]))
    after = requested_analysis(engine, "en", ["PERSON"])
    assert after is not before
    assert [r.entity_type for r in after("Ana Lopez lives here.")] == ["PERSON"]
