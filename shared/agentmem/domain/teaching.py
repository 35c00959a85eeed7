"""When two editors' comments teach the same thing: the rule lessons are grouped and overruled by.

An embedding alone cannot tell a paraphrase from a lesson cut from the same template: "'Trail magic'
is our idiom; never flag it" and "'Hike your own hike' is our idiom; never flag it" are closer (MiniLM
cosine 0.67) than many real paraphrases (0.63), and "put the price before the description" is 0.98
from "... after the description". So two comments are the same teaching only when all of these hold:

1. their embeddings are close (`TEACHING_COSINE`);
2. they name the same specifics (`anchors`): quoted phrases, numbers, PII tokens and capitalised
   words inside a sentence: a lesson about 'trail magic' is not one about 'hike your own hike';
3. they have the same polarity: as many negations (not, never, don't, avoid, stop, omit, ...)
   modulo two, so "mention competitors" and "never mention competitors" stay apart;
4. one's content words contain the other's (`subject_words`, stemmed, without the generic words of
   editing advice): one editor may say more than the other, but neither replaces a word of the
   other ("first name" / "last name", "metric" / "imperial", "more detail" / "less detail").

Two comments *disagree* when they are about the same thing (rules 1, 2 and 4) with opposite polarity
(rule 3 fails): "mention competitors by name" and "never mention competitors by name". That is when a
👍 overrules a 👎 or the reverse (domain/lessons.py `group_lessons`); lessons that merely share a
subject, or agree, are never overruled.

The rule is deliberately strict: merging two distinct teachings loses one of them for good, while
leaving two paraphrases apart costs one bullet. docs/lesson-grouping.md measures it on
tests/fixtures/lesson_pairs.json (paraphrases and hard negatives written for it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

# Chosen on half A of the fixture; every negative there and in half B is below the other rules.
TEACHING_COSINE = 0.6

_WORD = re.compile(r"\{\{PII_[A-Z_]+_[0-9a-f]+_\d+\}\}|\d+(?:[.,:/-]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)?")
# A quote opens after a non-letter and closes before one, so the apostrophe of "don't" opens nothing.
_QUOTED = re.compile(r"(?<![^\W\d_])[\"'‘“]([^\"'’”]{2,80})[\"'’”](?![^\W\d_])")
_SENTENCE = re.compile(r"(?<=[.!?:;])\s+")


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_STOP = _word_set(
    "a an the of to in on at for with by from and or but as is are was were be been being it its this "
    "that these those there their they them we our us you your i me my he she his her which who whom "
    "what when where so than then very just also please one"
)
_NEGATIONS = _word_set(
    "not no never nothing none without cannot dont don't doesn't didn't won't can't stop avoid "
    "refrain omit remove drop"
)
# Words that bind to the next one: "too formal" and "more formal" are different advice.
_QUALIFIERS = _word_set("too more less most least")
# The vocabulary of giving advice, which paraphrases swap freely and which names no subject.
_GENERIC = _word_set(
    "use used using write written writing keep make made say said mention mentioned show shown share "
    "should must need needs needed always every all any each only actually really instead thing good "
    "great nice correct right wrong fine ok okay well works work call called answer answers answered "
    "reply replies response responses message messages text output run do does did done be have has "
    "had get got give gave put tell told flag flagged flagging add include own purpose intentional "
    "intentionally know love here up front"
)


@lru_cache(maxsize=1)
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=1)
def _generic_stems() -> frozenset[str]:
    return frozenset(_stemmer().stemWord(w) for w in _GENERIC)


@dataclass(frozen=True, slots=True)
class TeachingTerms:
    """What of a comment the rule compares besides its embedding (see the module docstring)."""

    anchors: frozenset[str]
    subject_words: frozenset[str]
    negations: int


@lru_cache(maxsize=8192)
def teaching_terms(comment: str) -> TeachingTerms:
    """The anchors, subject words and negation count of an editor's comment (cached: the indexer
    compares each new lesson with its agent's newest lessons)."""
    return TeachingTerms(_anchors(comment), frozenset(_subject_words(comment)), _negations(comment))


def comparable_terms(a: TeachingTerms, b: TeachingTerms) -> bool:
    """True when two comments name the same specifics and one's subject words contain the other's (rules
    2 and 4): only such comments can teach the same thing or disagree, whatever their embeddings say."""
    if a.anchors != b.anchors:
        return False
    shared = a.subject_words & b.subject_words
    return bool(shared) and (a.subject_words <= b.subject_words or b.subject_words <= a.subject_words)


def same_subject(a: TeachingTerms, b: TeachingTerms, cosine: float) -> bool:
    """True when two comments are about the same thing, whatever their polarity (rules 1, 2 and 4)."""
    return cosine >= TEACHING_COSINE and comparable_terms(a, b)


def same_teaching(a: TeachingTerms, b: TeachingTerms, cosine: float) -> bool:
    """True when two comments, whose embeddings have `cosine`, teach the same thing (module docstring)."""
    return a.negations % 2 == b.negations % 2 and same_subject(a, b, cosine)


def disagree(a: TeachingTerms, b: TeachingTerms, cosine: float) -> bool:
    """True when two comments are about the same thing and say the opposite of each other."""
    return a.negations % 2 != b.negations % 2 and same_subject(a, b, cosine)


def _tokens(text: str) -> list[str]:
    return [m.group(0) for m in _WORD.finditer(text)]


def _normal(word: str) -> str:
    lowered = word.lower().replace("’", "'")
    return lowered[:-2] if lowered.endswith("'s") else lowered


def _is_negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith("n't")


def _negations(text: str) -> int:
    return sum(1 for token in _tokens(text) if _is_negation(_normal(token)))


# Words repeat from comment to comment: each is stemmed once (a LoCoMo comment's terms 0.43 -> 0.11 ms of
# CPU after 1,000 others; the indexer reads every new lesson's terms to find the lessons it compares with).
@lru_cache(maxsize=16384)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word)) if word[:1].isalpha() else word


def _subject_words(text: str) -> list[str]:
    generic = _generic_stems()
    words: list[str] = []
    qualifier: str | None = None
    for token in _tokens(text):
        word = _normal(token)
        if _is_negation(word) or word in _STOP:
            continue
        if word in _QUALIFIERS:
            qualifier = word
            continue
        stem = _stem(word)
        if stem not in generic:
            words.append(f"{qualifier}_{stem}" if qualifier else stem)
        qualifier = None
    return words


def _anchors(text: str) -> frozenset[str]:
    anchors: set[str] = set()
    for quoted in _QUOTED.findall(text):
        anchors.update(_stem(_normal(t)) for t in _tokens(quoted) if not _is_negation(_normal(t)))
    for token in _tokens(text):
        if token[0].isdigit() or token.startswith("{{"):
            anchors.add(token.lower())
    for sentence in _SENTENCE.split(text):
        for token in _tokens(sentence)[1:]:
            if token[0].isupper():
                anchors.add(_stem(_normal(token)))
    return frozenset(anchors)
