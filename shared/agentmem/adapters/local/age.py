"""A Presidio pattern recognizer for a person's age, written as English speakers write it.

Amazon Comprehend reports ages (AGE) in AWS; locally a number is an age when the words around it say
so: "a 36 year old man", "a 62-year-old male", "26 y/o", "he just turned 46", "I'll turn 65",
"at the age of 61", "aged 30". Only the number is the span, so the sentence keeps its words. "turn" alone
is read as the verb only after a modal, "to" or a pronoun: "turn 5" of a game or a log is no age.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from presidio_analyzer import PatternRecognizer

AGE = "AGE"

_NUMBER = r"(?<![\d.,])\d{1,3}(?![\d.,]\d)"
# A bare "turn" is a verb only after a modal, "to" or a pronoun ("I'll turn 65", "about to turn 30"): as a
# noun ("turn 5 of the game", "client 0 turn 12") the number after it is no age.
_TURN_AS_A_VERB = r"(?:'ll|will|would|shall|should|may|might|can|could|to|i|you|we|they|he|she)[ \t]+turn"


def build_recognizer() -> PatternRecognizer:
    """Presidio's ``PatternRecognizer`` for AGE with the patterns above (case-insensitive)."""
    import regex
    from presidio_analyzer import Pattern, PatternRecognizer

    patterns = [
        Pattern("years old", rf"{_NUMBER}(?=[ \t-]?(?:years?|yrs?)[ \t-]?old\b)", 0.8),
        Pattern("y/o", rf"{_NUMBER}(?=[ \t]?y/?o\b)", 0.8),
        Pattern("turned", rf"(?<=\b(?:turned|turns|turning|aged|age[ \t]+of|{_TURN_AS_A_VERB})[ \t]+){_NUMBER}\b", 0.7),
    ]
    return PatternRecognizer(
        supported_entity=AGE,
        name="AgeRecognizer",
        patterns=patterns,
        global_regex_flags=regex.IGNORECASE | regex.MULTILINE,
    )
