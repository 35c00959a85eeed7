"""How much more often an English word is written in lower case than capitalised: "wolf" is a word, "Thompson" a name.

A capitalised word before a noun may name a kind of thing ("Wolf jam", "Lemon tiles") or a person ("the
Thompson bowl", "the Johnson novel", a PERSON in Presidio's labels). Which one it is mostly shows in how
people write the word elsewhere: a common noun is written in lower case far more often than capitalised
(its capitalised uses are mostly at the start of a sentence), a surname almost never.

The counts are spaCy's English ``lexeme_prob`` table, shipped by Explosion in ``spacy-lookups-data`` (MIT;
the tables spaCy's v2.2 English models carried): smoothed log-probabilities of the 1M most frequent
case-sensitive tokens, which spaCy's authors estimated on the Reddit comment corpus. Only the words that
matter here are kept: WordNet's one-word lemmas (``english_words``) in lower case and capitalised, read once
on first use (about 1 s, under 1 MB kept); nothing is downloaded.

``case_ratio("wolf")`` is ln(P("wolf") / P("Wolf")): +0.31 for "wolf", +1.18 for "lemon", +3.0 for
"friend"; -0.55 for "baker", -2.94 for "thompson", -3.11 for "georgia".
"""

from __future__ import annotations

import functools
import gzip
import re
import threading
from dataclasses import dataclass
from importlib import resources

import numpy as np

from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words

# ln(P(lower) / P(Capitalised)) at or above which a word is mostly a common word: written in lower case at
# least e^-1 (37%) as often as capitalised. Common nouns sit above 0 (their capitalised uses open
# sentences), surnames and places at -1.5 and below ("miller" -2.1, "smith" -2.0, "georgia" -3.1);
# words that are both ("baker" -0.55, "knight" -0.35, "rose" -0.24) fall between.
USUALLY_LOWER_CASE = -1.0
# ln P at or above which a word WordNet lacks is one people write ("nginx" -15.2, "terraform" -15.5, "numpy"
# -16.0), when they write it in lower case at least as often as capitalised; rarer entries are mostly names
# and typos ("caner" -17.8, "rijk" -18.6).
WRITTEN_WORD = -16.5
_PACKAGE = "spacy_lookups_data"
_TABLE = ("data", "en_lexeme_prob.json.gz")
# One entry of the table's flat JSON object: "word":-12.34 (keys with escapes are no WordNet lemma).
_ENTRY = re.compile(r'"([^"\\]+)":\s*(-?[0-9.]+(?:[eE]-?[0-9]+)?)')
_lock = threading.Lock()


@dataclass(frozen=True)
class _Ratios:
    """ln P(lower case) - ln P(Capitalised) per word, keyed by the word's hash in this process: 55k words in
    0.7 MB, where a dict of them held ~16 MB of the server's heap."""

    hashes: np.ndarray  # sorted int64
    ratios: np.ndarray  # float64, in the order of `hashes`
    # sorted int64 hashes of the words WordNet lacks that are mostly written in lower case (`WRITTEN_WORD`):
    # 29k words in 0.23 MB
    written: np.ndarray

    def holds_written(self, word: str) -> bool:
        key = hash(word)
        at = int(np.searchsorted(self.written, key))
        return at < len(self.written) and bool(self.written[at] == key)

    def get(self, word: str) -> float | None:
        key = hash(word)
        at = int(np.searchsorted(self.hashes, key))
        if at < len(self.hashes) and self.hashes[at] == key:
            return float(self.ratios[at])
        return None


@functools.cache
def _case_ratios() -> _Ratios:
    """The ratios of the lower-case WordNet words the table holds in either form.

    The table (30 MB unpacked) is read a line at a time, so no copy of it stays in the heap.
    """
    with _lock:
        english = wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)
        path = resources.files(_PACKAGE).joinpath(*_TABLE)
        lower: dict[int, float] = {}
        capitalised: dict[int, float] = {}
        other_lower: dict[int, float] = {}
        other_capitalised: dict[int, float] = {}
        with path.open("rb") as packed, gzip.open(packed, "rt", encoding="utf-8") as lines:
            for line in lines:
                match = _ENTRY.search(line)
                if match is None:
                    continue
                word = match.group(1)
                if word in english:
                    lower[hash(word)] = float(match.group(2))
                elif word[:1].isupper() and word[1:].islower() and word.lower() in english:
                    capitalised[hash(word.lower())] = float(match.group(2))
                elif (probability := float(match.group(2))) >= WRITTEN_WORD and word.isalpha():
                    if word.islower():
                        other_lower[hash(word)] = probability
                    elif word[0].isupper() and word[1:].islower():
                        other_capitalised[hash(word.lower())] = probability
        # A form the table leaves out is rarer than its rarest entry, which stands in for it.
        floor = min(min(lower.values(), default=0.0), min(capitalised.values(), default=0.0))
        hashes = np.array(sorted(lower.keys() | capitalised.keys()), dtype=np.int64)
        ratios = np.array([lower.get(h, floor) - capitalised.get(h, floor) for h in hashes.tolist()], dtype=np.float64)
        written = np.array(
            sorted(key for key, probability in other_lower.items() if probability >= other_capitalised.get(key, -1e9)),
            dtype=np.int64,
        )
        return _Ratios(hashes, ratios, written)


def case_ratio(word: str) -> float | None:
    """ln(P(lower case) / P(Capitalised)) of ``word`` in English text (a form the table leaves out counted as
    its rarest entry), or None for a word it holds in neither form or no dictionary knows."""
    return _case_ratios().get(word.casefold())


def usually_lower_case(word: str) -> bool:
    """True when ``word`` is mostly a common word, written in lower case ("Wolf", "Lemon", "Baker"); False for
    a word mostly written capitalised, a name or a place ("Thompson", "Georgia"), or one not counted."""
    ratio = case_ratio(word)
    return ratio is not None and ratio >= USUALLY_LOWER_CASE


def written_in_lower_case(word: str) -> bool:
    """True when ``word``, which no dictionary holds, is one people write in lower case, at least as often as
    capitalised and not rarely ("nginx", "terraform", "numpy"): a word, not a name ("ratilainen" is in no
    form; "caner" is too rare to count)."""
    return _case_ratios().holds_written(word.casefold())
