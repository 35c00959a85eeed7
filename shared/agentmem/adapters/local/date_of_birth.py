"""A Presidio pattern recognizer for a date of birth: a date the words before it call one.

Dates in general are not masked (a masked date takes the timeline out of a memory, see
``presidio_pii``), but a date of birth is personal data. A date is one when "born", "DOB", "d.o.b.",
"date of birth", "birth date" or "birthday" comes just before it, with at most a few linking words
("born on the", "DOB:", "date of birth is", "birthday was"): "17/04/1986", "1986-04-17", "17.4.1986",
"17 April 1986", "April 17, 1986", "the 17th of April 1986", "17th Apr 1986", "7 Jan 02", a month and year
alone ("born in November 1979", "DOB 11/1979"), and after "birthday" a day and month alone ("my birthday is 17
April"); or in the reply that follows the words in the same line
("Please tell me your date of birth. It's 8/12/1991"). The span is the date only, reported as DATE_TIME
(Presidio's type; the token is ``DATE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from presidio_analyzer import PatternRecognizer

DATE_TIME = "DATE_TIME"

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DAY = r"(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"
_YEAR = r"(?:1[89]\d\d|20\d\d)"
_NUMERIC = (
    r"(?:(?:0?[1-9]|[12]\d|3[01])[/.\-](?:0?[1-9]|[12]\d|3[01])[/.\-](?:\d{4}|\d{2})"
    rf"|{_YEAR}[/.\-](?:0?[1-9]|1[0-2])[/.\-](?:0?[1-9]|[12]\d|3[01]))"
)
# After a birth word a written month may take a year of two digits: "dob 7 Jan 02", "born April 17, '86".
# (not a count: "born on 3 May 12 weeks early")
_WRITTEN_YEAR = rf"(?:{_YEAR}|['’]?\d{{2}}(?![ \t]+(?:minutes?|hours?|days?|weeks?|months?|years?)\b))"
_WRITTEN = (
    rf"(?:(?:the[ \t]+)?{_DAY}(?:[ \t]+of)?[ \t]+{_MONTH},?[ \t]+{_WRITTEN_YEAR}"
    rf"|{_MONTH}[ \t]+{_DAY},?[ \t]+{_WRITTEN_YEAR})"
)
_MONTH_AND_YEAR = rf"(?:{_MONTH},?[ \t]+{_YEAR}|(?:0?[1-9]|1[0-2])/{_YEAR})"
_DAY_AND_MONTH = rf"(?:(?:the[ \t]+)?{_DAY}(?:[ \t]+of)?[ \t]+{_MONTH}|{_MONTH}[ \t]+{_DAY})"
_LINK = r"(?:[ \t]*[:\-]|[ \t]+(?:is|was|on|in|at|:))*[ \t]*"
# The words a reply opens with, after a question or a label that asks for the date: "It's", "Mine is".
_ANSWER = r"(?:it['’]s|it[ \t]+is|it[ \t]+was|that['’]s|mine[ \t]+is|sure,?[ \t]+it['’]s)"
_CUE = r"\b(?:born|dob|d\.o\.b\.?|date[ \t]+of[ \t]+birth|birth[ \t]?date|birthday)"
# A word every alternative of `_CUE` holds.
_CUE_WORDS = ("born", "dob", "d.o.b", "birth")


def build_recognizer() -> PatternRecognizer:
    """Presidio's ``PatternRecognizer`` for a DATE_TIME that is a date of birth (case-insensitive cue)."""
    import regex
    from presidio_analyzer import Pattern, PatternRecognizer

    from agentmem.adapters.local.pattern_guards import GuardedPattern, all_of, has_any_word, has_digit

    flags = regex.IGNORECASE | regex.MULTILINE
    end = r"(?![\p{L}\d])"

    def pattern(name: str, expression: str, score: float) -> Pattern:
        # Every pattern needs a birth word (`_CUE`) and a digit (each date has one): other texts are not searched.
        return GuardedPattern(name, expression, score, flags=flags,
                              could_match=all_of(has_digit, has_any_word(_CUE_WORDS)))

    patterns = [
        # A month and a year without the day too: "born in November 1979", "DOB: Nov 1979", "DOB 11/1979" (one
        # pattern: Presidio runs each over the whole text).
        pattern(
            "date after a birth word", rf"(?<={_CUE}{_LINK})(?:{_NUMERIC}|{_WRITTEN}|{_MONTH_AND_YEAR}){end}", 0.95
        ),
        # The answer after the question: "Please tell me your date of birth. It's 8/12/1991".
        pattern(
            "date answering a birth word",
            rf"(?<={_CUE}[^\n.?!]{{0,30}}[.?!:][ \t]*{_ANSWER}[ \t]+)(?:{_NUMERIC}|{_WRITTEN}){end}",
            0.9,
        ),
        pattern("birthday without a year", rf"(?<=\bbirthday{_LINK}){_DAY_AND_MONTH}{end}", 0.9),
    ]
    return PatternRecognizer(
        supported_entity=DATE_TIME,
        name="DateOfBirthRecognizer",
        patterns=patterns,
        global_regex_flags=flags,
    )
