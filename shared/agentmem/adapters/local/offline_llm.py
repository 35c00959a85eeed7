"""The offline language model: a transparent rule set that needs no model, for agentmem's own two tasks.

It answers the rewrite-profile and extract-facts prompts of `agentmem.domain`
in exactly the format a real model is asked for, so the whole consolidation
path (prompt, answer, validation, versions, events) runs with no model at all.
It reads only what the user states in a handful of English patterns; anything
else it leaves alone, and it says so (`CAN_EXTRACT`, `CANNOT_EXTRACT`).
Any other prompt is refused with LlmUnavailable rather than answered badly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from agentmem.domain import facts as facts_domain
from agentmem.domain import profile as profile_domain
from agentmem.domain.facts import normalize_subject
from agentmem.domain.profile import NOOP, join_items, parse_body, render_body, section_items
from agentmem.ports.llm import LlmUnavailable

MODEL_ID = "agentmem-offline-rules"

CAN_EXTRACT: tuple[str, ...] = (
    "name: 'my name is X', 'call me X', 'I am X' when X is a name the detector masked",
    "home: 'I live in X', 'I'm based in X'",
    "work: 'I work at/for X', 'I work as a X', 'my job is X', 'I'm (Name,) a X at Y', 'I'm working on X'",
    "answer language and style: 'answer in French', 'I prefer short answers', 'keep answers short',\n"
    "'give me SQL examples', 'please always/never X'",
    "likes and dislikes: 'I like/love/enjoy/prefer X', 'I dislike/hate/don't like X'",
    "skills written with a capital: 'I know/use/code in Python, Go and SQL'",
    "follow-ups: 'remind me to X', 'don't let me forget to X'",
    "recent topics: the user's questions, newest first, at most 5",
)
CANNOT_EXTRACT: tuple[str, ...] = (
    "anything implied rather than stated in one of the patterns above",
    "questions, hedges and suppositions ('maybe I work at X', 'do I live in X?'): skipped, never guessed",
    "other negation beyond 'don't like' and 'no longer' ('I quit Globex' is not read as leaving it)",
    "which of two likes are alternatives (tea and coffee are both kept)",
    "languages other than English",
    "what the assistant said (only the user's turns are read)",
    "summaries: it adds, replaces and drops whole lines; it never rewrites prose",
)
MAX_TOPICS = 5
MAX_TOPIC_WORDS = 12
MAX_PHRASE_WORDS = 10

_TOKEN = r"\{\{PII_[A-Z][A-Z0-9_]*_[0-9a-f]{8}_[1-9][0-9]*\}\}"
_PROPER = rf"(?:{_TOKEN}|[A-Z][\w'’&.-]*(?:\s+(?:[A-Z][\w'’&.-]*|&|of|de|la|del|von|van)){{0,3}})"
_PERSON_TOKEN = r"\{\{PII_PERSON_[0-9a-f]{8}_[1-9][0-9]*\}\}"
_PHRASE = r"([^.!?;\n]+)"
_I_AM = r"(?:I am|I'm|I’m|Im)"
_LANGUAGES = frozenset({
    "english", "french", "german", "spanish", "italian", "portuguese", "dutch", "polish", "czech",
    "swedish", "norwegian", "danish", "finnish", "greek", "turkish", "russian", "ukrainian", "arabic",
    "hebrew", "hindi", "bengali", "urdu", "chinese", "mandarin", "cantonese", "japanese", "korean",
    "vietnamese", "thai", "indonesian", "malay", "tagalog", "swahili", "romanian", "hungarian",
    "catalan", "basque", "irish", "welsh",
})
_COMMUNICATION_WORDS = re.compile(
    r"(?i)\b(answers?|responses?|repl(?:y|ies)|explanations?|bullets?|bullet points|examples?|summar(?:y|ies)|"
    r"tone|formal|informal|casual|concise|brief|terse|detailed|step[- ]by[- ]step|emojis?|jargon|markdown|"
    r"tables?|code snippets?|long|short)\b"
)
_PRONOUNS = frozenset(
    {
        "it",
        "this",
        "that",
        "them",
        "you",
        "your",
        "these",
        "those",
        "what",
        "how",
        "why",
        "when",
        "if",
        "whether",
        "so",
        "the",
        "a",
        "an",
    }
)
_ARTICLES = frozenset({"a", "an", "the", "my", "our", "some", "more", "to", "being", "really", "very"})
_CLAUSE_BREAKS = re.compile(
    r"(?i)\s+(?:but|because|since|although|though|so that|which|who|and then|and I|and i|and my|, and|, but)\b.*$"
)


@dataclass(frozen=True)
class Finding:
    """One thing a user stated: where it goes in the profile, and the fact it makes."""

    section: str
    line: str  # the profile item, "- ..."
    fact: str
    subject: str
    seq: int
    key: str | None = None  # single-valued items replace the item with the same key
    replaces_prefixes: tuple[str, ...] = ()  # items these prefixes start are replaced too (likes <-> dislikes)


@dataclass(frozen=True)
class _Turn:
    seq: int
    role: str
    content: str


class OfflineRuleModel:
    """LanguageModel that answers agentmem's rewrite-profile and extract-facts prompts by rules, offline."""

    model_id = MODEL_ID

    def complete(
        self,
        system: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        temperature: float = 0.0,
    ) -> str:
        task = system.strip().splitlines()[0] if system.strip() else ""
        prompt = "\n".join(m["content"] for m in messages if m.get("role") == "user")
        if task == profile_domain.TASK_LINE:
            return self._rewrite(prompt)
        if task == facts_domain.TASK_LINE:
            return self._extract(prompt)
        raise LlmUnavailable(
            "the offline rule set answers only agentmem's rewrite-profile and extract-facts tasks; "
            "set llmModelId (Bedrock) or openaiBaseUrl and openaiModel for a model"
        )

    @staticmethod
    def describe() -> str:
        """What this rule set can and cannot extract, for logs and docs."""
        return (
            "offline rules extract: "
            + "; ".join(CAN_EXTRACT)
            + ". They cannot read: "
            + "; ".join(CANNOT_EXTRACT)
            + "."
        )

    # Tasks

    def _rewrite(self, prompt: str) -> str:
        current = _block(prompt, "current_profile")
        try:
            sections = {name: section_items(content) for name, content in parse_body(current).items()}
        except profile_domain.ProfileSchemaError:
            sections = {name: [] for name in profile_domain.SECTIONS}
        before = {name: list(items) for name, items in sections.items()}
        turns = [t for t in _turns(_block(prompt, "new_turns")) if t.role == "user"]
        inserted = dict.fromkeys(sections, 0)
        for finding in _findings(turns):
            inserted[finding.section] += _apply(sections[finding.section], finding, inserted[finding.section])
        # Recent Topics reads newest first: the last question asked goes on top.
        for turn in turns:
            if topic := _topic(turn.content):
                _add_unique(sections["Recent Topics"], f"- {topic}", 0)
        del sections["Recent Topics"][MAX_TOPICS:]
        if sections == before:
            return NOOP
        return render_body({name: join_items(items) for name, items in sections.items()})

    def _extract(self, prompt: str) -> str:
        turns = [t for t in _turns(_block(prompt, "new_turns")) if t.role == "user"]
        seen: set[str] = set()
        out = []
        for finding in _findings(turns):
            if finding.fact.casefold() in seen:
                continue
            seen.add(finding.fact.casefold())
            out.append({"text": finding.fact, "subject": finding.subject, "seqs": [finding.seq]})
        return json.dumps({"facts": out[: facts_domain.MAX_FACTS_PER_BATCH]})


# Reading the prompt


def _block(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", prompt, re.DOTALL)
    return found.group(1) if found else ""


def _turns(block: str) -> list[_Turn]:
    turns: list[_Turn] = []
    for line in block.splitlines():
        head = re.match(r"^\[seq (\d+)\] (user|assistant): ?(.*)$", line)
        if head:
            turns.append(_Turn(int(head.group(1)), head.group(2), head.group(3)))
        elif turns:
            last = turns[-1]
            turns[-1] = _Turn(last.seq, last.role, f"{last.content}\n{line}")
    return turns


# The rules


def _sentences(text: str) -> Iterator[str]:
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        if sentence.strip():
            yield sentence.strip()


def _clean(phrase: str) -> str:
    phrase = _CLAUSE_BREAKS.sub("", phrase.strip())
    phrase = re.sub(r"[\s,:;–—-]+$", "", phrase)
    words = phrase.split()
    return " ".join(words[:MAX_PHRASE_WORDS])


def _head(phrase: str) -> str:
    """The word a phrase is about: its last word before a preposition ('over', 'with'...), articles dropped."""
    core = re.split(r"(?i)\s+(?:over|than|rather|instead|with|in|for|about|on|of)\b", phrase)[0]
    words = [w for w in re.findall(r"[\w+#']+", core.casefold()) if w not in _ARTICLES]
    return words[-1] if words else "general"


def _proper(text: str) -> str:
    # "Inc." keeps its dot inside a name, but a sentence's full stop is not part of one.
    return text.strip().rstrip(".")


def _third_person(text: str) -> str:
    """The user's own words about themselves, as a fact says them ("my passport" -> "their passport")."""
    swaps = {"my": "their", "mine": "theirs", "me": "them", "myself": "themselves", "i": "they", "i'm": "they're"}
    return re.sub(r"(?i)\b(?:my|mine|me|myself|I'm|I)\b", lambda m: swaps[m.group(0).casefold()], text)


def _is_object(phrase: str) -> bool:
    words = phrase.split()
    return bool(words) and words[0].casefold() not in _PRONOUNS


def _skill_items(phrase: str) -> list[str]:
    parts = re.split(r"\s*,\s*|\s+(?:and|or|&)\s+", phrase)
    return [p.strip() for p in parts if re.match(rf"^(?:{_TOKEN}|[A-Z0-9.#+][\w.#+/-]*)$", p.strip())]


Rule = Callable[[str, int], list[Finding]]


def _name_rules(s: str, seq: int) -> list[Finding]:
    out = []
    if m := re.search(rf"(?i:\bmy name is)\s+({_PROPER})", s):
        name = _proper(m.group(1))
        out.append(Finding("Identity", f"- Name: {name}", f"User's name is {name}", "name", seq, key="Name"))
    elif m := re.search(rf"(?i:\b(?:{_I_AM}|this is))\s+({_PERSON_TOKEN})", s):
        # "I am X" names the user only when X is a name the detector masked: "I am French" is not one.
        name = m.group(1)
        out.append(Finding("Identity", f"- Name: {name}", f"User's name is {name}", "name", seq, key="Name"))
    if m := re.search(rf"(?i:\bcall me)\s+({_PROPER})", s):
        name = _proper(m.group(1))
        out.append(
            Finding(
                "Identity",
                f"- Preferred name: {name}",
                f"User prefers to be called {name}",
                "preferred_name",
                seq,
                key="Preferred name",
            )
        )
    if m := re.search(rf"(?i:\b(?:I live|{_I_AM} (?:based|living|located)) in)\s+({_PROPER})", s):
        place = _proper(m.group(1))
        out.append(
            Finding("Identity", f"- Lives in: {place}", f"User lives in {place}", "home_location", seq, key="Lives in")
        )
    return out


def _work_rules(s: str, seq: int) -> list[Finding]:
    out = []
    employer = rf"(?i:\bI (?:work|am working|'m working) (?:at|for)|\b{_I_AM} employed (?:at|by))\s+({_PROPER})"
    if m := re.search(employer, s):
        org = _proper(m.group(1))
        out.append(
            Finding("Work Context", f"- Employer: {org}", f"User works at {org}", "employer", seq, key="Employer")
        )
    role = None
    if m := re.search(rf"(?i:\bI work as|\bmy (?:job|role|position|job title) is)\s+{_PHRASE}", s):
        role = _clean(re.sub(r"(?i)^(?:an?|the)\s+", "", m.group(1)))
        role = re.split(r"(?i)\s+(?:at|for)\s+", role)[0]
    elif m := re.search(
        rf"(?i:\b{_I_AM}\s+(?:{_PROPER},\s+)?an?)\s+([a-z][a-z -]{{2,40}}?)\s+(?:at|for)\s+({_PROPER})", s
    ):
        role = m.group(1).strip()
        if not any(f.subject == "employer" for f in out):
            org = _proper(m.group(2))
            out.append(
                Finding("Work Context", f"- Employer: {org}", f"User works at {org}", "employer", seq, key="Employer")
            )
    if role and _is_object(role):
        out.append(
            Finding("Work Context", f"- Role: {role}", f"User works as {_article(role)}", "job_title", seq, key="Role")
        )
    if m := re.search(rf"(?i:\b{_I_AM} (?:currently )?working on)\s+{_PHRASE}", s):
        project = _clean(m.group(1))
        if _is_object(project) or project.casefold().startswith(("a ", "an ", "the ")):
            out.append(
                Finding(
                    "Work Context",
                    f"- Working on: {project}",
                    f"User is working on {_third_person(project)}",
                    f"project:{_head(project)}",
                    seq,
                )
            )
    return out


def _preference_rules(s: str, seq: int) -> list[Finding]:
    out = []
    if m := re.search(r"(?i:\b(?:answer|reply|respond|write|talk|speak) (?:to me )?in)\s+([A-Za-z]+)", s):
        language = m.group(1).capitalize()
        if language.casefold() in _LANGUAGES:
            out.append(
                Finding(
                    "Communication Preferences",
                    f"- Language: {language}",
                    f"User wants answers in {language}",
                    "preferred_language",
                    seq,
                    key="Language",
                )
            )
    if m := re.search(
        r"(?i:\bkeep (?:the |your |my )?(answers|responses|replies|explanations) )(short|brief|concise|simple)", s
    ):
        what = f"{m.group(2).casefold()} {m.group(1).casefold()}"
        out.append(
            Finding("Communication Preferences", f"- Prefers: {what}", f"User prefers {what}",
                    f"preference:{_head(what)}", seq, replaces_prefixes=(f"- Avoid: {what}",))
        )
    if m := re.search(r"(?i:\b(?:give|show) me)\s+([^.!?;,\n]+)", s):
        what = _clean(m.group(1))
        # "give me SQL examples" asks for a style of answer; "give me a refund" is a request, not a preference.
        if _COMMUNICATION_WORDS.search(what) and _is_object(what):
            out.append(
                Finding("Communication Preferences", f"- Prefers: {what}", f"User prefers {_third_person(what)}",
                        f"preference:{_head(what)}", seq, replaces_prefixes=(f"- Avoid: {what}",))
            )
    if m := re.search(rf"(?i:\bplease (always|never|don't|do not))\s+{_PHRASE}", s):
        mode = "never" if m.group(1).casefold() in ("never", "don't", "do not") else "always"
        what = _clean(m.group(2))
        if what:
            out.append(
                Finding(
                    "Communication Preferences",
                    f"- {mode.capitalize()} {what}",
                    f"User asks the assistant to {mode} {_third_person(what)}",
                    f"instruction:{_head(what)}",
                    seq,
                )
            )
    if m := re.search(
        rf"(?i:\bI (?:really |much |strongly )?(dislike|hate|don't like|do not like|can't stand|"
        rf"prefer|like|love|enjoy|want|would like|'d like))\s+{_PHRASE}",
        s,
    ):
        verb, what = m.group(1).casefold(), _clean(m.group(2))
        if _is_object(what) or what.casefold().startswith("to "):
            negative = verb in ("dislike", "hate", "don't like", "do not like", "can't stand")
            communication = bool(_COMMUNICATION_WORDS.search(what))
            if verb in ("want", "would like", "'d like") and not communication:
                return out  # "I want a refund" is a request, not a preference
            subject = f"preference:{_head(what)}"
            if communication:
                label = "Avoid" if negative else "Prefers"
                fact = f"User {'dislikes' if negative else 'prefers'} {_third_person(what)}"
                out.append(
                    Finding(
                        "Communication Preferences",
                        f"- {label}: {what}",
                        fact,
                        subject,
                        seq,
                        replaces_prefixes=(f"- Avoid: {what}", f"- Prefers: {what}"),
                    )
                )
            else:
                label = "Dislikes" if negative else "Likes"
                fact = f"User {'dislikes' if negative else 'likes'} {_third_person(what)}"
                out.append(
                    Finding(
                        "Identity",
                        f"- {label}: {what}",
                        fact,
                        subject,
                        seq,
                        replaces_prefixes=(f"- Dislikes: {what}", f"- Likes: {what}"),
                    )
                )
    return out


def _skill_rules(s: str, seq: int) -> list[Finding]:
    pattern = (
        rf"(?i:\bI (?:know|use|code in|program in|write|work with|have experience (?:with|in))|"
        rf"\b{_I_AM} (?:experienced|proficient|fluent|an expert|good) (?:with|in|at))\s+{_PHRASE}"
    )
    out = []
    if m := re.search(pattern, s):
        for skill in _skill_items(_clean(m.group(1))):
            out.append(
                Finding(
                    "Skills & Expertise", f"- {skill}", f"User knows {skill}", f"skill:{normalize_subject(skill)}", seq
                )
            )
    return out


def _follow_up_rules(s: str, seq: int) -> list[Finding]:
    out = []
    if m := re.search(
        rf"(?i:\b(?:remind me (?:to|about)|don't let me forget (?:to|about)?|"
        rf"do not let me forget (?:to|about)?))\s+{_PHRASE}",
        s,
    ):
        task = re.sub(r"[\s,:;]+$", "", " ".join(m.group(1).split()[:20]))
        if task:
            out.append(
                Finding(
                    "Follow-ups",
                    f"- {task}",
                    f"User wants to be reminded to {_third_person(task)}",
                    f"follow_up:{normalize_subject(task)}",
                    seq,
                )
            )
    return out


RULES: tuple[Rule, ...] = (_name_rules, _work_rules, _preference_rules, _skill_rules, _follow_up_rules)


# A sentence that asks, hedges or supposes states nothing: it is skipped, never read as a fact.
_NOT_A_STATEMENT = re.compile(
    r"(?i)(?:\?\s*$|^\s*(?:do|does|did|am|is|are|was|were|can|could|should|would|will)\s+i\b|"
    r"\b(?:maybe|perhaps|probably|might|if i|i wish|i guess|not sure|i doubt|supposedly)\b)"
)


def _findings(turns: Sequence[_Turn]) -> list[Finding]:
    return [
        finding
        for turn in turns
        for sentence in _sentences(turn.content)
        if not _NOT_A_STATEMENT.search(sentence)
        for rule in RULES
        for finding in rule(sentence, turn.seq)
    ]


def _topic(text: str) -> str | None:
    for sentence in _sentences(text):
        asks = sentence.endswith("?") or re.match(
            r"(?i)^(?:help me|can you|could you|how do i|how to|explain|what is|tell me about|i need help with)\b",
            sentence,
        )
        if asks:
            words = sentence.rstrip("?").split()
            return " ".join(words[:MAX_TOPIC_WORDS]) + ("…" if len(words) > MAX_TOPIC_WORDS else "")
    return None


def _article(role: str) -> str:
    if role.casefold().startswith(("a ", "an ", "the ")) or not role[:1].islower():
        return role
    return ("an " if role[0] in "aeiou" else "a ") + role


# Applying findings to a section


def _apply(items: list[str], finding: Finding, position: int) -> int:
    """Put a finding's line in a section at `position`; returns how many items were inserted (0 or 1)."""
    if finding.key is not None:
        prefix = f"- {finding.key}:"
        for index, item in enumerate(items):
            if item.startswith(prefix):
                items[index] = finding.line
                return 0
        items.insert(position, finding.line)
        return 1
    replaced = {p.casefold() for p in finding.replaces_prefixes}
    kept = [i for i in items if i.casefold() not in replaced or i.casefold() == finding.line.casefold()]
    removed_before = sum(1 for i in items[:position] if i not in kept)
    items[:] = kept
    return _add_unique(items, finding.line, position - removed_before)


def _add_unique(items: list[str], line: str, position: int) -> int:
    if any(item.casefold() == line.casefold() for item in items):
        return 0
    items.insert(max(0, position), line)
    return 1
