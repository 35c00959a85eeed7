"""People's names written in a script without capitals, inside English text: 王伟, 서지우, 中島 里佳, رشيد العلي.

The English pipeline and the rules of ``person_names`` find a name by its capitals and by spaCy's English
model, so a name in Han, kana, Hangul, Arabic, Hebrew, Devanagari, Bengali, Thai or another caseless script
was stored raw. Faker's person providers of those locales (the same package the Latin-script gazetteer
reads, ``name_gazetteer``) list their given names and surnames in their own scripts; this recognizer reads
them and finds, where a run of such letters stands alone in the text (between spaces, Latin words or
punctuation, so not inside a sentence written wholly in that script):

- Han, kana or Hangul, 2 to 6 letters, one space at most inside: a name when it opens with a listed surname
  of 1 to 3 letters and 1 to 3 letters follow ("钟涛", "서지우", "佐々木 花子"), or ends with a listed given name
  after 1 to 3 letters;
- also by its form alone: three Hangul syllables ("향재형"), or a kanji surname, a space and a given name
  holding kana ("真行寺 たくや");
- a run of one to four words of another caseless script: a name when one of its words is a listed given
  name or surname ("رشيد العلي", "रेशमी बोस").
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

import regex

from agentmem.adapters.local.name_gazetteer import _strings
from agentmem.adapters.local.person_names import PERSON
from agentmem.adapters.local.word_cache import WordLists, cached_word_lists

if TYPE_CHECKING:
    from presidio_analyzer import EntityRecognizer, RecognizerResult
    from presidio_analyzer.nlp_engine import NlpArtifacts

SCORE = 0.6
_EAST_ASIAN = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u3005"  # 々 repeats the kanji before it
_SPACED = (
    r"\p{Arabic}\p{Hebrew}\p{Devanagari}\p{Bengali}\p{Gurmukhi}\p{Gujarati}\p{Tamil}\p{Telugu}\p{Kannada}"
    r"\p{Malayalam}\p{Sinhala}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Ethiopic}"
)
# Combining marks belong to the word (Devanagari's vowel signs, Arabic's harakat).
_EAST_ASIAN_RUN = regex.compile(
    rf"(?<![{_EAST_ASIAN}\p{{M}}])[{_EAST_ASIAN}]+(?:[ \u3000][{_EAST_ASIAN}]+)?(?![{_EAST_ASIAN}\p{{M}}])"
)
_SPACED_RUN = regex.compile(
    rf"(?<![{_SPACED}\p{{M}}][ \t]?)[{_SPACED}][{_SPACED}\p{{M}}\u200c\u200d]*"
    rf"(?:[ \t][{_SPACED}][{_SPACED}\p{{M}}\u200c\u200d]*)*(?![ \t]?[{_SPACED}\p{{M}}])"
)
_CASELESS = regex.compile(rf"[{_EAST_ASIAN}{_SPACED}]")


def _key(word: str) -> str:
    return unicodedata.normalize("NFC", word)


@functools.cache
def names() -> tuple[frozenset[str], frozenset[str]]:
    """Given names and surnames of Faker's person providers written in a caseless script (NFC)."""

    def derive() -> WordLists:
        import faker.providers.person as person

        given: set[str] = set()
        family: set[str] = set()
        for module_info in pkgutil.iter_modules(person.__path__):
            provider = importlib.import_module(f"{person.__name__}.{module_info.name}").Provider
            for attribute in dir(provider):
                if attribute.startswith("_") or ("names" not in attribute and "pairs" not in attribute):
                    continue
                target = given if attribute.startswith(("first", "middle")) else family
                for name in _strings(getattr(provider, attribute)):
                    target.update(_key(part) for part in name.split() if _CASELESS.search(part))
        return {"given": sorted(given), "family": sorted(family)}

    lists = cached_word_lists("script-names", [Path(__file__)], ("faker",), derive)
    return frozenset(lists["given"]), frozenset(lists["family"])


def find(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are names written in a caseless script, by the rules above."""
    if _CASELESS.search(text) is None:
        return []
    given, family = names()
    found = []
    for match in _EAST_ASIAN_RUN.finditer(text):
        parts = match.group().replace("\u3000", " ").split(" ")
        letters = "".join(parts)
        if 2 <= len(letters) <= 6 and (_an_east_asian_name(letters, given, family) or _a_name_by_its_form(parts)):
            found.append((match.start(), match.end()))
    for match in _SPACED_RUN.finditer(text):
        words = match.group().split()
        if len(words) <= 4 and any(
            len(word) > 1 and (_key(word) in given or _key(word) in family) for word in words
        ):
            found.append((match.start(), match.end()))
    return found


def _an_east_asian_name(letters: str, given: frozenset[str], family: frozenset[str]) -> bool:
    """A listed surname of 1 to 3 letters and 1 to 3 letters after it, or 1 to 3 letters and a listed given name."""
    return any(
        (len(letters) - cut in (1, 2, 3) and letters[:cut] in family) or (cut < len(letters) and letters[cut:] in given)
        for cut in (1, 2, 3)
    )


_HANGUL = regex.compile(r"\p{Hangul}{3}")
_HAN = regex.compile(r"[\p{Han}\u3005]{1,3}")
_HAN_OR_KANA = regex.compile(r"[\p{Han}\u3005\p{Hiragana}\p{Katakana}]{1,4}")
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")
_PLACE_SUFFIXES = frozenset("시군구도동읍면리")


def _a_name_by_its_form(parts: list[str]) -> bool:
    """Three Hangul syllables alone (most Korean names: "향재형"), or a kanji surname, a space and a given name
    with kana in it (Japanese: "真行寺 たくや")."""
    if len(parts) == 1:
        # not a place: "수원시", "양평군" (a city's, a county's... suffix)
        return _HANGUL.fullmatch(parts[0]) is not None and parts[0][-1] not in _PLACE_SUFFIXES
    return (
        _HAN.fullmatch(parts[0]) is not None
        and _HAN_OR_KANA.fullmatch(parts[1]) is not None
        and _KANA.search(parts[1]) is not None
    )


def build_recognizer() -> EntityRecognizer:
    """A Presidio ``EntityRecognizer`` for :func:`find`."""
    from presidio_analyzer import EntityRecognizer, RecognizerResult

    class _Recognizer(EntityRecognizer):  # type: ignore[misc]
        def load(self) -> None:
            return None

        def analyze(
            self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
        ) -> list[RecognizerResult]:
            if PERSON not in entities:
                return []
            return [RecognizerResult(PERSON, start, end, SCORE) for start, end in find(text)]

    return _Recognizer(supported_entities=[PERSON], name="ScriptNameRecognizer", supported_language="en")
