"""Semantic facts about a user: extraction answers, identity, and when a new fact supersedes an old one.

A fact is one short sentence about the user ("User works at Acme") with a
`subject`, a key naming the attribute it sets ("employer"). A new fact
supersedes an existing one when it says the same thing again (very similar,
whatever the subject) or sets the same attribute (same subject, similar
enough): the old fact is kept with its validity period but no longer retrieved,
instead of piling up next to the new one.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentmem.domain.profile import TurnText, format_turns

FactStatus = Literal["active", "superseded"]

TASK_LINE = "Task: extract-facts"
MAX_FACT_CHARS = 500
MAX_FACTS_PER_BATCH = 20
MAX_SUBJECT_CHARS = 64
GENERAL_SUBJECT = "general"
# Measured with all-MiniLM-L6-v2 on pairs such as "User works at Acme" / "User works at Globex" (0.57),
# "User lives in Paris" / "... Berlin" (0.67), "User works at Acme" / "User is employed by Acme" (0.89),
# while unrelated facts of one user sit at 0.3-0.45: see tests/unit/test_facts_domain.py.
SAME_SUBJECT_SIMILARITY = 0.5
RESTATEMENT_SIMILARITY = 0.85


class FactsFormatError(ValueError):
    """A model's extraction answer is not the JSON the prompt asked for."""


@dataclass
class Fact:
    """A fact about a user, from the turns `source_seqs` of `thread_id`.

    `valid_from` is when it was learnt; a superseded fact has `valid_to` (when the
    fact that replaced it was learnt) and `superseded_by`.
    """

    tenant: str
    user_id: str
    fact_id: str
    text: str
    subject: str
    thread_id: str
    source_seqs: list[int]
    created_at: float
    valid_from: float
    valid_to: float | None = None
    status: FactStatus = "active"
    superseded_by: str | None = None


@dataclass(frozen=True)
class ExtractedFact:
    """A fact as a model stated it, before it is stored."""

    text: str
    subject: str = GENERAL_SUBJECT
    seqs: tuple[int, ...] = field(default_factory=tuple)


def normalize_subject(subject: str) -> str:
    """A subject key in canonical form: lower case, words joined by `_`, at most 64 characters.

    A `prefix:rest` subject keeps its colon ("skill:python"); an empty one is "general".
    """
    parts = [re.sub(r"[^0-9a-z]+", "_", part.casefold()).strip("_") for part in subject.split(":", 1)]
    key = ":".join(p for p in parts if p)
    return key[:MAX_SUBJECT_CHARS] or GENERAL_SUBJECT


def normalize_fact_text(text: str) -> str:
    """One line, single spaces, at most MAX_FACT_CHARS characters."""
    return " ".join(text.split())[:MAX_FACT_CHARS]


def fact_id_for(
    tenant: str, user_id: str, thread_id: str, from_seq: int, to_seq: int, ordinal: int, batch: str = ""
) -> str:
    """The id of the `ordinal`-th fact drawn from turns `from_seq..to_seq` (whose texts digest to `batch`).

    Derived, not random: a TurnsAppended event delivered twice yields the same ids, so the
    second delivery finds its facts stored and adds nothing. The batch digest tells apart turns
    that got the seqs of a deleted tail: they are other turns, with facts of their own.
    """
    raw = "\x1f".join([tenant, user_id, thread_id, str(from_seq), str(to_seq), str(ordinal), batch])
    return "fact_" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def batch_digest(texts: Sequence[str]) -> str:
    """A short digest of a batch of turn texts, for `fact_id_for`."""
    return hashlib.sha256("\x1e".join(texts).encode()).hexdigest()[:16]


def parse_extraction(answer: str, offered_seqs: Sequence[int]) -> list[ExtractedFact]:
    """The facts in a model's answer `{"facts": [{"text", "subject", "seqs"}]}`.

    One wrapping code fence is tolerated. Seqs the prompt did not offer are dropped;
    a fact citing none is attributed to every offered turn. Blank texts are skipped and
    at most MAX_FACTS_PER_BATCH facts are kept. Raises FactsFormatError when the answer
    is not that JSON object.
    """
    text = answer.strip()
    fenced = re.fullmatch(r"```[\w-]*[ \t]*\n(.*)\n```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    try:
        payload = json.loads(text)
    except ValueError:
        raise FactsFormatError('the answer is not JSON; expected {"facts": [...]}') from None
    items = payload.get("facts") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        raise FactsFormatError('the answer has no "facts" list')
    offered = set(offered_seqs)
    facts: list[ExtractedFact] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise FactsFormatError(f"fact {index} is not an object with a text")
        body = normalize_fact_text(item["text"])
        if not body:
            continue
        subject = item.get("subject")
        seqs = item.get("seqs")
        cited = [s for s in seqs if isinstance(s, int) and s in offered] if isinstance(seqs, list) else []
        facts.append(
            ExtractedFact(
                text=body,
                subject=normalize_subject(subject if isinstance(subject, str) else ""),
                seqs=tuple(sorted(set(cited or offered))),
            )
        )
    return facts[:MAX_FACTS_PER_BATCH]


def superseded_by_new(
    new: ExtractedFact,
    candidates: Sequence[tuple[Fact, float]],
    *,
    same_subject_similarity: float = SAME_SUBJECT_SIMILARITY,
    restatement_similarity: float = RESTATEMENT_SIMILARITY,
) -> list[Fact]:
    """The active facts among `candidates` (fact, cosine similarity to `new`) that `new` supersedes.

    A fact is superseded when it is a restatement (similarity >= `restatement_similarity`)
    or sets the same attribute (same subject, other than "general", and similarity >=
    `same_subject_similarity`). Superseded facts in `candidates` are ignored.
    """
    out = []
    for fact, similarity in candidates:
        if fact.status != "active":
            continue
        same_subject = new.subject != GENERAL_SUBJECT and normalize_subject(fact.subject) == new.subject
        if similarity >= restatement_similarity or (same_subject and similarity >= same_subject_similarity):
            out.append(fact)
    return out


def extraction_prompt(
    turns: Sequence[TurnText], known_subjects: Sequence[str]
) -> tuple[str, list[dict[str, str]]]:
    """The system prompt and the one user message asking a model for the facts in `turns`."""
    system = "\n".join(
        [
            TASK_LINE,
            "You extract durable facts about one user from the newest turns of a conversation.",
            'Answer with JSON only: {"facts": [{"text": "...", "subject": "...", "seqs": [N]}]}; '
            'answer {"facts": []} when there is none.',
            "- text: one short third-person sentence starting with 'User' (e.g. 'User works at Acme');",
            "- only what the user states about themselves, their life, work, preferences and plans;",
            "  nothing the assistant said, no small talk, no guesses;",
            "- subject: a short snake_case key naming the attribute the fact sets, specific enough that",
            "  two facts with one subject cannot both be true (name, home_city, employer, job_title,",
            "  preferred_language, skill:python, preference:answer_length, pet:dog); reuse a known",
            "  subject when the fact updates it;",
            "- seqs: the [seq N] numbers of the turns the fact comes from;",
            "- copy tokens such as {{PII_EMAIL_3f9a1c2b_1}} exactly; never guess what they stand for;",
            f"- at most {MAX_FACTS_PER_BATCH} facts.",
        ]
    )
    subjects = ", ".join(sorted(set(known_subjects))) or "(none)"
    user = f"<known_subjects>\n{subjects}\n</known_subjects>\n\n{format_turns(turns)}"
    return system, [{"role": "user", "content": user}]
