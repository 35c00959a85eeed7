"""Presidio's `AnalyzerEngine.analyze` for one fixed entity list, without the steps that change nothing here.

`analyze` looks the recognizers up again on every call and, after they ran, hands every result to the
context-aware enhancer, which deep-copies them all (each with its explanation: the pattern's text, the
recognizer's name) and then skips every one whose recognizer has no context words. None of the local
detector's recognizers has any and the detector passes no context, so that copy is all the step does:
about a third of Presidio's own time per text. `RequestedAnalysis` runs the same steps in the same order
on the same recognizers (NLP artifacts, each recognizer, Presidio's per-recognizer thresholds, its
duplicate removal, the decision process dropped) and skips the copy only while that holds: given a
recognizer with context words, or an enhancer of another kind, it calls `analyze` itself.
`scripts/check_ner_spans.py` holds the detector's spans on pii-dev and LoCoMo to be the same as before.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from presidio_analyzer import AnalyzerEngine, RecognizerResult


class RequestedAnalysis:
    """`analyzer.analyze(text=..., language=language, entities=entities)`, the same results, less work."""

    def __init__(self, analyzer: AnalyzerEngine, language: str, entities: Sequence[str]) -> None:
        from presidio_analyzer import EntityRecognizer
        from presidio_analyzer.context_aware_enhancers import LemmaContextAwareEnhancer

        self._analyzer = analyzer
        self._language = language
        self._entities = list(entities)
        self.registered = _registered(analyzer)
        self._recognizers = analyzer.registry.get_recognizers(
            language=language, entities=self._entities, all_fields=False
        )
        # The steps `analyze` runs that this class must reproduce, found under their names in this
        # version of Presidio: without one of them, or with anything the enhancers would act on, the
        # full `analyze` is called instead.
        self._remove_low_scores: Any = getattr(analyzer, "_AnalyzerEngine__remove_low_scores", None)
        self._remove_duplicates = EntityRecognizer.remove_duplicates
        self._trimmed = (
            self._remove_low_scores is not None
            and not analyzer.log_decision_process
            and type(analyzer.context_aware_enhancer) is LemmaContextAwareEnhancer
            and not any(recognizer.context for recognizer in self._recognizers)
            and all(
                type(recognizer).enhance_using_context is EntityRecognizer.enhance_using_context
                for recognizer in self._recognizers
            )
        )

    @property
    def analyzer(self) -> AnalyzerEngine:
        return self._analyzer

    @property
    def trimmed(self) -> bool:
        """False when every call goes through `AnalyzerEngine.analyze` unchanged."""
        return self._trimmed

    def __call__(self, text: str) -> list[RecognizerResult]:
        """The results `analyze` gives for `text`, in its order."""
        if not self._trimmed:
            return self._analyzer.analyze(text=text, language=self._language, entities=self._entities)
        from presidio_analyzer import RecognizerResult

        identifier, name_key = RecognizerResult.RECOGNIZER_IDENTIFIER_KEY, RecognizerResult.RECOGNIZER_NAME_KEY
        artifacts = self._analyzer.nlp_engine.process_text(text, self._language)
        results: list[RecognizerResult] = []
        for recognizer in self._recognizers:
            if not recognizer.is_loaded:
                recognizer.load()
                recognizer.is_loaded = True
            found = recognizer.analyze(text=text, entities=self._entities, nlp_artifacts=artifacts)
            for result in found or ():
                if not result.recognition_metadata:
                    result.recognition_metadata = {}
                result.recognition_metadata.setdefault(identifier, recognizer.id)
                result.recognition_metadata.setdefault(name_key, recognizer.name)  # type: ignore[has-type]
            results.extend(found or ())
        # The enhancer's regrouping: each recognizer's results in recognizer order (a result naming no
        # recognizer of the list is dropped, as there).
        by_recognizer = [
            result for recognizer in self._recognizers for result in results
            if result.recognition_metadata[identifier] == recognizer.id
        ]
        kept = self._remove_low_scores(by_recognizer, None, self._recognizers)
        kept = self._remove_duplicates(kept)
        for result in kept:
            result.analysis_explanation = None  # type: ignore[assignment]
        return list(kept)


_by_request: dict[tuple[int, str, tuple[str, ...]], RequestedAnalysis] = {}
_by_request_lock = threading.Lock()


def requested_analysis(analyzer: AnalyzerEngine, language: str, entities: Sequence[str]) -> RequestedAnalysis:
    """The process's `RequestedAnalysis` of `analyzer` for this language and entity list, built once."""
    key = (id(analyzer), language, tuple(entities))
    found = _by_request.get(key)
    # Built again if a recognizer was added to the registry since (`analyze` reads it on every call).
    if found is None or found.analyzer is not analyzer or found.registered != _registered(analyzer):
        with _by_request_lock:
            found = _by_request[key] = RequestedAnalysis(analyzer, language, entities)
    return found


def _registered(analyzer: AnalyzerEngine) -> int:
    return len(list(analyzer.registry.recognizers))
