"""The in-process lexical index: Okapi BM25 over short texts, kept in SQLite, scored in memory.

Documents are grouped by (tenant, kind, owner) like the vector index, and every statistic BM25 uses
(document count, average length, document frequencies) is computed inside one group: one user's
texts never change how another's rank, and a search reads only the caller's own documents.

Our own ~150 lines rather than a library: the groups are small (a user's turns, hundreds to a few
thousand), so dict postings score a query in about a millisecond, and `bm25s` would bring scipy
(tens of MB in every Lambda package) for matrix code these sizes do not need. SQLite FTS5 has BM25
too, but computes its statistics over the whole table, across owners.

The analyser: lower-cased words, English stop words removed, then the Snowball English (Porter2)
stemmer (`snowballstemmer`), the standard stemmer of English IR (OpenSearch's and Lucene's
`snowball`/`porter2` filters run the same algorithm); it replaced Harman's S-stemmer (plural endings
only), measured in docs/locomo-recall.md.
A personal-data token (`{{PII_PERSON_3f9a1c2b_2}}`) is one term, as OpenSearch's standard tokenizer
keeps it: split at its underscores it would leave the user's hash, shared by all of that user's
tokens, and a bare counter that matches any "2", so every masked name would match every other.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import snowballstemmer

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.domain.pii import TOKEN_PATTERN
from agentmem.domain.stop_words import APOSTROPHES, ENGLISH_STOP_WORDS

# Okapi BM25's usual parameters, also Lucene's and OpenSearch's defaults.
DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
# Distinct words whose stems are kept: a few MB.
STEM_CACHE_SIZE = 100_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS lexical_documents (
    tenant TEXT NOT NULL, kind TEXT NOT NULL, owner_id TEXT NOT NULL, item_id TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (tenant, kind, owner_id, item_id)
);
"""

STOP_WORDS = ENGLISH_STOP_WORDS
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_APOSTROPHES = str.maketrans(dict.fromkeys(APOSTROPHES, "'"))

GroupKey = tuple[str, str, str]


class LexicalHit(NamedTuple):
    """A matching document and its BM25 score (higher is better; always > 0)."""

    item_id: str
    score: float


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


class _Group:
    """One owner's documents: term counts per document and the postings that invert them."""

    def __init__(self) -> None:
        self.term_counts: dict[str, Counter[str]] = {}
        self.lengths: dict[str, int] = {}
        self.order: dict[str, int] = {}  # first-insertion position, the deterministic tie-breaker
        self.postings: dict[str, dict[str, int]] = {}
        self.total_length = 0
        self._next_position = 0

    def put(self, item_id: str, terms: Counter[str]) -> None:
        self.remove(item_id, keep_position=True)
        self.term_counts[item_id] = terms
        length = sum(terms.values())
        self.lengths[item_id] = length
        self.total_length += length
        if item_id not in self.order:
            self.order[item_id] = self._next_position
            self._next_position += 1
        for term, count in terms.items():
            self.postings.setdefault(term, {})[item_id] = count

    def remove(self, item_id: str, keep_position: bool = False) -> None:
        terms = self.term_counts.pop(item_id, None)
        if terms is None:
            return
        self.total_length -= self.lengths.pop(item_id)
        if not keep_position:
            self.order.pop(item_id, None)
        for term in terms:
            posting = self.postings[term]
            del posting[item_id]
            if not posting:
                del self.postings[term]

    def search(self, query_terms: set[str], k: int, k1: float, b: float) -> list[LexicalHit]:
        count = len(self.term_counts)
        if count == 0 or k <= 0:
            return []
        average_length = self.total_length / count or 1.0
        scores: dict[str, float] = {}
        for term in query_terms:
            posting = self.postings.get(term)
            if not posting:
                continue
            frequency = len(posting)
            # Lucene's idf: never negative, so a term in most documents still counts a little.
            idf = math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
            for item_id, tf in posting.items():
                norm = k1 * (1.0 - b + b * self.lengths[item_id] / average_length)
                scores[item_id] = scores.get(item_id, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
        best = sorted(scores.items(), key=lambda kv: (-kv[1], self.order[kv[0]]))[:k]
        return [LexicalHit(item_id, score) for item_id, score in best if score > 0]


class LocalBm25Index:
    """A BM25 index per (tenant, kind, owner) on SQLite + dicts. Loads every group on first use.

    `search` ignores how often a word repeats in the query (each distinct term counts once), so a
    question that happens to repeat a word does not outweigh its other words.
    """

    def __init__(self, path: Path, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B):
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError("BM25 needs k1 >= 0 and 0 <= b <= 1")
        self._db = SqliteDatabase(path, SCHEMA)
        self._k1 = k1
        self._b = b
        self._groups: dict[GroupKey, _Group] = {}
        self._lock = threading.RLock()
        self._loaded = False

    def close(self) -> None:
        self._db.close()

    def _load(self) -> None:
        if self._loaded:
            return
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT tenant, kind, owner_id, item_id, text FROM lexical_documents ORDER BY rowid"
            ).fetchall()
        for r in rows:
            self._group((r["tenant"], r["kind"], r["owner_id"])).put(r["item_id"], Counter(analyse(r["text"])))
        self._loaded = True

    def _group(self, key: GroupKey) -> _Group:
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group()
        return group

    def upsert(self, tenant: str, kind: str, owner_id: str, documents: Sequence[tuple[str, str]]) -> None:
        """Add or replace `(item_id, text)` documents of one owner."""
        if not documents:
            return
        analysed = [(item_id, text, Counter(analyse(text))) for item_id, text in documents]
        with self._lock:
            self._load()
            with self._db.transaction() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO lexical_documents VALUES (?,?,?,?,?)",
                    [(tenant, kind, owner_id, item_id, text) for item_id, text, _ in analysed],
                )
            group = self._group((tenant, kind, owner_id))
            for item_id, _, terms in analysed:
                group.put(item_id, terms)

    def delete(self, tenant: str, kind: str, owner_id: str, item_ids: Sequence[str]) -> None:
        with self._lock:
            self._load()
            with self._db.transaction() as conn:
                conn.executemany(
                    "DELETE FROM lexical_documents WHERE tenant=? AND kind=? AND owner_id=? AND item_id=?",
                    [(tenant, kind, owner_id, item_id) for item_id in item_ids],
                )
            group = self._groups.get((tenant, kind, owner_id))
            if group:
                for item_id in item_ids:
                    group.remove(item_id)

    def delete_owner(self, tenant: str, kind: str, owner_id: str) -> None:
        """Remove every document of one owner (erasing a user)."""
        with self._lock:
            self._load()
            with self._db.transaction() as conn:
                conn.execute(
                    "DELETE FROM lexical_documents WHERE tenant=? AND kind=? AND owner_id=?",
                    (tenant, kind, owner_id),
                )
            self._groups.pop((tenant, kind, owner_id), None)

    def search(self, tenant: str, kind: str, owner_id: str, query: str, k: int) -> list[LexicalHit]:
        """The `k` best-scoring documents of one owner that share a term with `query`, best first."""
        terms = set(analyse(query))
        with self._lock:
            self._load()
            group = self._groups.get((tenant, kind, owner_id))
            if group is None or not terms:
                return []
            return group.search(terms, k, self._k1, self._b)
