"""A Presidio pattern that runs its expression only on a text that could hold a match.

Presidio runs every pattern of every recognizer over the whole of every text, and an expression that opens
with a look-behind ("a date after 'born'", "a code after 'zip code'") is tried at every position: on a
LoCoMo turn the date-of-birth patterns took 0.26 ms and the postal code's cue 0.12 ms, for texts that
almost never hold a birth word or a postal code's name. A guard is a cheap test that is true of every text
the expression can match in (a word it cannot match without, a digit), so skipping the expression when the
guard is false changes no result; `scripts/check_ner_spans.py --against` holds the detector's spans on
pii-dev and LoCoMo to be the same.

The expression is compiled with the recognizer's flags, as Presidio would compile it. Called with other
flags, Presidio compiles the pattern again itself, without the guard: slower, never different.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import regex
from presidio_analyzer import Pattern

_DIGIT = re.compile(r"\d")  # Unicode decimal digits, as `\d` in the `regex` module's str patterns


def has_digit(text: str) -> bool:
    return _DIGIT.search(text) is not None


def has_any_word(words: tuple[str, ...]) -> Callable[[str], bool]:
    """A guard for an expression that needs one of `words` (lower-case), matched case-insensitively.

    The text is case-folded: every character the `regex` module matches to a lower-case letter without
    regard to case (the Kelvin sign to "k", the long s to "s") folds to that letter.
    """

    def guard(text: str) -> bool:
        folded = text.casefold()
        return any(word in folded for word in words)

    return guard


def all_of(*guards: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda text: all(guard(text) for guard in guards)


class _GuardedExpression:
    """A compiled expression whose `finditer` finds nothing, without running, where its guard is false."""

    def __init__(self, compiled: Any, could_match: Callable[[str], bool]) -> None:
        self._compiled = compiled
        self._could_match = could_match

    def finditer(self, text: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
        if not self._could_match(text):
            return iter(())
        return self._compiled.finditer(text, *args, **kwargs)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compiled, name)


class GuardedPattern(Pattern):  # type: ignore[misc]
    """`Pattern(name, expression, score)` whose expression runs only where `could_match(text)` is true.

    `flags` must be the recognizer's `global_regex_flags`, the flags Presidio compiles it with.
    """

    def __init__(self, name: str, expression: str, score: float, *, flags: int,
                 could_match: Callable[[str], bool]) -> None:
        super().__init__(name, expression, score)
        # Presidio's own attributes, declared by their defaults (None).
        self.compiled_regex = _GuardedExpression(regex.compile(expression, flags=flags), could_match)  # type: ignore[assignment]
        self.compiled_with_flags = flags  # type: ignore[assignment]
