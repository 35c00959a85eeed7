"""Lessons that teach the same thing are one bullet; distinct teachings never merge, not even by a chain."""

from __future__ import annotations

from agentmem.domain.lessons import (
    MAX_LISTED_MEMBERS,
    Candidate,
    LessonGroup,
    assign_group,
    comparison_text,
    format_lessons,
    group_lessons,
    place_lessons,
    rank_lessons,
)
from agentmem.domain.models import Memory
from hypothesis import given, settings
from hypothesis import strategies as st

DAY = 86_400.0
NOW = 1_800_000_000.0


def lesson(memory_id: str, *, rating="up", age_days=1.0, status="indexed", group: str | None = None) -> Memory:
    return Memory("acme", "agent", memory_id, "run", "fb", rating, "comment", f"Editor: {memory_id}",
                  1.0, NOW - age_days * DAY, status=status, group_id=group)


def ranked(*pairs: tuple[Memory, float]):
    return rank_lessons([Candidate(m, s) for m, s in pairs], threshold=0.3, max_age_days=90, top_k=100, now=NOW)


def same_of(pairs: set[frozenset[str]]):
    """Lessons named together in `pairs` teach the same thing; no other two do."""
    return lambda a, b: frozenset((a, b)) in pairs


def test_a_new_lesson_joins_the_oldest_group_whose_representative_teaches_the_same():
    first, second = lesson("first", age_days=3), lesson("second", age_days=2)
    new = lesson("new", age_days=1)
    assert assign_group(new, [first, second], same_of({frozenset(("new", "second")), frozenset(("new", "first"))})) \
        == "first"


def test_a_chain_of_near_duplicates_never_joins_distinct_teachings():
    # a ~ b and b ~ c, but a and c teach different things: c may not join a's group through b.
    a = lesson("a", age_days=3)
    b = lesson("b", age_days=2, group="a")  # b joined a: it is a member, not a representative
    c = lesson("c", age_days=1)
    assert assign_group(c, [a, b], same_of({frozenset("ab"), frozenset("bc")})) == "c"


def test_a_lesson_of_the_other_rating_is_never_a_representative():
    down, up = lesson("down", rating="down", age_days=2), lesson("up", rating="up")
    assert assign_group(up, [down], same_of({frozenset(("down", "up"))})) == "up"


def test_members_of_a_group_are_one_bullet_shown_by_the_best_scored_member():
    a, b, c = lesson("a"), lesson("b", group="a"), lesson("c", group="a")
    groups = group_lessons(ranked((a, 0.5), (b, 0.7), (c, 0.6)), same_of(set()), top_k=5)
    assert len(groups) == 1
    assert groups[0].lesson.memory.memory_id == "b"
    assert [m.memory.memory_id for m in groups[0].members] == ["b", "c", "a"]
    assert groups[0].editors == 3 and groups[0].group_id == "a"


def test_lessons_of_different_groups_stay_apart_whatever_their_similarity():
    a, b = lesson("a"), lesson("b")
    groups = group_lessons(ranked((a, 0.5), (b, 0.7)), same_of(set()), top_k=5)
    assert [g.editors for g in groups] == [1, 1]


def test_a_thumbs_up_and_a_thumbs_down_teaching_the_same_keep_only_the_newer():
    old_up, new_down = lesson("old", rating="up", age_days=5), lesson("new", rating="down", age_days=1)
    groups = group_lessons(ranked((old_up, 0.9), (new_down, 0.4)), same_of({frozenset(("old", "new"))}), top_k=5)
    assert [g.lesson.memory.memory_id for g in groups] == ["new"]
    assert [o.memory.memory_id for o in groups[0].overruled] == ["old"]
    assert groups[0].conflicts == (("old", "new"),)


def test_an_overruled_group_overrules_nothing():
    newest, middle, oldest = lesson("n", age_days=1), lesson("m", rating="down", age_days=2), lesson("o", age_days=3)
    groups = group_lessons(ranked((newest, 0.5), (middle, 0.6), (oldest, 0.7)),
                           same_of({frozenset("nm"), frozenset("mo")}), top_k=5)
    assert sorted(g.lesson.memory.memory_id for g in groups) == ["n", "o"]


def test_opposite_ratings_on_different_teachings_are_no_conflict():
    up, down = lesson("u", rating="up", age_days=5), lesson("d", rating="down")
    groups = group_lessons(ranked((up, 0.5), (down, 0.6)), same_of(set()), top_k=5)
    assert sorted(g.lesson.memory.memory_id for g in groups) == ["d", "u"]
    assert all(not g.overruled for g in groups)


def test_top_k_counts_distinct_teachings_not_members():
    members = [lesson(f"g{i}", group="g0") for i in range(3)]
    others = [lesson(f"x{i}") for i in range(3)]
    groups = group_lessons(ranked(*[(m, 0.8) for m in members], *[(o, 0.5) for o in others]), same_of(set()),
                           top_k=2)
    assert [g.editors for g in groups] == [3, 1]


def test_an_answer_names_a_bounded_number_of_a_large_groups_members():
    members = [lesson(f"m{i}", group="m0") for i in range(40)]
    (group,) = group_lessons(ranked(*[(m, 0.5 + i / 100) for i, m in enumerate(members)]), same_of(set()), top_k=5)
    assert group.editors == 40
    assert len(group.listed) == MAX_LISTED_MEMBERS
    assert group.listed[0] is group.lesson


def test_a_deleted_member_leaves_the_rest_of_its_group():
    a, b, c = lesson("a"), lesson("b", status="deleted", group="a"), lesson("c", group="a")
    groups = group_lessons(ranked((a, 0.5), (b, 0.9), (c, 0.6)), same_of(set()), top_k=5)
    assert len(groups) == 1 and sorted(m.memory.memory_id for m in groups[0].members) == ["a", "c"]


def test_the_bullet_holds_the_editors_words_and_says_how_many_editors_gave_it():
    keep = [lesson("keep"), lesson("keep2", group="keep"), lesson("keep3", group="keep")]
    alone = lesson("alone", rating="down")
    groups = group_lessons(ranked(*[(m, 0.8) for m in keep], (alone, 0.7)), same_of(set()), top_k=5)
    text = format_lessons(groups)
    assert text is not None
    assert "] keep (given by 3 editors)" in text
    assert "] alone\n" in text + "\n" and "alone (given" not in text
    assert "Editor:" not in text


def test_a_lesson_without_a_comment_is_shown_in_agentmems_own_words_only():
    bare = Memory("acme", "agent", "bare", "run", "fb", "down", None, "Output: secret run text\nInput: user words",
                  1.0, NOW - DAY)
    text = format_lessons([LessonGroup(ranked((bare, 0.8))[0], tuple(ranked((bare, 0.8))))])
    assert text is not None and "secret run text" not in text and "user words" not in text
    assert "An editor rejected the output of a similar run, without a comment." in text


def test_lessons_are_compared_by_the_editors_words_not_the_run():
    assert comparison_text("Editor: Use pd.concat.\nOutput: df.append(x)\nInput: add a row") == "Use pd.concat."
    assert comparison_text("Output: df.append(x)\nInput: add a row") == "Output: df.append(x)\nInput: add a row"


def test_the_wall_places_every_lesson_in_the_group_it_was_given():
    a, b, c = lesson("a", age_days=3), lesson("b", age_days=2, group="a"), lesson("c", age_days=1, group="a")
    alone = lesson("z", rating="down")
    places = place_lessons([c, alone, a, b], same_of(set()))
    assert {m: (p.group_id, p.group_size) for m, p in places.items()} == {
        "a": ("a", 3), "b": ("a", 3), "c": ("a", 3), "z": ("z", 1)}
    assert all(p.conflicts_with == () and p.overruled_by is None for p in places.values())


def test_the_wall_marks_both_lessons_of_a_conflict_and_which_one_is_overruled():
    old_up, new_down = lesson("old", rating="up", age_days=5), lesson("new", rating="down", age_days=1)
    places = place_lessons([old_up, new_down], same_of({frozenset(("old", "new"))}))
    assert places["new"].conflicts_with == ("old",) and places["new"].overruled_by is None
    assert places["old"].conflicts_with == ("new",) and places["old"].overruled_by == "new"


def _group_lessons_by_every_pair(ranked_lessons, disagree, top_k):
    """The rule as first written (every group against every other, newest first): the reference."""
    by_key: dict[str, list] = {}
    for s in ranked_lessons:
        by_key.setdefault(s.memory.group_id or s.memory.memory_id, []).append(s)
    candidates = list(by_key.values())
    newest_first = sorted(candidates, key=lambda g: (-max(m.memory.created_at for m in g), g[0].memory.memory_id))
    overruled_by: dict[int, object] = {}
    for winner in newest_first:
        if id(winner) in overruled_by:
            continue
        for older in newest_first:
            if (older is not winner and id(older) not in overruled_by
                    and older[0].memory.rating != winner[0].memory.rating
                    and max(m.memory.created_at for m in older) <= max(m.memory.created_at for m in winner)
                    and disagree(winner[0].memory.memory_id, older[0].memory.memory_id)):
                overruled_by[id(older)] = winner[0]
    groups = []
    for members in candidates:
        if id(members) in overruled_by:
            continue
        beaten = [(loser, overruled_by[id(loser)]) for loser in candidates if overruled_by.get(id(loser)) is members[0]]
        overruled = tuple(m for loser, _ in beaten for m in loser)
        conflicts = tuple((m.memory.memory_id, w.memory.memory_id) for loser, w in beaten for m in loser)
        groups.append(LessonGroup(members[0], tuple(members), overruled, conflicts))
    groups.sort(key=lambda g: (-g.lesson.score, -g.lesson.memory.created_at, g.lesson.memory.memory_id))
    return groups[:top_k]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["up", "down"]), st.integers(0, 2),
                       st.sampled_from([0.4, 0.6, 0.8])), min_size=0, max_size=16),
    st.sets(st.tuples(st.integers(0, 15), st.integers(0, 15)), max_size=80),
    st.integers(1, 8),
)
def test_grouping_and_conflicts_are_those_of_every_pair_compared(rows, disagreeing, top_k):
    # Ties in age and score on purpose: the order of the comparisons must not change who overrules whom.
    lessons = [(lesson(f"m{i}", rating=rating, age_days=float(age),
                       group=f"m{group}" if group < i else None), similarity)
               for i, (group, rating, age, similarity) in enumerate(rows)]
    pairs = {frozenset((f"m{a}", f"m{b}")) for a, b in disagreeing if a != b}
    ranked_lessons = ranked(*lessons)
    assert group_lessons(ranked_lessons, same_of(pairs), top_k=top_k) == \
        _group_lessons_by_every_pair(ranked_lessons, same_of(pairs), top_k)
