"""A text without the combining accents that follow a letter, and the way back to the original's offsets.

Yoruba, Vietnamese written decomposed, and other languages put accents on letters that have no
precomposed form ("ẹ́" is "ẹ" and U+0301, "Ọ̀" is "Ọ" and U+0300). spaCy's entity recognizer reads the
words' shapes, prefixes, suffixes and vectors, and a word with such a mark is one it never saw:
"Hello, I'm Fọlákẹ́ Ọ̀ṣìnbàjò" gave no entity, where "Hello, I'm Fọlákẹ Ọṣìnbàjò" gives the person.
:func:`without_marks` composes each letter with its marks (NFC) and keeps the composed letter only,
so the detector reads the second text, and :meth:`Folded.original` maps a span found in it back onto the
first (a letter's marks stay inside the span). Only the marks of Latin, Greek and Cyrillic letters
(the combining diacritical blocks) are folded: the vowel signs of Devanagari, Thai or Arabic are
letters of those words, not accents.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# The combining diacritical marks, their extension and supplement, marks for symbols, and half marks.
_MARK = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_A_MARK_AFTER_A_LETTER = re.compile(rf"[^\W\d_][{_MARK}]")
_CLUSTER = re.compile(rf"[^\W\d_][{_MARK}]+|[\s\S]")


@dataclass(frozen=True, slots=True)
class Folded:
    """``text`` with each letter's marks folded in; ``starts[i]``/``ends[i]``: where its i-th character was."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The offsets in the original text of the span ``text[start:end]`` (``start < end``)."""
        return self.starts[start], self.ends[end - 1]


def without_marks(text: str) -> Folded | None:
    """``text`` with each letter's combining marks composed into it or dropped; None when it has none."""
    if _A_MARK_AFTER_A_LETTER.search(text) is None:
        return None
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for cluster in _CLUSTER.finditer(text):
        chars.append(unicodedata.normalize("NFC", cluster.group())[0])
        starts.append(cluster.start())
        ends.append(cluster.end())
    return Folded("".join(chars), tuple(starts), tuple(ends))
