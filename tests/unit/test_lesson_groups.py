"""Lessons that agree are one lesson: grouping near-duplicates, conflicts, and the bullet that says so."""

from __future__ import annotations

from agentmem.domain.lessons import (
    DUPLICATE_THRESHOLD,
    Candidate,
    comparison_text,
    format_lessons,
    group_lessons,
    place_lessons,
    rank_lessons,
)
from agentmem.domain.models import Memory

DAY = 86_400.0
NOW = 1_800_000_000.0


def lesson(memory_id: str, *, rating="up", age_days=1.0, status="indexed") -> Memory:
    return Memory("acme", "agent", memory_id, "run", "fb", rating, "comment", f"Editor: {memory_id}",
                  1.0, NOW - age_days * DAY, status=status)


def ranked(*pairs: tuple[Memory, float]):
    return rank_lessons([Candidate(m, s) for m, s in pairs], threshold=0.3, max_age_days=90, top_k=100, now=NOW)


def similarity_of(near: set[frozenset[str]]):
    """Pairs in `near` are near-duplicates (0.9), every other pair is distinct (0.1)."""
    return lambda a, b: 0.9 if frozenset((a, b)) in near else 0.1


def test_near_duplicates_of_one_rating_are_one_group_shown_by_its_best_member():
    a, b, c = lesson("a"), lesson("b"), lesson("c")
    groups = group_lessons(ranked((a, 0.5), (b, 0.7), (c, 0.6)),
                           similarity_of({frozenset("ab"), frozenset("bc")}),
                           duplicate_threshold=DUPLICATE_THRESHOLD, top_k=5)
    assert len(groups) == 1
    assert groups[0].lesson.memory.memory_id == "b"  # the best scored member speaks for the group
    assert [m.memory.memory_id for m in groups[0].members] == ["b", "c", "a"]  # a chain is one group
    assert groups[0].editors == 3


def test_lessons_below_the_duplicate_threshold_stay_apart():
    a, b = lesson("a"), lesson("b")
    groups = group_lessons(ranked((a, 0.5), (b, 0.7)), lambda x, y: DUPLICATE_THRESHOLD - 0.01,
                           duplicate_threshold=DUPLICATE_THRESHOLD, top_k=5)
    assert [g.editors for g in groups] == [1, 1]


def test_a_thumbs_up_and_a_thumbs_down_on_near_identical_text_keep_only_the_newer():
    old_up, new_down = lesson("old", rating="up", age_days=5), lesson("new", rating="down", age_days=1)
    groups = group_lessons(ranked((old_up, 0.9), (new_down, 0.4)), similarity_of({frozenset(("old", "new"))}),
                           duplicate_threshold=DUPLICATE_THRESHOLD, top_k=5)
    assert [g.lesson.memory.memory_id for g in groups] == ["new"]
    assert [o.memory.memory_id for o in groups[0].overruled] == ["old"]


def test_an_overruled_lesson_overrules_nothing():
    # newest 👍 beats the 👎; the 👎 (overruled) cannot then knock out the oldest 👍, which joins the newest.
    newest, middle, oldest = lesson("n", age_days=1), lesson("m", rating="down", age_days=2), lesson("o", age_days=3)
    everything = {frozenset("nm"), frozenset("mo"), frozenset("no")}
    groups = group_lessons(ranked((newest, 0.5), (middle, 0.6), (oldest, 0.7)), similarity_of(everything),
                           duplicate_threshold=DUPLICATE_THRESHOLD, top_k=5)
    assert len(groups) == 1
    assert sorted(m.memory.memory_id for m in groups[0].members) == ["n", "o"]


def test_opposite_ratings_on_different_text_are_no_conflict():
    up, down = lesson("u", rating="up", age_days=5), lesson("d", rating="down")
    groups = group_lessons(ranked((up, 0.5), (down, 0.6)), similarity_of(set()),
                           duplicate_threshold=DUPLICATE_THRESHOLD, top_k=5)
    assert sorted(g.lesson.memory.memory_id for g in groups) == ["d", "u"]
    assert all(not g.overruled for g in groups)


def test_top_k_counts_groups_not_members():
    members = [lesson(f"g{i}") for i in range(3)]
    other = lesson("x")
    near = {frozenset((f"g{i}", f"g{j}")) for i in range(3) for j in range(3) if i != j}
    groups = group_lessons(ranked(*[(m, 0.8) for m in members], (other, 0.5)), similarity_of(near),
                           duplicate_threshold=DUPLICATE_THRESHOLD, top_k=2)
    assert [g.editors for g in groups] == [3, 1]


def test_a_deleted_member_leaves_the_rest_of_its_group():
    a, b, c = lesson("a"), lesson("b", status="deleted"), lesson("c")
    near = {frozenset("ab"), frozenset("bc"), frozenset("ac")}
    groups = group_lessons(ranked((a, 0.5), (b, 0.9), (c, 0.6)), similarity_of(near),
                           duplicate_threshold=DUPLICATE_THRESHOLD, top_k=5)
    assert len(groups) == 1 and sorted(m.memory.memory_id for m in groups[0].members) == ["a", "c"]


def test_the_bullet_of_a_group_says_how_many_editors_gave_it():
    keep, alone = lesson("keep"), lesson("alone", rating="down")
    text = format_lessons(ranked((keep, 0.8), (alone, 0.7)), {"keep": 3, "alone": 1})
    assert "- Editor: keep (given by 3 editors)" in text
    assert "- Editor: alone\n" in text + "\n" and "alone (given" not in text


def test_lessons_are_compared_by_the_editors_words_not_the_run():
    assert comparison_text("Editor: Use pd.concat.\nOutput: df.append(x)\nInput: add a row") == "Use pd.concat."
    assert comparison_text("Output: df.append(x)\nInput: add a row") == "Output: df.append(x)\nInput: add a row"


def test_a_group_is_named_by_its_oldest_member_whichever_member_scores_best():
    old, new = lesson("old", age_days=5), lesson("new", age_days=1)
    (group,) = group_lessons(ranked((old, 0.4), (new, 0.9)), similarity_of({frozenset(("old", "new"))}),
                             duplicate_threshold=DUPLICATE_THRESHOLD, top_k=5)
    assert group.lesson.memory.memory_id == "new" and group.group_id == "old"


def test_the_wall_places_every_lesson_in_its_group_by_the_rule_retrieve_injects_by():
    a, b, c = lesson("a", age_days=3), lesson("b", age_days=2), lesson("c", age_days=1)
    alone = lesson("z", rating="down")
    places = place_lessons([c, alone, a, b], similarity_of({frozenset("ab"), frozenset("bc")}))
    assert {m: (p.group_id, p.group_size) for m, p in places.items()} == {
        "a": ("a", 3), "b": ("a", 3), "c": ("a", 3), "z": ("z", 1)}
    assert all(p.conflicts_with == () and p.overruled_by is None for p in places.values())


def test_the_wall_marks_both_lessons_of_a_conflict_and_which_one_is_overruled():
    old_up, new_down = lesson("old", rating="up", age_days=5), lesson("new", rating="down", age_days=1)
    places = place_lessons([old_up, new_down], similarity_of({frozenset(("old", "new"))}))
    assert places["new"].conflicts_with == ("old",) and places["new"].overruled_by is None
    assert places["old"].conflicts_with == ("new",) and places["old"].overruled_by == "new"
    assert (places["old"].group_id, places["old"].group_size) == ("old", 1)  # never injected: a group of one


def test_the_wall_groups_with_the_duplicate_threshold_itself():
    a, b = lesson("a", age_days=2), lesson("b", age_days=1)
    at = place_lessons([a, b], lambda x, y: DUPLICATE_THRESHOLD)
    below = place_lessons([a, b], lambda x, y: DUPLICATE_THRESHOLD - 0.001)
    assert at["a"].group_size == 2 and below["a"].group_size == 1
