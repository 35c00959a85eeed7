"""The user profile: a Markdown document with a fixed schema, and the rules for rewriting it.

A stored profile is YAML frontmatter (bookkeeping the code keeps: `user_id`,
`schema_version`, `last_updated`, `turn_count`) followed by a body of exactly
six `## ` sections in a fixed order. A model only ever sees and returns the
body; anything it answers that is not `NOOP` or a body with the schema is
rejected, so a bad answer can never damage a profile.

Pure: no I/O. Token counts come through the `Tokenizer` protocol of `packing`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from agentmem.domain.packing import Tokenizer
from agentmem.domain.timestamps import iso_utc

SCHEMA_VERSION = 1
SECTIONS: tuple[str, ...] = (
    "Identity",
    "Communication Preferences",
    "Work Context",
    "Skills & Expertise",
    "Recent Topics",
    "Follow-ups",
)
EMPTY = "_(empty)_"
NOOP = "NOOP"
# When a profile is over its budget, items go from the least durable section first.
TRIM_ORDER: tuple[str, ...] = (
    "Recent Topics",
    "Skills & Expertise",
    "Work Context",
    "Communication Preferences",
    "Follow-ups",
    "Identity",
)
# A cut item keeps at least this many tokens; below that it is dropped whole (a stub helps nobody).
MIN_KEPT_ITEM_TOKENS = 8
TASK_LINE = "Task: rewrite-profile"

_HEADING = re.compile(r"^(#{1,2})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^```[\w-]*[ \t]*$")
_ITEM_START = re.compile(r"^(?:[-*+][ \t]|\d{1,3}[.)][ \t])")
_FRONTMATTER = re.compile(r"\A---[ \t]*\n(?P<yaml>.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONTMATTER_LINE = re.compile(r"^(?P<key>[a-z_]+):[ \t]*(?P<value>.*?)[ \t]*$")


class ProfileSchemaError(ValueError):
    """A text is not a profile body with the schema; `problems` says each way it is not."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class ProfileMeta:
    """The frontmatter: bookkeeping kept by the code, never by a model."""

    user_id: str
    last_updated: float | None  # None before the first version
    turn_count: int
    schema_version: int = SCHEMA_VERSION


class TurnText(Protocol):
    """What a prompt needs of a stored turn (already masked)."""

    @property
    def seq(self) -> int: ...

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


# Body


def empty_body() -> str:
    """The body of a profile that knows nothing yet: every section `_(empty)_`."""
    return render_body({})


def render_body(sections: Mapping[str, str]) -> str:
    """The body text for the given section contents, in schema order; missing or blank ones are `_(empty)_`."""
    parts = []
    for name in SECTIONS:
        content = (sections.get(name) or "").strip("\n").rstrip()
        if not content.strip():
            content = EMPTY
        parts.append(f"## {name}\n{content}")
    return "\n\n".join(parts) + "\n"


def parse_body(text: str) -> dict[str, str]:
    """The content of each section of a profile body, keyed by the schema's section names.

    Accepts headings of level 1 or 2 whose titles match the schema ignoring case and
    spacing, and one wrapping code fence (models add them). Raises ProfileSchemaError
    naming every problem: text before the first section, a missing, unknown, repeated
    or misplaced section. A section whose content is blank or `_(empty)_` maps to "".
    """
    lines = _strip_fence(text.strip().splitlines())
    problems: list[str] = []
    order: list[str] = []
    contents: dict[str, list[str]] = {}
    current: str | None = None
    wanted = {_fold(name): name for name in SECTIONS}
    for line in lines:
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(2)
            name = wanted.get(_fold(title))
            if name is None:
                problems.append(f"unknown section {title!r}")
                current = None
                continue
            if name in contents:
                problems.append(f"section {name!r} appears twice")
                current = None
                continue
            order.append(name)
            contents[name] = []
            current = name
            continue
        if current is None:
            if line.strip() and not order and not problems:
                problems.append("text before the first section")
            continue
        contents[current].append(line)
    missing = [name for name in SECTIONS if name not in contents]
    if missing:
        problems.append(f"missing section(s): {', '.join(missing)}")
    elif order != list(SECTIONS):
        problems.append(f"sections out of order; expected {', '.join(SECTIONS)}")
    if problems:
        raise ProfileSchemaError(problems)
    result = {}
    for name in SECTIONS:
        content = "\n".join(contents[name]).strip("\n").rstrip()
        result[name] = "" if content.strip() in ("", EMPTY) else content
    return result


def normalize_body(text: str) -> str:
    """The canonical form of a body with the schema (canonical headings, spacing, `_(empty)_`)."""
    return render_body(parse_body(text))


def interpret_rewrite(answer: str) -> str | None:
    """A model's answer to the rewrite task: None for NOOP, else the normalized new body.

    Raises ProfileSchemaError for anything else (prose, a partial profile, frontmatter),
    so the caller keeps the old profile.
    """
    stripped = "\n".join(_strip_fence(answer.strip().splitlines())).strip()
    if re.fullmatch(r"(?i)noop[.!]?", stripped):
        return None
    if stripped.startswith("---"):
        raise ProfileSchemaError(["the answer has frontmatter; only the body may be returned"])
    return normalize_body(stripped)


def section_items(content: str) -> list[str]:
    """The items of a section's content: each top-level bullet with its continuation lines, or paragraph."""
    items: list[list[str]] = []
    new_block = True
    for line in content.splitlines():
        if not line.strip():
            new_block = True
            continue
        if new_block or not items or _ITEM_START.match(line):
            items.append([line])
        else:
            items[-1].append(line)
        new_block = False
    return ["\n".join(item) for item in items]


def join_items(items: Sequence[str]) -> str:
    """Section content from items: bullets one per line, other paragraphs set apart by a blank line."""
    out = ""
    for item in items:
        if out:
            out += "\n" if _ITEM_START.match(item) else "\n\n"
        out += item
    return out


def fit_to_budget(body: str, budget: int, tokenizer: Tokenizer) -> str:
    """`body` unchanged when it fits in `budget` tokens, else with items dropped until it fits.

    Items go from the end of each section (sections hold their most important or newest
    items first), sections in TRIM_ORDER; the last item standing is cut on a token boundary
    rather than dropped when a cut suffices. The schema always survives: a section left
    with nothing reads `_(empty)_`.
    """
    if tokenizer.count(body) <= budget:
        return body
    sections = {name: section_items(content) for name, content in parse_body(body).items()}
    while True:
        text = render_body({name: join_items(items) for name, items in sections.items()})
        overflow = tokenizer.count(text) - budget
        if overflow <= 0:
            return text
        name = next((n for n in TRIM_ORDER if sections[n]), None)
        if name is None:
            # Six headings cost ~40 tokens and budgets start at 500: only a tiny test budget lands here.
            return text
        last = sections[name][-1]
        keep = tokenizer.count(last) - overflow - 1
        if keep >= MIN_KEPT_ITEM_TOKENS:
            sections[name][-1] = tokenizer.truncate(last, keep)
        else:
            sections[name].pop()


# Document (frontmatter + body)


def render_document(meta: ProfileMeta, body: str) -> str:
    """The stored Markdown document: YAML frontmatter, a blank line, then the body."""
    updated = f'"{iso_utc(meta.last_updated)}"' if meta.last_updated is not None else "null"
    return (
        "---\n"
        f'user_id: "{meta.user_id}"\n'
        f"schema_version: {meta.schema_version}\n"
        f"last_updated: {updated}\n"
        f"turn_count: {meta.turn_count}\n"
        "---\n\n" + body
    )


def split_document(text: str) -> tuple[dict[str, str], str]:
    """(frontmatter key -> raw value, body) of a document; an absent frontmatter gives ({}, text)."""
    found = _FRONTMATTER.match(text.lstrip("\ufeff"))
    if not found:
        return {}, text
    fields = {}
    for line in found.group("yaml").splitlines():
        parsed = _FRONTMATTER_LINE.match(line)
        if parsed:
            fields[parsed.group("key")] = parsed.group("value").strip().strip('"')
    return fields, text[found.end() :].lstrip("\n")


# The rewrite prompt


def rewrite_prompt(body: str, turns: Sequence[TurnText], budget: int) -> tuple[str, list[dict[str, str]]]:
    """The system prompt and the one user message asking a model to fold `turns` into `body`."""
    system = "\n".join(
        [
            TASK_LINE,
            "You maintain a long-lived profile of one user, read by AI assistants before they answer.",
            "You get the current profile body and the newest turns of one conversation.",
            f"Answer with exactly {NOOP} when the turns add nothing durable about the user.",
            "Otherwise answer with the complete rewritten profile body and nothing else:",
            "- exactly these sections as '## ' headings, in this order: " + "; ".join(SECTIONS) + ";",
            f"- write {EMPTY} under a section that has nothing;",
            "- short '- ' bullets, most important or newest first; Recent Topics newest first;",
            "- keep what is still true, update what the user corrected, drop what is stale;",
            "- only what the user said about themselves: no guesses, nothing the assistant said;",
            "- copy tokens such as {{PII_EMAIL_3f9a1c2b_1}} exactly; never guess what they stand for;",
            f"- at most {budget} tokens; no frontmatter, no code fences, no commentary.",
        ]
    )
    user = f"<current_profile>\n{body.strip()}\n</current_profile>\n\n{format_turns(turns)}"
    return system, [{"role": "user", "content": user}]


def format_turns(turns: Sequence[TurnText]) -> str:
    """Turns as a prompt shows them: one `[seq N] role: text` block each, inside `<new_turns>`."""
    blocks = [f"[seq {t.seq}] {t.role}: {_neutralize(t.content)}" for t in turns]
    return "<new_turns>\n" + "\n".join(blocks) + "\n</new_turns>"


def _neutralize(text: str) -> str:
    # A turn must not close the block it sits in and smuggle in text that reads as instructions.
    return re.sub(r"</?(new_turns|current_profile|known_subjects)\b", lambda m: m.group(0).replace("<", "‹"), text)


def _fold(title: str) -> str:
    return " ".join(title.split()).casefold()


def _strip_fence(lines: list[str]) -> list[str]:
    if len(lines) >= 2 and _FENCE.match(lines[0].strip()) and lines[-1].strip() == "```":
        return lines[1:-1]
    return lines
