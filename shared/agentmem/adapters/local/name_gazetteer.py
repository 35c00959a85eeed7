"""First and last names of many languages, for telling a person's name from another capitalised word.

The names are those of Faker's person providers (MIT, https://github.com/joke2k/faker): per-locale lists
of common given names and surnames for about 80 locales (``faker.providers.person.<locale>``), which
Faker's maintainers compile from national statistics offices and similar public lists. Only the
Latin-script ones are kept (the English pipeline reads Latin script; the Japanese and Chinese
providers' romanised names are included). They are read from the installed package on first use, in
about half a second, and held as two sets of case-folded words (about 21,000 given names and 26,000
surnames, a few MB; kept in the cache folder after, see ``word_cache``); nothing is downloaded.

Words are compared Unicode-normalised (NFC, case-folded), and a word written with diacritics is also
looked up without them, so "Ciarán", "ciarán" and "CIARÁN" are one key and "Adébáyọ̀" finds "Adebayo".

A word that is also one of spaCy's English stop words ("will", "may", "van") or the English name of a
month or a weekday ("June", "Sunday") is left out of both sets: alone it is far more often the word.
"""

from __future__ import annotations

import calendar
import functools
import importlib
import pkgutil
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agentmem.adapters.local.word_cache import WordLists, cached_word_lists

RARE_BELOW = 3
_lock = threading.Lock()
_gazetteer: NameGazetteer | None = None


@dataclass(frozen=True)
class NameGazetteer:
    """Case-folded given names and surnames."""

    first: frozenset[str]
    last: frozenset[str]
    # Names on the lists of fewer than RARE_BELOW locales: "lemon", "river", "friend" are names somewhere.
    rare: frozenset[str] = frozenset()

    def is_first(self, word: str) -> bool:
        """Whether ``word`` (any case, a trailing period ignored) is a known given name."""
        return any(key in self.first for key in _keys(word))

    def is_last(self, word: str) -> bool:
        """Whether ``word`` (any case, a trailing period ignored) is a known surname, or a double-barrelled
        one whose every part is ("Adeyemi-Okafor", "Ortiz-Gómez")."""
        return any(key in self.last for key in _keys(word)) or self._double_barrelled(word)

    def is_name(self, word: str) -> bool:
        """A given name or a surname."""
        return any(key in self.first or key in self.last for key in _keys(word)) or self._double_barrelled(word)

    def _double_barrelled(self, word: str) -> bool:
        parts = word.split("-")
        return len(parts) == 2 and all(len(part) > 1 and any(key in self.last for key in _keys(part)) for part in parts)

    def is_rare(self, word: str) -> bool:
        """Whether ``word`` is a name of fewer than ``RARE_BELOW`` of Faker's locales ("Lemon", "River")."""
        return _key(word) in self.rare


def _key(word: str) -> str:
    return unicodedata.normalize("NFC", word.rstrip(".").replace("’", "'").casefold())


def _keys(word: str) -> tuple[str, ...]:
    """The word as written, then without its diacritics if it has any.

    Only a word written with diacritics is folded: "Adébáyọ̀" finds "Adebayo", but "Bot" does not find
    Vietnamese "Bốt" (folding the gazetteer would make hundreds of English words names).
    """
    key = _key(word)
    folded = fold(key)
    return (key,) if folded == key else (key, folded)


def fold(word: str) -> str:
    """``word`` case-folded without its diacritics: "Olúwaṣeun" -> "oluwaseun", "Ærøe" -> "ærøe"."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def _is_latin(word: str) -> bool:
    return all(not char.isalpha() or char.isascii() or "LATIN" in unicodedata.name(char, "") for char in word)


def _strings(value: object) -> Iterator[str]:
    """The strings in a provider attribute: a list, a weighted dict, or tuples (kanji, kana, romanised)."""
    if not isinstance(value, (dict, list, tuple, set, frozenset)):
        return
    for item in value:
        if isinstance(item, str):
            yield item
        elif isinstance(item, tuple):
            yield from (part for part in item if isinstance(part, str))


@functools.cache
def ordinary_words() -> frozenset[str]:
    """spaCy's English stop words and the English names of months and weekdays, case-folded."""
    from spacy.lang.en.stop_words import STOP_WORDS

    calendar_words = [*calendar.month_name[1:], *calendar.month_abbr[1:], *calendar.day_name, *calendar.day_abbr]
    return frozenset(word.casefold() for word in (*STOP_WORDS, *calendar_words))


def _words(names: Iterable[str], excluded: frozenset[str]) -> frozenset[str]:
    words = {part for name in names for part in name.split()}
    return frozenset(
        _key(word) for word in words if len(word) > 1 and _is_latin(word) and _key(word) not in excluded
    )


def load_gazetteer() -> NameGazetteer:
    """Read every locale of ``faker.providers.person`` (given, middle and family names)."""
    import faker.providers.person as person

    first: list[str] = []
    last: list[str] = []
    locales: Counter[str] = Counter()
    for module_info in pkgutil.iter_modules(person.__path__):
        provider = importlib.import_module(f"{person.__name__}.{module_info.name}").Provider
        names: list[str] = []
        for attribute in dir(provider):
            if attribute.startswith("_") or "kana" in attribute or attribute == "language_names":
                continue
            if "names" not in attribute and "pairs" not in attribute:
                continue
            target = first if attribute.startswith(("first", "middle")) else last
            strings = list(_strings(getattr(provider, attribute)))
            target.extend(strings)
            names.extend(strings)
        locales.update({_key(part) for name in names for part in name.split()})
    excluded = ordinary_words()
    return NameGazetteer(
        first=_words(first, excluded),
        last=_words(last, excluded),
        rare=frozenset(word for word, count in locales.items() if count < RARE_BELOW),
    )


def shared_gazetteer() -> NameGazetteer:
    """The process's gazetteer, read on first call."""
    global _gazetteer
    if _gazetteer is not None:
        return _gazetteer
    with _lock:
        if _gazetteer is None:
            _gazetteer = _cached_gazetteer()
        return _gazetteer


def _cached_gazetteer() -> NameGazetteer:
    """`load_gazetteer`'s sets, kept in the cache folder (`word_cache`): a server then never imports Faker."""

    def derive() -> WordLists:
        gazetteer = load_gazetteer()
        return {"first": sorted(gazetteer.first), "last": sorted(gazetteer.last), "rare": sorted(gazetteer.rare)}

    lists = cached_word_lists("name-gazetteer", [Path(__file__)], ("faker", "spacy"), derive)
    return NameGazetteer(first=frozenset(lists["first"]), last=frozenset(lists["last"]), rare=frozenset(lists["rare"]))
