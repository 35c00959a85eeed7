"""Fusing dense and lexical result lists: max normalisation (the default), min-max and RRF."""

from __future__ import annotations

import pytest
from agentmem.domain.fusion import (
    DEFAULT_RRF_K,
    FusedHit,
    ScoreList,
    fuse_max_normalised,
    fuse_min_max,
    max_normalise,
    min_max_normalise,
    reciprocal_rank_fusion,
    with_group_context,
    with_neighbours,
    with_priors,
)
from hypothesis import given
from hypothesis import strategies as st


def ids(hits: list) -> list[str]:
    return [hit.item_id for hit in hits]


def test_max_normalise_maps_the_best_to_one_and_keeps_ratios() -> None:
    assert max_normalise({"a": 4.0, "b": 2.0, "c": 1.0}) == {"a": 1.0, "b": 0.5, "c": 0.25}


def test_max_normalise_raises_negative_scores_to_zero() -> None:
    assert max_normalise({"a": 0.5, "b": -0.25}) == {"a": 1.0, "b": 0.0}


def test_max_normalise_of_a_list_with_no_positive_score_is_all_zero() -> None:
    assert max_normalise({"a": -0.1, "b": 0.0}) == {"a": 0.0, "b": 0.0}
    assert max_normalise({}) == {}


def test_an_item_high_in_both_lists_beats_items_high_in_one() -> None:
    dense = ScoreList({"x": 0.9, "both": 0.8, "y": 0.1})
    lexical = ScoreList({"z": 10.0, "both": 9.0, "w": 1.0})
    fused = fuse_max_normalised([dense, lexical])
    assert fused[0].item_id == "both"
    assert fused[0].score == pytest.approx((0.8 / 0.9 + 0.9) / 2)


def test_an_item_missing_from_a_complete_list_counts_zero_there() -> None:
    fused = fuse_max_normalised([ScoreList({"a": 1.0, "b": 0.5}), ScoreList({"a": 2.0})])
    scores = {hit.item_id: hit.score for hit in fused}
    assert scores == {"a": pytest.approx(1.0), "b": pytest.approx(0.25)}


def test_an_item_missing_from_a_truncated_list_counts_that_lists_lowest_score() -> None:
    truncated = ScoreList({"a": 2.0, "c": 1.0}, complete=False)
    fused = fuse_max_normalised([ScoreList({"a": 1.0, "b": 0.5}), truncated])
    scores = {hit.item_id: hit.score for hit in fused}
    # b was not among the truncated list's candidates: it scored at most c's 1.0 / 2.0 there.
    assert scores["b"] == pytest.approx((0.5 + 0.5) / 2)
    assert scores["c"] == pytest.approx((0.0 + 0.5) / 2)


def test_weights_shift_the_ranking_towards_the_heavier_list() -> None:
    dense = ScoreList({"d": 1.0, "l": 0.2})
    lexical = ScoreList({"l": 5.0, "d": 1.0})
    assert ids(fuse_max_normalised([dense, lexical], weights=[3, 1]))[0] == "d"
    assert ids(fuse_max_normalised([dense, lexical], weights=[1, 3]))[0] == "l"


@pytest.mark.parametrize("weights", [[1.0], [0.0, 0.0], [-1.0, 2.0]])
def test_weights_must_match_the_lists_and_be_non_negative(weights: list[float]) -> None:
    with pytest.raises(ValueError):
        fuse_max_normalised([ScoreList({"a": 1.0}), ScoreList({"a": 1.0})], weights=weights)


def test_ties_keep_first_seen_order_earlier_lists_first() -> None:
    fused = fuse_max_normalised([ScoreList({"a": 1.0, "b": 1.0}), ScoreList({"c": 1.0, "b": 1.0, "a": 1.0})])
    assert ids(fused) == ["a", "b", "c"]


def test_fusing_no_lists_or_empty_lists_gives_nothing() -> None:
    assert fuse_max_normalised([ScoreList({}), ScoreList({})]) == []


score_maps = st.dictionaries(
    st.sampled_from([f"t{i}" for i in range(30)]), st.floats(0.01, 10.0, allow_nan=False), min_size=1
)


@given(score_maps, score_maps, st.integers(1, 30))
def test_max_fusion_scores_of_items_both_lists_returned_do_not_depend_on_depth(
    dense: dict[str, float], lexical: dict[str, float], depth: int
) -> None:
    def cut(scores: dict[str, float]) -> ScoreList:
        best = sorted(scores.items(), key=lambda kv: -kv[1])[:depth]
        return ScoreList(dict(best), complete=len(best) == len(scores))

    full = {hit.item_id: hit.score for hit in fuse_max_normalised([ScoreList(dense), ScoreList(lexical)])}
    shallow = fuse_max_normalised([cut(dense), cut(lexical)])
    seen_by_both = set(cut(dense).scores) & set(cut(lexical).scores)
    for hit in shallow:
        if hit.item_id in seen_by_both:
            assert hit.score == pytest.approx(full[hit.item_id])


def test_min_max_fusion_depends_on_how_deep_the_lists_were_read_and_max_fusion_does_not() -> None:
    # Why min-max is not the default: leaving out the weakest candidate flips the top two.
    dense = {"a": 0.9, "b": 0.8, "c": 0.2}
    lexical = {"b": 3.0, "a": 2.0, "c": 1.0}
    deep = [ScoreList(dense), ScoreList(lexical)]
    shallow = [ScoreList({"a": 0.9, "b": 0.8}, complete=False), ScoreList({"b": 3.0, "a": 2.0}, complete=False)]
    assert ids(fuse_min_max(deep))[:2] == ["b", "a"]
    assert ids(fuse_min_max(shallow)) == ["a", "b"]
    assert ids(fuse_max_normalised(deep))[:2] == ids(fuse_max_normalised(shallow)) == ["b", "a"]


def test_min_max_normalise_spans_zero_to_one_and_handles_ties() -> None:
    assert min_max_normalise({"a": 3.0, "b": 2.0, "c": 1.0}) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert min_max_normalise({"a": 2.0, "b": 2.0}) == {"a": 1.0, "b": 1.0}
    assert min_max_normalise({}) == {}


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "c"]])
    scores = {hit.item_id: hit.score for hit in fused}
    k = DEFAULT_RRF_K
    assert scores == {
        "a": pytest.approx(1 / (k + 1)),
        "b": pytest.approx(1 / (k + 2) + 1 / (k + 1)),
        "c": pytest.approx(1 / (k + 2)),
    }
    assert ids(fused) == ["b", "a", "c"]


def test_rrf_counts_a_repeated_id_once_at_its_best_rank() -> None:
    fused = reciprocal_rank_fusion([["a", "a", "b"]], k=0)
    assert {hit.item_id: hit.score for hit in fused} == {"a": 1.0, "b": pytest.approx(1 / 3)}


def test_rrf_rejects_a_negative_k() -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=-1)


# Neighbouring turns


def _adjacent(item_id: str) -> list[str]:
    number = int(item_id)
    return [str(number - 1), str(number + 1)]


def test_a_turn_next_to_a_strong_match_rises_above_an_isolated_weak_one() -> None:
    hits = [FusedHit("10", 1.0), FusedHit("30", 0.42), FusedHit("11", 0.40)]
    ranked = with_neighbours(hits, _adjacent, 0.2)
    assert [hit.item_id for hit in ranked] == ["10", "11", "30"]
    assert ranked[1].score == pytest.approx(0.40 + 0.2 * 1.0)
    assert ranked[0].score == pytest.approx(1.0 + 0.2 * 0.40)


def test_a_neighbour_outside_the_candidates_adds_nothing_and_weight_zero_changes_nothing() -> None:
    hits = [FusedHit("10", 0.9), FusedHit("20", 0.5)]
    assert with_neighbours(hits, _adjacent, 0.5) == hits
    close = [FusedHit("1", 0.9), FusedHit("5", 0.5), FusedHit("2", 0.45)]
    assert with_neighbours(close, _adjacent, 0.0) == close
    with pytest.raises(ValueError):
        with_neighbours(close, _adjacent, -0.1)


# Sessions


def _session(item_id: str) -> str:
    return item_id.split(":", 1)[0]


def test_a_turn_of_a_session_that_matches_twice_rises_above_an_equally_weak_turn_alone() -> None:
    hits = [FusedHit("S1:1", 1.0), FusedHit("S1:2", 0.8), FusedHit("S2:1", 0.3), FusedHit("S1:9", 0.3)]
    ranked = with_group_context(hits, _session, 0.3)
    assert ids(ranked) == ["S1:1", "S1:2", "S1:9", "S2:1"]
    # S1's score is its two best (1.0 + 0.8), the best session's: share 1.0; S2's is 0.3 / 1.8; best score 1.0.
    assert {hit.item_id: hit.score for hit in ranked}["S1:9"] == pytest.approx(0.3 + 0.3 * 1.0)
    assert {hit.item_id: hit.score for hit in ranked}["S2:1"] == pytest.approx(0.3 + 0.3 * 0.3 / 1.8)


def test_group_scores_are_read_from_the_basis_and_weight_zero_changes_nothing() -> None:
    hits = [FusedHit("S1:1", 0.9), FusedHit("S2:1", 0.85)]
    basis = [FusedHit("S1:1", 0.1), FusedHit("S2:1", 0.85), FusedHit("S2:2", 0.85)]
    assert ids(with_group_context(hits, _session, 0.5, basis=basis)) == ["S2:1", "S1:1"]
    assert with_group_context(hits, _session, 0.0) == hits
    assert with_group_context(hits, _session, 0.5, basis=[]) == hits
    with pytest.raises(ValueError):
        with_group_context(hits, _session, -0.1)
    with pytest.raises(ValueError):
        with_group_context(hits, _session, 0.1, top=0)


def test_the_session_step_scales_with_the_scores() -> None:
    hits = [FusedHit("S1:1", 1.0), FusedHit("S1:2", 0.8), FusedHit("S2:1", 0.5)]
    scaled = [FusedHit(hit.item_id, 10 * hit.score) for hit in hits]
    once = with_group_context(hits, _session, 0.3)
    tenfold = with_group_context(scaled, _session, 0.3)
    assert [hit.score * 10 for hit in once] == pytest.approx([hit.score for hit in tenfold])


# Priors


def test_a_prior_scales_each_score_and_re_ranks() -> None:
    hits = [FusedHit("short", 1.0), FusedHit("long", 0.8), FusedHit("none", 0.0)]
    ranked = with_priors(hits, {"short": 1.2, "long": 2.0, "none": 5.0})
    assert ids(ranked) == ["long", "short", "none"]
    assert ranked[0].score == pytest.approx(1.6)
    assert ranked[-1].score == 0.0  # no match stays no match, whatever the prior


def test_an_item_without_a_prior_keeps_its_score_and_a_negative_factor_is_refused() -> None:
    hits = [FusedHit("a", 0.9), FusedHit("b", 0.5)]
    assert with_priors(hits, {}) == hits
    with pytest.raises(ValueError):
        with_priors(hits, {"a": -0.1})
