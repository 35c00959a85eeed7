"""Fusing ranked lists from different retrievers (dense vectors, lexical BM25) into one ranking.

Scores from different retrievers live on different scales (a cosine in [-1, 1], a BM25 score that
grows with the query's length), so each list is normalised before the lists are averaged.

The default, `fuse_max_normalised`, divides each list by its best score: both scores have a natural
zero (no shared term; no semantic relation), and dividing keeps their ratios. The best score does
not change with how deep a list was read, so neither does the fused score of an item both lists
hold. That is the "theoretical min-max" normalisation of Bruch, Gai and Ingber (ACM TOIS 2023) with
0 as the minimum. Plain min-max (OpenSearch's default) moves
its zero to whatever item came last, so reading 50 or 100 candidates changes the ranking; and
reciprocal-rank fusion ignores scores altogether. Both are kept for comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# Cormack, Clarke and Buettcher (SIGIR 2009): the constant that damps the weight of the first ranks.
DEFAULT_RRF_K = 60


@dataclass(frozen=True)
class FusedHit:
    """An item of the fused ranking and its combined score (higher is better)."""

    item_id: str
    score: float


@dataclass(frozen=True)
class ScoreList:
    """One retriever's answer: `{item_id: score}`, higher is better.

    `complete` is False when the retriever stopped at a depth and more items could have followed:
    an item missing from such a list scored at most the list's lowest score. When True, a missing
    item is one the retriever found no evidence for at all.
    """

    scores: Mapping[str, float]
    complete: bool = True


def _check_weights(count: int, weights: Sequence[float] | None) -> Sequence[float]:
    if weights is None:
        return [1.0] * count
    if len(weights) != count:
        raise ValueError(f"{len(weights)} weights for {count} lists")
    if any(weight < 0 for weight in weights) or not any(weight > 0 for weight in weights):
        raise ValueError("weights must be non-negative and not all zero")
    return weights


def _first_seen(lists: Sequence[Mapping[str, float]]) -> list[str]:
    return list(dict.fromkeys(item_id for scores in lists for item_id in scores))


def _ranked(totals: Mapping[str, float]) -> list[FusedHit]:
    # `totals` is in first-seen order and sorted() is stable, so ties keep that order (earlier
    # lists first, then each list's own order): the ranking is deterministic.
    return [FusedHit(item_id, score) for item_id, score in sorted(totals.items(), key=lambda kv: -kv[1])]


def max_normalise(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores divided by the best one, negatives raised to 0: the best becomes 1, "no match" stays 0.

    A list whose best score is not positive normalises to all zeros.
    """
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return dict.fromkeys(scores, 0.0)
    return {item_id: max(score, 0.0) / best for item_id, score in scores.items()}


def fuse_max_normalised(lists: Sequence[ScoreList], weights: Sequence[float] | None = None) -> list[FusedHit]:
    """One ranking from several score lists: the weighted mean of their max-normalised scores.

    An item missing from a list counts that list's lowest normalised score when the list is not
    `complete` (its true score is no higher), and 0 when it is. Equal weights by default; the mean
    divides by the sum of weights, so fused scores stay in [0, 1]. Ties keep first-seen order.
    """
    weights = _check_weights(len(lists), weights)
    total_weight = float(sum(weights))
    items = _first_seen([entry.scores for entry in lists])
    totals = dict.fromkeys(items, 0.0)
    for entry, weight in zip(lists, weights, strict=True):
        normalised = max_normalise(entry.scores)
        floor = 0.0 if entry.complete or not normalised else min(normalised.values())
        for item_id in items:
            totals[item_id] += weight * normalised.get(item_id, floor) / total_weight
    return _ranked(totals)


def min_max_normalise(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores rescaled linearly onto [0, 1]: the best becomes 1, the worst 0 (all 1.0 when all equal)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high <= low:
        return dict.fromkeys(scores, 1.0)
    return {item_id: (score - low) / (high - low) for item_id, score in scores.items()}


def fuse_min_max(lists: Sequence[ScoreList], weights: Sequence[float] | None = None) -> list[FusedHit]:
    """OpenSearch's hybrid rule: the weighted mean of min-max normalised scores, a missing item counting 0.

    Kept for comparison: its result depends on how deep each list was read.
    """
    weights = _check_weights(len(lists), weights)
    total_weight = float(sum(weights))
    totals = dict.fromkeys(_first_seen([entry.scores for entry in lists]), 0.0)
    for entry, weight in zip(lists, weights, strict=True):
        for item_id, value in min_max_normalise(entry.scores).items():
            totals[item_id] += weight * value / total_weight
    return _ranked(totals)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: int = DEFAULT_RRF_K, weights: Sequence[float] | None = None
) -> list[FusedHit]:
    """One ranking from several ranked id lists: each item scores sum(weight / (k + rank)), rank from 1.

    An item missing from a list adds nothing for it; an id repeated inside one list counts at its
    first (best) rank only. Ties keep first-seen order, earlier lists first.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    weights = _check_weights(len(rankings), weights)
    totals: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, item_id in enumerate(ranking, start=1):
            if item_id in seen:
                continue
            seen.add(item_id)
            totals[item_id] = totals.get(item_id, 0.0) + weight / (k + rank)
    return _ranked(totals)


def with_neighbours(
    hits: Sequence[FusedHit], adjacent: Callable[[str], Sequence[str]], weight: float
) -> list[FusedHit]:
    """`hits` re-ranked with each item's score raised by `weight` times its best neighbour's score.

    `adjacent(item_id)` names the items next to it (in a conversation: the turns just before and
    after); a neighbour missing from `hits` adds nothing. An answer often spans two turns ("Did you
    go?" / "Yes, with my sister"), so a turn next to a strong match is likelier to be evidence too.
    Scores are read from `hits` as given, so the result does not depend on the order of updates.
    """
    if weight < 0:
        raise ValueError("weight must be >= 0")
    score = {hit.item_id: hit.score for hit in hits}
    totals = {
        hit.item_id: hit.score + weight * max((score.get(other, 0.0) for other in adjacent(hit.item_id)), default=0.0)
        for hit in hits
    }
    return _ranked(totals)


def with_group_context(
    hits: Sequence[FusedHit],
    group: Callable[[str], str],
    weight: float,
    *,
    top: int = 2,
    basis: Sequence[FusedHit] | None = None,
) -> list[FusedHit]:
    """`hits` re-ranked with each item's score raised by `weight` times its group's share of the best score.

    A group's score is the sum of its `top` best scores in `basis` (`hits` when None); an item adds
    `weight` x (its group's score / the best group's) x the best score in `basis`, so the step does not
    depend on the scale of the scores. `group(item_id)` names an item's group (in a conversation: the
    session). A question's evidence is often several turns of one session, so a session that matches in
    several turns lifts the turns of it that match less. An item whose group has no score in `basis`
    adds nothing.
    """
    if weight < 0:
        raise ValueError("weight must be >= 0")
    if top < 1:
        raise ValueError("top must be >= 1")
    members: dict[str, list[float]] = {}
    for hit in hits if basis is None else basis:
        members.setdefault(group(hit.item_id), []).append(hit.score)
    totals = {name: sum(sorted(scores, reverse=True)[:top]) for name, scores in members.items()}
    best = max(totals.values(), default=0.0)
    if best <= 0:
        return _ranked({hit.item_id: hit.score for hit in hits})
    step = weight * max(max(scores) for scores in members.values()) / best
    return _ranked({hit.item_id: hit.score + step * totals.get(group(hit.item_id), 0.0) for hit in hits})



def with_priors(hits: Sequence[FusedHit], factors: Mapping[str, float]) -> list[FusedHit]:
    """`hits` re-ranked with each score multiplied by its item's prior factor (1 for an item without one).

    A prior says how likely an item is to be relevant before any query (for a turn of a conversation:
    `agentmem.domain.turn_prior`). Scores are scaled, not shifted: an item with no match stays at 0
    whatever its prior. Ties keep the order of `hits`.
    """
    if any(factor < 0 for factor in factors.values()):
        raise ValueError("prior factors must be >= 0")
    return _ranked({hit.item_id: hit.score * factors.get(hit.item_id, 1.0) for hit in hits})
