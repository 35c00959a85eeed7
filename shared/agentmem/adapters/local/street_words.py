"""The words that name a street, in the ways Faker's address providers of many countries write them.

Faker (MIT, https://github.com/joke2k/faker) keeps per-locale lists of street types
(``faker.providers.address.<locale>.Provider``: ``street_suffixes``, ``street_prefixes`` and their
``_long`` / ``_short`` forms) and of the units before a street (``secondary_address_formats``), and
says in ``street_name_formats`` how a locale writes them: a word before the name ("Rua", "Privada",
"đường"), a word after it ("Gully", "Foreshore"), or a suffix fused to it ("Berntsen" + "faret"); a
locale whose formats spell whole street names out has its types placed both ways ("Varšavská ulica",
"Avenija Lička"), and a fused suffix is also a word of its own ("Ernst Meyers Gade"). They are read
from the installed package on first use; ``street_address`` adds them to its own lists.
Only Latin-script single words are kept, and not the Malaysian provider's "suffixes", which are place
names ("Bukit Bintang").
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from agentmem.adapters.local.word_cache import WordLists, cached_word_lists

_SKIPPED_LOCALES = frozenset({"en_MS"})
_WORD = re.compile(r"[^\W\d_][\w.'’\-]*", re.UNICODE)


@dataclass(frozen=True)
class StreetWords:
    """Street types by where a locale writes them, and the units written before a street."""

    before: tuple[str, ...]  # "Rua", "Privada", "đường": before the street's name
    after: tuple[str, ...]  # "Gully", "Foreshore", "utca": a word after it
    fused: tuple[str, ...]  # "faret", "lei", "engen": glued to its end
    units: tuple[str, ...]  # "Studio", "Level", "Piano": before the number of a flat or floor


def _latin(word: str) -> bool:
    return all(not char.isalpha() or char.isascii() or "LATIN" in unicodedata.name(char, "") for char in word)


def _single_words(values: object) -> set[str]:
    if isinstance(values, dict):
        values = list(values)
    if not isinstance(values, (list, tuple, set, frozenset)):
        return set()
    return {
        value.strip() for value in values
        if isinstance(value, str) and _WORD.fullmatch(value.strip()) and _latin(value) and len(value.strip()) > 1
    }


def _places(formats: list[str], kind: str) -> set[str]:
    """Where a locale's formats put its street prefixes or suffixes: "before" a name placeholder, "after"
    one with a space, or "fused" to it ("{{last_name}}{{street_suffix}}")."""
    found: set[str] = set()
    for pattern in formats:
        for match in re.finditer(rf"{{{{street_{kind}\w*}}}}", pattern):
            if pattern[: match.start()].endswith("}}"):
                found.add("fused")
            elif pattern[match.end() :].startswith(" {{"):
                found.add("before")
            elif pattern[: match.start()].endswith(" "):
                found.add("after")
    return found


@functools.cache
def _english() -> frozenset[str]:
    from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words

    return wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)


@functools.cache
def street_words() -> StreetWords:
    """The street words, derived by `derive_street_words` once and kept in the cache folder (`word_cache`)."""

    def derive() -> WordLists:
        words = derive_street_words()
        return {"before": list(words.before), "after": list(words.after), "fused": list(words.fused),
                "units": list(words.units)}

    from agentmem.adapters.local import english_words
    from agentmem.adapters.local.spacy_pipeline import default_model_dir

    sources = [Path(__file__), Path(english_words.__file__), default_model_dir() / "meta.json"]
    lists = cached_word_lists("street-words", sources, ("faker", "spacy"), derive)
    return StreetWords(before=tuple(lists["before"]), after=tuple(lists["after"]), fused=tuple(lists["fused"]),
                       units=tuple(lists["units"]))


def derive_street_words() -> StreetWords:
    """Read every locale of ``faker.providers.address``."""
    import faker.providers.address as address

    before: set[str] = set()
    after: set[str] = set()
    fused: set[str] = set()
    units: set[str] = set()
    for module_info in pkgutil.iter_modules(address.__path__):
        if module_info.name in _SKIPPED_LOCALES:
            continue
        provider = importlib.import_module(f"{address.__name__}.{module_info.name}").Provider
        formats = [*getattr(provider, "street_name_formats", ()), *getattr(provider, "street_address_formats", ())]
        places = {kind: _places(formats, kind) for kind in ("prefix", "suffix")}
        for attribute in dir(provider):
            kind = "prefix" if attribute.startswith("street_prefixes") else "suffix"
            if not attribute.startswith(("street_prefixes", "street_suffixes")):
                continue
            words = _single_words(getattr(provider, attribute, None))
            if "before" in places[kind]:
                before |= words
            if "after" in places[kind]:
                after |= words
            if "fused" in places[kind]:
                fused |= {word for word in words if word.islower()}
                # Written apart and capitalised too: "Ernst Meyers Gade", "Henrik Spans Vej".
                after |= {word.capitalize() for word in words if len(word) > 2 and word not in _english()}
            if not places[kind]:
                # Formats that spell out whole street names ("{{street_name}}") do not say where the
                # locale's street types go: lower case after the name or before it, capitalised before it
                # ("Varšavská ulica 805", "491 phố Huỳnh Văn Bánh", "Avenija Lička 1091"), words that are
                # not English words only ("put" is).
                unplaced = {word for word in words if word.islower() and word.rstrip(".") not in _english()}
                after |= unplaced
                before |= unplaced | {word.capitalize() for word in unplaced}
        for pattern in getattr(provider, "secondary_address_formats", ()):
            head = re.split(r"[#?%@{]", pattern, maxsplit=1)[0].strip()
            if head and _WORD.fullmatch(head) and _latin(head):
                units.add(head)
    return StreetWords(
        before=tuple(sorted(before, key=lambda w: (-len(w), w))),
        after=tuple(sorted(after, key=lambda w: (-len(w), w))),
        fused=tuple(sorted(fused, key=lambda w: (-len(w), w))),
        units=tuple(sorted(units, key=lambda w: (-len(w), w))),
    )
