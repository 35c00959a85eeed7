"""Context packing for `retrieve`: lessons, profile, facts and history fitted into a token budget.

The answer's `messages` go in front of the agent's own prompt, so their size is what the agent pays
for. The rules, in order of priority:

1. a system message with the lessons (the caller's text, headed "Lessons from past runs"); cut on a
   token boundary if it alone exceeds the budget;
2. a system message "About the user" holding the profile (cut if needed, after the lessons) and a
   "Known facts" bullet list: the facts in the given order of relevance, as long as each fits
   (a prefix: a less relevant fact is never kept while a more relevant one is dropped);
3. the most recent history turns that fit, whole: an older turn is dropped before a newer one, and a
   turn is never cut in the middle, so the kept history is always a suffix of the given history.

Empty parts produce no message. The size of the result is `count_messages(messages)`, computed
exactly, and never exceeds the budget.

Nothing here imports a tokenizer: the caller passes one (`agentmem.tokens.TokenCounter` in
production) through the small `Tokenizer` protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

# OpenAI's documented framing of chat messages for cl100k models (gpt-3.5-turbo-0613 and later, gpt-4):
# every message is wrapped as <|start|>{role}<|message|>{content}<|end|>, and the model's reply is
# primed with <|start|>assistant<|message|>.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3

SYSTEM_ROLE = "system"
ABOUT_USER_HEADING = "About the user"
KNOWN_FACTS_HEADING = "Known facts"
FACT_BULLET = "- "


class Tokenizer(Protocol):
    """What packing needs from a tokenizer: exact counts and cuts on a token boundary."""

    def count(self, text: str) -> int:
        """Number of tokens in `text`."""
        ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """`text` itself when it fits in `max_tokens`, else a prefix of at most `max_tokens` tokens."""
        ...


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    """One stored conversation turn; `tokens` is the count of `content` computed when it was written."""

    role: str
    content: str
    tokens: int


@dataclass(frozen=True, slots=True)
class PackedContext:
    """The packed messages and what made it in.

    `kept_fact_count` is a prefix length: facts[:kept_fact_count] were injected (empty ones skipped).
    `kept_history_count` is a suffix length: history[-kept_history_count:] were injected.
    `truncated` names the parts cut or dropped for lack of budget: "lessons" and/or "profile".
    """

    messages: list[dict[str, str]]
    tokens: int
    kept_lessons: bool
    kept_profile: bool
    kept_fact_count: int
    kept_history_count: int
    truncated: list[str] = field(default_factory=list)


def message_tokens(message: Mapping[str, str], tokenizer: Tokenizer) -> int:
    """Tokens one chat message costs: 3 of framing plus every value (role, content, name), +1 for a name."""
    total = TOKENS_PER_MESSAGE
    for key, value in message.items():
        total += tokenizer.count(value)
        if key == "name":
            total += TOKENS_PER_NAME
    return total


def count_messages(messages: Sequence[Mapping[str, str]], tokenizer: Tokenizer) -> int:
    """Tokens a list of chat messages costs, by OpenAI's documented rule for cl100k chat models.

    Each message costs 3 tokens of framing plus the tokens of its role and content (and of its name,
    +1, when it has one); the list costs 3 more for priming the reply. An empty list costs 0: there is
    nothing to send, so nothing to prime.
    """
    return _total_with_priming([message_tokens(message, tokenizer) for message in messages])


def _total_with_priming(per_message_tokens: Sequence[int]) -> int:
    if not per_message_tokens:
        return 0
    return REPLY_PRIMING_TOKENS + sum(per_message_tokens)


def format_about_user(profile: str, facts: Sequence[str]) -> str:
    """The "About the user" system message: the heading, the profile markdown, then the facts as bullets.

    Either part may be empty; with both empty there is nothing to say and the result is "".
    """
    sections = [ABOUT_USER_HEADING]
    if profile:
        sections.append(profile)
    if facts:
        sections.append("\n".join([KNOWN_FACTS_HEADING, *(FACT_BULLET + fact for fact in facts)]))
    return "\n\n".join(sections) if len(sections) > 1 else ""


def _one_line(fact: str) -> str:
    # A fact spanning lines would break out of its bullet and read as a separate instruction.
    return " ".join(fact.split())


def _as_is(text: str) -> str:
    return text


def _about_profile_only(profile: str) -> str:
    # format_about_user(profile, []) for any non-empty profile, and still prices the heading for "".
    return ABOUT_USER_HEADING + "\n\n" + profile


def _fit_in(text: str, room: int, wrap: Callable[[str], str], tokenizer: Tokenizer) -> str:
    """The longest cut of `text` such that `wrap(cut)` costs at most `room` tokens ("" when none does)."""
    limit = room - tokenizer.count(wrap(""))
    while limit > 0:
        cut = tokenizer.truncate(text, limit)
        overshoot = tokenizer.count(wrap(cut)) - room
        if overshoot <= 0:
            return cut
        # Merges across the join can make the whole dearer than its parts; shrink by what is over.
        limit -= overshoot
    return ""


def pack_context(
    *,
    budget: int,
    lessons_message: str | None,
    profile: str | None,
    facts: Sequence[str],
    history: Sequence[HistoryTurn],
    counter: Tokenizer,
) -> PackedContext:
    """Fit lessons, profile, facts and history (oldest first) into `budget` tokens of chat messages.

    See the module docstring for the priorities. History is costed from the stored per-turn counts plus
    framing, so the work grows with what is kept, not with the thread: the caller passes only the
    newest turns. The kept messages are then counted exactly; if a stored count was off, the oldest
    kept turns are dropped until the exact count fits. `tokens` is always
    `count_messages(messages, counter)` and never exceeds `budget`.
    """
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")

    system_messages: list[dict[str, str]] = []
    system_tokens: list[int] = []
    truncated: list[str] = []
    # The reply priming is paid once, whatever is sent; reserving it up front keeps every step simple.
    room = budget - REPLY_PRIMING_TOKENS
    system_frame = TOKENS_PER_MESSAGE + counter.count(SYSTEM_ROLE)

    kept_lessons = False
    if lessons_message and lessons_message.strip():
        lessons_text = _fit_in(lessons_message, room - system_frame, _as_is, counter)
        if lessons_text != lessons_message:
            truncated.append("lessons")
        if lessons_text.strip():
            kept_lessons = True
            system_messages.append({"role": SYSTEM_ROLE, "content": lessons_text})
            system_tokens.append(message_tokens(system_messages[-1], counter))
            room -= system_tokens[-1]

    profile_text = profile.strip() if profile else ""
    kept_profile = False
    if profile_text:
        fitted_profile = _fit_in(profile_text, room - system_frame, _about_profile_only, counter)
        if fitted_profile != profile_text:
            truncated.append("profile")
        profile_text = fitted_profile if fitted_profile.strip() else ""
        kept_profile = bool(profile_text)

    kept_fact_count, about_content = _fit_facts(profile_text, facts, room - system_frame, counter)
    if about_content:
        system_messages.append({"role": SYSTEM_ROLE, "content": about_content})
        system_tokens.append(message_tokens(system_messages[-1], counter))
        room -= system_tokens[-1]

    history_messages, history_tokens = _fit_history(history, room, counter)

    messages = [*system_messages, *history_messages]
    tokens = _total_with_priming([*system_tokens, *history_tokens])
    if tokens > budget:  # a broken invariant must never leak an over-budget answer
        raise AssertionError(f"packed {tokens} tokens into a budget of {budget}")
    return PackedContext(
        messages=messages,
        tokens=tokens,
        kept_lessons=kept_lessons,
        kept_profile=kept_profile,
        kept_fact_count=kept_fact_count,
        kept_history_count=len(history_messages),
        truncated=truncated,
    )


def _fit_facts(profile_text: str, facts: Sequence[str], room: int, counter: Tokenizer) -> tuple[int, str]:
    """How many facts (a prefix) fit beside the profile in `room` tokens, and the resulting content."""
    lines: list[str] = []
    considered = 0
    used = counter.count(format_about_user(profile_text, lines))
    for index, fact in enumerate(facts):
        line = _one_line(fact)
        if line:
            # Cost each bullet alone rather than recounting the whole message per fact.
            if lines:
                growth = counter.count("\n" + FACT_BULLET + line)
            else:
                growth = counter.count(format_about_user(profile_text, [line])) - used
            if used + growth > room:
                break
            lines.append(line)
            used += growth
        considered = index + 1
    content = format_about_user(profile_text, lines)
    exact = counter.count(content)
    # Merges across the joins can make the message dearer than its bullets: settle on the exact count.
    while lines and exact > room:
        lines.pop()
        considered = _prefix_length_for(facts, len(lines))
        content = format_about_user(profile_text, lines)
        exact = counter.count(content)
    return considered, content


def _prefix_length_for(facts: Sequence[str], non_empty_count: int) -> int:
    """Length of the shortest prefix of `facts` holding `non_empty_count` non-empty facts."""
    seen = 0
    for index, fact in enumerate(facts):
        if seen == non_empty_count:
            return index
        if _one_line(fact):
            seen += 1
    return len(facts)


def _fit_history(
    history: Sequence[HistoryTurn], room: int, counter: Tokenizer
) -> tuple[list[dict[str, str]], list[int]]:
    """The longest suffix of `history` that fits in `room`, as messages (oldest first) and exact costs."""
    role_frames: dict[str, int] = {}
    kept_newest_first: list[HistoryTurn] = []
    estimated = 0
    for turn in reversed(history):
        if turn.role not in role_frames:
            role_frames[turn.role] = TOKENS_PER_MESSAGE + counter.count(turn.role)
        cost = role_frames[turn.role] + max(turn.tokens, 0)
        if estimated + cost > room:
            break
        kept_newest_first.append(turn)
        estimated += cost

    kept = list(reversed(kept_newest_first))
    messages = [{"role": turn.role, "content": turn.content} for turn in kept]
    exact = [message_tokens(message, counter) for message in messages]
    total = sum(exact)
    dropped = 0
    while total > room and dropped < len(exact):
        total -= exact[dropped]
        dropped += 1
    return messages[dropped:], exact[dropped:]
