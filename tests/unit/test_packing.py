"""pack_context: lessons, profile, facts and the newest history fitted exactly into a token budget."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from agentmem.domain.packing import (
    HistoryTurn,
    PackedContext,
    count_messages,
    message_tokens,
    pack_context,
)
from agentmem.tokens import TRUNCATION_MARKER, TokenCounter, get_token_counter
from hypothesis import given, settings
from hypothesis import strategies as st

LESSONS = "Lessons from past runs\n- Cite the policy number.\n- Keep answers under five sentences."
PROFILE = "# Ada\n- Prefers short answers\n- Works in London"


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return get_token_counter()


def turns(counter: TokenCounter, contents: Sequence[str]) -> list[HistoryTurn]:
    """A thread alternating user/assistant, each turn with its exact stored count."""
    roles = ("user", "assistant")
    return [
        HistoryTurn(role=roles[index % 2], content=content, tokens=counter.count(content))
        for index, content in enumerate(contents)
    ]


def as_messages(history: Sequence[HistoryTurn]) -> list[dict[str, str]]:
    return [{"role": turn.role, "content": turn.content} for turn in history]


def pack(counter: TokenCounter, budget: int, **parts: object) -> PackedContext:
    arguments: dict[str, object] = {"lessons_message": None, "profile": None, "facts": [], "history": []}
    arguments.update(parts)
    return pack_context(budget=budget, counter=counter, **arguments)  # type: ignore[arg-type]


def test_everything_that_fits_is_kept_in_order(counter: TokenCounter) -> None:
    history = turns(counter, ["Where is my parcel?", "It left the depot this morning."])
    packed = pack(
        counter,
        2000,
        lessons_message=LESSONS,
        profile=PROFILE,
        facts=["Has a cat.", "Lives in London."],
        history=history,
    )
    assert packed.messages == [
        {"role": "system", "content": LESSONS},
        {
            "role": "system",
            "content": "About the user\n\n" + PROFILE + "\n\nKnown facts\n- Has a cat.\n- Lives in London.",
        },
        *as_messages(history),
    ]
    assert packed.tokens == counter.count_messages(packed.messages)
    assert (packed.kept_lessons, packed.kept_profile) == (True, True)
    assert (packed.kept_fact_count, packed.kept_history_count) == (2, 2)
    assert packed.truncated == []


def test_nothing_to_pack_gives_no_messages_and_zero_tokens(counter: TokenCounter) -> None:
    packed = pack(counter, 100, lessons_message="  \n", profile="", facts=["", "  "], history=[])
    assert packed.messages == []
    assert packed.tokens == 0
    assert not packed.kept_lessons
    assert not packed.kept_profile


def test_profile_without_facts_has_no_facts_section(counter: TokenCounter) -> None:
    packed = pack(counter, 500, profile=PROFILE + "\n\n")
    assert packed.messages == [{"role": "system", "content": "About the user\n\n" + PROFILE}]


def test_facts_without_profile_still_get_the_about_heading(counter: TokenCounter) -> None:
    packed = pack(counter, 500, facts=["Has a cat."])
    assert packed.messages == [{"role": "system", "content": "About the user\n\nKnown facts\n- Has a cat."}]
    assert not packed.kept_profile


def test_a_fact_spanning_lines_stays_one_bullet(counter: TokenCounter) -> None:
    packed = pack(counter, 500, facts=["Allergic to\n\n- peanuts"])
    assert packed.messages[0]["content"].endswith("Known facts\n- Allergic to - peanuts")


def test_facts_are_a_prefix_in_order_of_relevance(counter: TokenCounter) -> None:
    facts = ["Has a cat.", "Lives in London.", "Long fact: " + "word " * 200, "Short."]
    fitting_two = counter.count_messages(
        [{"role": "system", "content": "About the user\n\nKnown facts\n- Has a cat.\n- Lives in London."}]
    )
    packed = pack(counter, fitting_two + 5, facts=facts)
    # "Short." would fit on its own, but keeping it while the more relevant long fact is out would
    # break the relevance order the caller relies on (facts[:kept_fact_count] were injected).
    assert packed.kept_fact_count == 2
    assert packed.messages[0]["content"].endswith("- Has a cat.\n- Lives in London.")
    assert packed.tokens <= fitting_two + 5


def test_empty_facts_do_not_stop_later_ones(counter: TokenCounter) -> None:
    packed = pack(counter, 500, facts=["", "Has a cat."])
    assert packed.kept_fact_count == 2
    assert packed.messages[0]["content"].endswith("Known facts\n- Has a cat.")


def test_history_keeps_the_newest_turns_that_fit(counter: TokenCounter) -> None:
    history = turns(counter, [f"turn {index}: " + "blah " * 20 for index in range(10)])
    newest_three = as_messages(history[-3:])
    budget = counter.count_messages(newest_three)
    packed = pack(counter, budget, history=history)
    assert packed.messages == newest_three
    assert packed.tokens == budget
    assert packed.kept_history_count == 3


def test_one_token_short_drops_the_oldest_kept_turn_whole(counter: TokenCounter) -> None:
    history = turns(counter, [f"turn {index}: " + "blah " * 20 for index in range(10)])
    budget = counter.count_messages(as_messages(history[-3:])) - 1
    packed = pack(counter, budget, history=history)
    assert packed.messages == as_messages(history[-2:])


def test_a_newest_turn_too_long_for_the_budget_is_not_cut_and_hides_older_ones(counter: TokenCounter) -> None:
    history = turns(counter, ["short", "short again", "huge " * 5000])
    packed = pack(counter, 1000, lessons_message=LESSONS, history=history)
    assert packed.kept_history_count == 0
    assert packed.messages == [{"role": "system", "content": LESSONS}]


def test_lessons_alone_over_budget_are_cut_and_the_profile_gives_way(counter: TokenCounter) -> None:
    lessons = "Lessons from past runs\n" + "- Always quote the customer's order number.\n" * 200
    packed = pack(counter, 100, lessons_message=lessons, profile=PROFILE, facts=["Has a cat."])
    assert packed.kept_lessons
    assert not packed.kept_profile
    assert packed.kept_fact_count == 0
    assert packed.truncated == ["lessons", "profile"]
    [only] = packed.messages
    assert only["content"].endswith(TRUNCATION_MARKER)
    assert lessons.startswith(only["content"].removesuffix(TRUNCATION_MARKER))
    assert packed.tokens == counter.count_messages(packed.messages) <= 100
    # A budget that is all used up: nothing more would fit.
    assert packed.tokens >= 100 - 1


def test_profile_is_cut_after_the_lessons_and_before_facts_and_history(counter: TokenCounter) -> None:
    profile = "# Ada\n" + "- Has opinions about tea\n" * 300
    history = turns(counter, ["hi", "hello"])
    packed = pack(
        counter, 400, lessons_message=LESSONS, profile=profile, facts=["Has a cat."], history=history
    )
    assert packed.messages[0] == {"role": "system", "content": LESSONS}
    about = packed.messages[1]["content"]
    assert about.startswith("About the user\n\n# Ada\n")
    assert profile.startswith(about.removeprefix("About the user\n\n").removesuffix(TRUNCATION_MARKER))
    assert packed.truncated == ["profile"]
    assert (packed.kept_fact_count, packed.kept_history_count) == (0, 0)
    assert packed.tokens <= 400


def test_understated_stored_counts_drop_the_oldest_turns_until_the_exact_count_fits(
    counter: TokenCounter,
) -> None:
    contents = [f"turn {index}: " + "blah " * 30 for index in range(8)]
    lying = [HistoryTurn(role="user", content=content, tokens=0) for content in contents]
    packed = pack(counter, 200, history=lying)
    kept = packed.kept_history_count
    assert 0 < kept < len(contents)
    assert packed.messages == as_messages(lying[-kept:])
    assert packed.tokens == counter.count_messages(packed.messages) <= 200


def test_fit_is_decided_on_the_stored_counts(counter: TokenCounter) -> None:
    history = turns(counter, ["one", "two", "three"])
    # The oldest turn claims to be huge: it is not re-tokenised to find out it would have fitted.
    history[0] = HistoryTurn(role=history[0].role, content=history[0].content, tokens=10_000)
    packed = pack(counter, 1000, history=history)
    assert packed.messages == as_messages(history[1:])


class RecordingCounter:
    """The real counter, remembering every text it was asked to count."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return self.inner.count(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        return self.inner.truncate(text, max_tokens)


class CharacterTokenizer:
    """One token per character, except that a line ending in "." followed by another line costs 10 more.

    It makes a message dearer than the sum of its lines, as BPE merges across joins can.
    """

    def count(self, text: str) -> int:
        return len(text) + 10 * text.count(".\n")

    def truncate(self, text: str, max_tokens: int) -> str:
        cut = text[: max(max_tokens, 0)]
        while self.count(cut) > max_tokens:
            cut = cut[:-1]
        return cut


def test_facts_are_settled_on_the_exact_count_of_the_whole_message() -> None:
    tokenizer = CharacterTokenizer()
    one_fact = [{"role": "system", "content": "About the user\n\nKnown facts\n- a."}]
    # Room for the second bullet by its own count ("\n- b." is 5), not for the merge it causes (+10).
    budget = count_messages(one_fact, tokenizer) + 5
    packed = pack_context(
        budget=budget, lessons_message=None, profile=None, facts=["a.", "b."], history=[], counter=tokenizer
    )
    assert packed.messages == one_fact
    assert packed.kept_fact_count == 1
    assert packed.tokens == count_messages(packed.messages, tokenizer) <= budget


def test_turns_that_do_not_fit_are_never_tokenised(counter: TokenCounter) -> None:
    history = turns(counter, [f"turn number {index} says hello" for index in range(1000)])
    recording = RecordingCounter(counter)
    packed = pack_context(
        budget=300, lessons_message=LESSONS, profile=None, facts=[], history=history, counter=recording
    )
    dropped = {turn.content for turn in history[: len(history) - packed.kept_history_count]}
    assert packed.kept_history_count > 0
    assert dropped.isdisjoint(recording.counted)


def test_negative_budget_is_refused(counter: TokenCounter) -> None:
    with pytest.raises(ValueError, match="budget"):
        pack(counter, -1)


def test_domain_count_messages_is_the_sum_of_message_costs_plus_priming(counter: TokenCounter) -> None:
    messages = [{"role": "system", "content": LESSONS}, {"role": "user", "content": "hi"}]
    expected = 3 + sum(message_tokens(message, counter) for message in messages)
    assert count_messages(messages, counter) == expected == counter.count_messages(messages)


# --- property -----------------------------------------------------------------------------------------

any_text = st.text(max_size=120)
long_text = st.builds(
    lambda piece, times: piece * times, st.text(min_size=1, max_size=12), st.integers(50, 1500)
)
turn_content = st.one_of(any_text, any_text, any_text, long_text, st.just(""))


@st.composite
def threads(draw: st.DrawFn, counter: TokenCounter) -> tuple[list[HistoryTurn], bool]:
    """A thread and whether every stored count is exact (else some are off, either way)."""
    contents = draw(st.lists(turn_content, max_size=40))
    exact = draw(st.booleans())
    history = []
    for content in contents:
        stored = counter.count(content)
        if not exact:
            # Anything from nothing to far too much, as a count from another tokenizer or a bug could be.
            stored = draw(st.integers(0, 2 * stored + 20))
        history.append(
            HistoryTurn(role=draw(st.sampled_from(["user", "assistant"])), content=content, tokens=stored)
        )
    return history, exact


COUNTER = get_token_counter()


@settings(max_examples=200, deadline=None)
@given(
    thread=threads(COUNTER),
    # Small budgets are where parts collide; large ones where everything fits.
    budget=st.one_of(st.integers(100, 600), st.integers(100, 32_000)),
    lessons_body=st.one_of(st.none(), any_text, long_text),
    profile=st.one_of(st.none(), any_text, long_text),
    facts=st.lists(st.one_of(any_text, long_text), max_size=8),
)
def test_packing_never_exceeds_the_budget_and_keeps_a_suffix_of_history(
    thread: tuple[list[HistoryTurn], bool],
    budget: int,
    lessons_body: str | None,
    profile: str | None,
    facts: list[str],
) -> None:
    history, stored_counts_exact = thread
    lessons = None if lessons_body is None else "Lessons from past runs\n" + lessons_body
    packed = pack_context(
        budget=budget, lessons_message=lessons, profile=profile, facts=facts, history=history, counter=COUNTER
    )

    assert packed.tokens == COUNTER.count_messages(packed.messages)
    assert packed.tokens <= budget

    kept = packed.kept_history_count
    system_messages = packed.messages[: len(packed.messages) - kept]
    assert packed.messages[len(system_messages) :] == as_messages(history[len(history) - kept :])
    assert all(message["role"] == "system" for message in system_messages)

    if lessons is None:
        assert not packed.kept_lessons
        assert not any(message["content"].startswith("Lessons") for message in system_messages)
    else:
        # 100 tokens always leave room for the lessons' heading: they are cut, never dropped.
        assert packed.kept_lessons
        assert system_messages[0]["content"].startswith("Lessons from past runs")
        assert lessons.startswith(system_messages[0]["content"].removesuffix(TRUNCATION_MARKER))
        assert ("lessons" in packed.truncated) == (system_messages[0]["content"] != lessons)

    kept_facts = [" ".join(fact.split()) for fact in facts[: packed.kept_fact_count]]
    for fact in filter(None, kept_facts):
        assert "\n- " + fact in system_messages[-1]["content"]

    if stored_counts_exact and kept < len(history):
        # The next older turn really did not fit.
        next_older = as_messages([history[len(history) - kept - 1]])[0]
        assert (
            packed.tokens + message_tokens(next_older, COUNTER) + (3 if not packed.messages else 0) > budget
        )
