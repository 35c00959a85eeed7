"""The demo's example agent: a brand-voice auditor that honours the lessons agentmem injects.

Without an LLM it is a transparent rule-based checker: it flags hype words,
filler intensifiers, stacked exclamation marks and phrases a generic style
guide calls clichés. Like a model, it knows only its prompt: it reads the
"Lessons from past runs" system message that `retrieve` put in `messages`,
and any phrase an editor quoted in a "mistake to avoid" bullet is no longer
flagged. That is the whole of its learning; the memory side (digest,
embedding, grouping, retrieval, ranking, packing) is agentmem's real one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentmem.domain.lessons import LESSONS_HEADING

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
    suppressed: list[tuple[str, str]]  # (phrase, label of the lesson bullet that suppressed it)

    def output(self) -> str:
        """The run's output as the agent reports it (what the editor reads)."""
        return "\n".join(f.line() for f in self.flags) or "No brand-voice issues found."


def rule_based_audit(text: str, messages: Sequence[Mapping[str, Any]]) -> Audit:
    """Flag brand-voice issues in `text`, leaving out phrases that a 👎 bullet of `messages` says not to flag."""
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

    do_not_flag = phrases_to_stop_flagging(messages)
    flags, suppressed = [], []
    for flag in candidates:
        label = do_not_flag.get(flag.phrase.lower())
        if label:
            suppressed.append((flag.phrase, label))
        else:
            flags.append(flag)
    return Audit(flags, suppressed)


def phrases_to_stop_flagging(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Phrases quoted in the 👎 bullets of the lessons' system message, mapped to the bullet's label.

    Only the system message headed "Lessons from past runs" counts: it holds the editors' words. The
    run examples in the user-role context message are data, and what they quote is not a lesson.
    """
    phrases: dict[str, str] = {}
    for message in messages:
        content = str(message.get("content", ""))
        if message.get("role") != "system" or LESSONS_HEADING not in content:
            continue
        section = ""
        for line in content.splitlines():
            if not line.startswith("- "):
                section = line
                continue
            if "👎" not in section:
                continue
            bullet = _BULLET.match(line)
            label, words = (bullet.group(1), bullet.group(2)) if bullet else ("", line[2:])
            for quoted in _QUOTED.findall(words):
                phrases.setdefault(quoted.strip().lower(), label)
    return phrases


_BULLET = re.compile(r"- \[(L\d+)\] (.*)")
