"""Okapi BM25 over one owner's documents: the ranking both self-scoring keyword indexes share.

`LocalBm25Index` (SQLite + dicts) and `DynamoDbLexicalIndex` (segments in the tenant table) keep
their documents differently but rank through `rank`, so the same documents and query give the same
scores, in the same order, ties included, whichever backend holds them.

Every statistic (document count, average length, document frequencies) is the caller's group's
alone: one owner's texts never change how another's rank.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

# Okapi BM25's usual parameters, also Lucene's and OpenSearch's defaults.
DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


class LexicalHit(NamedTuple):
    """A matching document and its BM25 score (higher is better; always > 0)."""

    item_id: str
    score: float


def check_parameters(k1: float, b: float) -> None:
    """Refuse parameters BM25 is not defined for."""
    if k1 < 0 or not 0 <= b <= 1:
        raise ValueError("BM25 needs k1 >= 0 and 0 <= b <= 1")


def rank(
    query_terms: Iterable[str],
    *,
    count: int,
    total_length: int,
    postings: Callable[[str], Mapping[str, int] | None],
    lengths: Mapping[str, int],
    order: Mapping[str, int],
    k: int,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> list[LexicalHit]:
    """The `k` best documents for the distinct `query_terms`, best first, ties in `order` (lowest first).

    `count` documents of `total_length` terms in all; `postings(term)` maps the id of every document
    holding `term` to how often it does (None or empty when none does); `lengths` and `order` are
    each document's length in terms and its tie-breaking position (first insertion).
    """
    if count == 0 or k <= 0:
        return []
    average_length = total_length / count or 1.0
    scores: dict[str, float] = {}
    for term in query_terms:
        posting = postings(term)
        if not posting:
            continue
        frequency = len(posting)
        # Lucene's idf: never negative, so a term in most documents still counts a little.
        idf = math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
        for item_id, tf in posting.items():
            norm = k1 * (1.0 - b + b * lengths[item_id] / average_length)
            scores[item_id] = scores.get(item_id, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
    best = sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))[:k]
    return [LexicalHit(item_id, score) for item_id, score in best if score > 0]
