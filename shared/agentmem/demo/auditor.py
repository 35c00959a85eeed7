"""The demo's example agent: a brand-voice auditor that honours the lessons agentmem injects.

Without an LLM it is a transparent rule-based checker: it flags hype words,
filler intensifiers, stacked exclamation marks and phrases a generic style
guide calls clichés. It reads the injected "Lessons from past runs": any
phrase an editor quoted in a "mistake to avoid" lesson is no longer flagged.
That is the whole of its learning; the memory side (digest, embedding,
retrieval, ranking) is agentmem's real one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CLICHES = ("trail magic", "hike your own hike", "pack it in, pack it out", "game-changing", "at the end of the day")
HYPE = ("revolutionary", "best-in-class", "unparalleled", "cutting-edge", "world-class")
INTENSIFIERS = ("very", "really", "extremely", "absolutely")

_QUOTED = re.compile(r"[\"'‘“]([^\"'’”]{2,80})[\"'’”]")


@dataclass(frozen=True)
class Flag:
    phrase: str
    reason: str

    def line(self) -> str:
        return f"FLAG '{self.phrase}': {self.reason}"


@dataclass(frozen=True)
class Audit:
    flags: list[Flag]
    suppressed: list[tuple[str, str]]  # (phrase, memoryId of the lesson that suppressed it)

    def output(self) -> str:
        """The run's output as the agent reports it (what the editor reads)."""
        return "\n".join(f.line() for f in self.flags) or "No brand-voice issues found."


def rule_based_audit(text: str, lessons: Sequence[dict[str, Any]]) -> Audit:
    """Flag brand-voice issues in `text`, leaving out phrases that a 👎 lesson says not to flag."""
    lowered = text.lower()
    candidates: list[Flag] = []
    for phrase in CLICHES:
        if phrase in lowered:
            candidates.append(Flag(phrase, "cliché; say it plainly"))
    for word in HYPE:
        if re.search(rf"\b{re.escape(word)}\b", lowered):
            candidates.append(Flag(word, "hype; show the benefit instead"))
    for word in INTENSIFIERS:
        if re.search(rf"\b{word}\b", lowered):
            candidates.append(Flag(word, "filler intensifier"))
    if "!!" in text:
        candidates.append(Flag("!!", "stacked exclamation marks"))

    do_not_flag = phrases_to_stop_flagging(lessons)
    flags, suppressed = [], []
    for flag in candidates:
        lesson_id = do_not_flag.get(flag.phrase.lower())
        if lesson_id:
            suppressed.append((flag.phrase, lesson_id))
        else:
            flags.append(flag)
    return Audit(flags, suppressed)


def phrases_to_stop_flagging(lessons: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Phrases an editor quoted in the comment of a 👎 lesson, mapped to that lesson's id."""
    phrases: dict[str, str] = {}
    for lesson in lessons:
        if lesson.get("rating") != "down":
            continue
        comment = _editor_comment(str(lesson.get("text", "")))
        for quoted in _QUOTED.findall(comment):
            phrases.setdefault(quoted.strip().lower(), str(lesson.get("memoryId", "")))
    return phrases


def _editor_comment(lesson_text: str) -> str:
    # A lesson reads "Editor: <comment> | Output: ... | Input: ..."; only the editor's words count.
    head = lesson_text.split(" | Output:", 1)[0].split(" | Input:", 1)[0]
    return head.removeprefix("Editor:").strip() if head.startswith("Editor:") else ""
