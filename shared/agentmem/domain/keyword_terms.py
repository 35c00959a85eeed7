"""The keyword side's analyser: what a text's index terms are, for every backend that scores BM25 itself.

The local index (`adapters/local/bm25_index.py`) and the S3 Vectors mode's index in DynamoDB
(`adapters/aws/dynamodb_lexical.py`) both call `analyse`, so a question and a turn yield the same terms
in either (OpenSearch analyses inside the server, with the same stop words and stemmer:
`adapters/aws/vector_mapping.py`).

Lower-cased words, English stop words removed, then the Snowball English (Porter2) stemmer
(`snowballstemmer`), the standard stemmer of English IR (OpenSearch's and Lucene's `snowball`/`porter2`
filters run the same algorithm); it replaced Harman's S-stemmer (plural endings only), measured in
docs/locomo-recall.md.
A personal-data token (`{{PII_PERSON_3f9a1c2b_2}}`) is one term, as OpenSearch's standard tokenizer
keeps it: split at its underscores it would leave the user's hash, shared by all of that user's
tokens, and a bare counter that matches any "2", so every masked name would match every other.
"""

from __future__ import annotations

import functools
import re
import threading

import snowballstemmer

from agentmem.domain.pii import TOKEN_PATTERN
from agentmem.domain.stop_words import APOSTROPHES, ENGLISH_STOP_WORDS

# Distinct words whose stems are kept: a few MB.
STEM_CACHE_SIZE = 100_000

STOP_WORDS = ENGLISH_STOP_WORDS
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_APOSTROPHES = str.maketrans(dict.fromkeys(APOSTROPHES, "'"))

_stemmers = threading.local()


@functools.lru_cache(maxsize=STEM_CACHE_SIZE)
def stem(word: str) -> str:
    """The Snowball English (Porter2) stem of a lower-cased word: "adopting", "adoption" -> "adopt".

    Pure Python at 80-170 us a word on this machine, so stems are cached (a user's vocabulary is a few
    thousand words); a stemmer object keeps state while it works, so each thread has its own.
    """
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def analyse(text: str) -> list[str]:
    """The index terms of `text`, in order: words lower-cased, stop words dropped, then stemmed.

    A word's clitic ("Caroline's", "we'll") is cut off, so the possessive matches the bare name. A
    personal-data token is one term, whole: the same value of one user is the same term everywhere.
    """
    terms: list[str] = []
    cursor = 0
    for token in TOKEN_PATTERN.finditer(text):
        terms.extend(_words(text[cursor : token.start()]))
        terms.append(token.group(0).strip("{}").casefold())
        cursor = token.end()
    terms.extend(_words(text[cursor:]))
    return terms


def _words(text: str) -> list[str]:
    terms = []
    for word in _WORD.findall(text.casefold().translate(_APOSTROPHES)):
        if word in STOP_WORDS:
            continue
        word = word.split("'", 1)[0]
        if word and word not in STOP_WORDS:
            terms.append(stem(word))
    return terms
