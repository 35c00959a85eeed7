"""The in-process lexical index: Okapi BM25 over short texts, kept in SQLite, scored in memory.

Documents are grouped by (tenant, kind, owner) like the vector index, and every statistic BM25 uses
(document count, average length, document frequencies) is computed inside one group: one user's
texts never change how another's rank, and a search reads only the caller's own documents.

Our own ~150 lines rather than a library: the groups are small (a user's turns, hundreds to a few
thousand), so dict postings score a query in about a millisecond, and `bm25s` would bring scipy
(tens of MB in every Lambda package) for matrix code these sizes do not need. SQLite FTS5 has BM25
too, but computes its statistics over the whole table, across owners.

The analyser (`agentmem.domain.keyword_terms`) and the ranking (`agentmem.domain.bm25`) are shared with
the S3 Vectors mode's index in DynamoDB (`adapters/aws/dynamodb_lexical.py`), so both score alike.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from agentmem.adapters.local.sqlite_base import SqliteDatabase
from agentmem.domain.bm25 import DEFAULT_B, DEFAULT_K1, LexicalHit, check_parameters, rank
from agentmem.domain.keyword_terms import STEM_CACHE_SIZE, STOP_WORDS, analyse, stem

__all__ = [
    "DEFAULT_B", "DEFAULT_K1", "STEM_CACHE_SIZE", "STOP_WORDS", "LexicalHit", "LocalBm25Index", "analyse", "stem",
]

SCHEMA = """
CREATE TABLE IF NOT EXISTS lexical_documents (
    tenant TEXT NOT NULL, kind TEXT NOT NULL, owner_id TEXT NOT NULL, item_id TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (tenant, kind, owner_id, item_id)
);
"""

GroupKey = tuple[str, str, str]


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
        return rank(
            query_terms, count=len(self.term_counts), total_length=self.total_length, postings=self.postings.get,
            lengths=self.lengths, order=self.order, k=k, k1=k1, b=b,
        )


class LocalBm25Index:
    """A BM25 index per (tenant, kind, owner) on SQLite + dicts. Loads every group on first use.

    `search` ignores how often a word repeats in the query (each distinct term counts once), so a
    question that happens to repeat a word does not outweigh its other words.
    """

    def __init__(self, path: Path, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B):
        check_parameters(k1, b)
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
