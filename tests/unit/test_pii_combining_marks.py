"""Accents written as combining marks after a letter ("ẹ́" is "ẹ" and U+0301): spaCy's recognizer missed the
words that hold them, so "Hello, I'm Fọlákẹ́ Ọ̀ṣìnbàjò" was stored raw. The detector reads the text with
each letter's marks folded into it and maps the spans back. Every value here is made up for this file."""

from __future__ import annotations

import unicodedata

import pytest
from agentmem.adapters.local.combining_marks import without_marks
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def test_a_text_without_marks_is_not_copied() -> None:
    assert without_marks("Hello, I'm Adéwálé Ọlátúnjí.") is None  # precomposed letters only
    assert without_marks("नमस्ते प्रिया") is None  # Devanagari's vowel signs are no accents


def test_marks_are_folded_into_their_letter_and_spans_map_back() -> None:
    text = "Hi Fọlákẹ́ Ọ̀ṣìnbàjò!"
    folded = without_marks(text)
    assert folded is not None
    assert folded.text == "Hi Fọlákẹ Ọṣìnbàjò!"
    start = folded.text.index("Fọlákẹ")
    end = folded.text.index("!")
    assert folded.original(start, end) == (3, text.index("!"))
    decomposed = unicodedata.normalize("NFD", "Zoë Ångström")
    folded = without_marks(decomposed)
    assert folded is not None and folded.text == "Zoë Ångström"
    assert folded.original(0, len(folded.text)) == (0, len(decomposed))


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hello, I'm Fọlákẹ́ Ọ̀ṣìnbàjò.", "Fọlákẹ́ Ọ̀ṣìnbàjò"),
        ("Hello, I'm Fọlákẹ́ Ọ̀ṣìnbàjò; my partner is here.", "Fọlákẹ́ Ọ̀ṣìnbàjò"),
        (
            unicodedata.normalize("NFD", "Hello, I'm Ingrid Sørbøe-Åsheim."),
            unicodedata.normalize("NFD", "Ingrid Sørbøe-Åsheim"),
        ),
    ],
)
def test_a_name_with_combining_marks_is_found_whole(detector: LocalPiiDetector, text: str, name: str) -> None:
    people = [span for span in detector.detect(text) if span.entity_type == "PERSON"]
    assert [span.value for span in people] == [name]
    assert all(text[span.start : span.end] == span.value for span in people)
