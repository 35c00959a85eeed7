"""Consolidation after new turns: learn facts, rewrite the profile, and say how it went.

Runs once per TurnsAppended event (the `consolidate` function in AWS, the
background worker locally). The turns are read from the transcript store, so
they are masked; a guard in front of the model withholds any personal data
that got through anyway. The model answers NOOP or a whole new profile body;
anything else is rejected and the profile stays as it was. A write that loses
the race with a concurrent consolidation re-reads the profile and asks again,
so no update is lost. Every run ends with one event on the bus,
ProfileUpdated, ProfileUnchanged or ProfileUpdateFailed, and one log line.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentmem.domain.errors import BackendUnavailable, Conflict
from agentmem.domain.log_ids import log_id
from agentmem.domain.pii import find_tokens, token_type_for
from agentmem.domain.profile import ProfileSchemaError, empty_body, interpret_rewrite, rewrite_prompt
from agentmem.ports.llm import LanguageModel, LlmOutOfFormat
from agentmem.ports.pii import PiiDetector
from agentmem.ports.transcripts import TranscriptStore, encode_turn_cursor
from agentmem.service.facts import FactService, LearnedFacts
from agentmem.service.profiles import PROFILE_UNCHANGED, PROFILE_UPDATE_FAILED, ProfileService

log = logging.getLogger(__name__)

MAX_TURNS_PER_RUN = 200
# Turns are cut for the prompt only; the transcript keeps them whole.
MAX_PROMPT_CHARS_PER_TURN = 8_000
# The model writes a whole body of up to the budget; the margin covers its headings and our count's slack.
REWRITE_TOKEN_MARGIN = 256
DEFAULT_MAX_ATTEMPTS = 3

Status = Literal["updated", "unchanged", "failed", "skipped"]


@dataclass(frozen=True)
class PromptTurn:
    """A stored turn as a prompt shows it."""

    seq: int
    role: str
    content: str


@dataclass
class ConsolidationResult:
    """How one consolidation went: the profile's fate and what the turns taught as facts."""

    status: Status
    version: int = 0
    facts_added: int = 0
    facts_superseded: int = 0
    reason: str | None = None
    retry: BackendUnavailable | Conflict | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "version": self.version, "factsAdded": self.facts_added,
            "factsSuperseded": self.facts_superseded, "reason": self.reason,
        }


class PiiGuardedModel:
    """A LanguageModel that withholds any personal data the detector finds before the model sees it.

    The text it is given is masked already; this is the second line, for whatever a
    transcript or a user's edit let through. Tokens are left alone; a value found is sent
    as `[EMAIL withheld]`. A detector failure fails closed: nothing is sent.

    The messages (turns, profile body, known subjects) are checked with ``detector``, the
    backend's full detector. The system prompt is agentmem's own template, holding no user
    text; it is checked with ``system_detector`` when one is given (wiring gives the structured
    rules), since a name model reads the template's headings ("Recent Topics") as organisations.
    """

    def __init__(self, inner: LanguageModel, detector: PiiDetector, system_detector: PiiDetector | None = None):
        self.inner = inner
        self.detector = detector
        self.system_detector = system_detector if system_detector is not None else detector
        self.model_id = inner.model_id

    def complete(
        self,
        system: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        temperature: float = 0.0,
    ) -> str:
        withheld = 0
        system, found = self._withhold(system, self.system_detector)
        withheld += found
        safe = []
        for message in messages:
            content, found = self._withhold(message["content"], self.detector)
            withheld += found
            safe.append({**message, "content": content})
        if withheld:
            log.warning("personal data withheld from the model", extra={"values": withheld})
        return self.inner.complete(system, safe, max_tokens=max_tokens, temperature=temperature)

    def _withhold(self, text: str, detector: PiiDetector) -> tuple[str, int]:
        try:
            spans = detector.detect(text)
        except BackendUnavailable:
            raise
        except Exception as exc:
            raise BackendUnavailable("pii", f"PII check before the model failed: {type(exc).__name__}") from exc
        tokens = [(t.start, t.end) for t in find_tokens(text)]
        spans = [s for s in spans if all(s.end <= start or s.start >= end for start, end in tokens)]
        for span in sorted(spans, key=lambda s: s.start, reverse=True):
            text = f"{text[: span.start]}[{token_type_for(span.entity_type)} withheld]{text[span.end :]}"
        return text, len(spans)


@dataclass
class ConsolidationService:
    """Folds new turns into a user's profile and facts."""

    tenant: str
    transcripts: TranscriptStore
    profiles: ProfileService
    facts: FactService
    llm: LanguageModel
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    def consolidate(self, user_id: str, thread_id: str, from_seq: int, to_seq: int) -> ConsolidationResult:
        """Consolidate turns `from_seq..to_seq` of a thread. Never raises for the model's answer.

        Idempotent per event: facts are learnt once per batch of turns (their ids derive from it),
        and only turns above the profile's watermark for the thread are folded into it and counted,
        so a replayed event changes nothing ("skipped", reason "already consolidated").

        The result's `retry` holds the error to raise when a backend failed or the write kept
        losing races: the caller raises it so the event is delivered again (idempotent).
        """
        turns = self._turns(user_id, thread_id, from_seq, to_seq)
        where = {"threadId": thread_id, "fromSeq": from_seq, "toSeq": to_seq}
        if not turns:
            # The turns are gone (the user was erased since): nothing to learn, nothing to say.
            return ConsolidationResult("skipped", reason="no turns")
        learned, facts_problem = self._learn_facts(user_id, thread_id, turns)
        result = self._rewrite_profile(user_id, thread_id, turns, where, learned)
        if facts_problem is not None:
            result.retry = result.retry or facts_problem
        if (result.status == "updated" or learned.added) and not self.transcripts.has_threads(self.tenant, user_id):
            # The user was erased while this ran: what it just wrote must not outlive the erasure. (A user
            # deleting one thread meanwhile keeps the others, and this; deleting their last thread meanwhile
            # cannot be told from an erase, so it too removes what this run wrote.)
            self.profiles.erase_user(self.tenant, user_id)
            self.facts.erase_user(self.tenant, user_id)
            return ConsolidationResult("skipped", reason="user erased meanwhile")
        return result

    def _turns(self, user_id: str, thread_id: str, from_seq: int, to_seq: int) -> list[PromptTurn]:
        count = max(0, min(to_seq - from_seq + 1, MAX_TURNS_PER_RUN))
        if count == 0:
            return []
        start = max(from_seq, to_seq - count + 1)
        turns: list[PromptTurn] = []
        cursor: str | None = encode_turn_cursor(self.tenant, user_id, thread_id, start - 1)
        # A store may answer a short page (DynamoDB stops at 1 MB): read on until the range is in.
        while cursor is not None and len(turns) < count:
            page = self.transcripts.list_turns(
                self.tenant, user_id, thread_id, limit=count - len(turns), cursor=cursor
            )
            turns += [
                PromptTurn(t.seq, t.role, t.content[:MAX_PROMPT_CHARS_PER_TURN])
                for t in page.items
                if start <= t.seq <= to_seq
            ]
            if page.items and page.items[-1].seq >= to_seq:
                break
            cursor = page.next_cursor
        return turns

    def _learn_facts(
        self, user_id: str, thread_id: str, turns: list[PromptTurn]
    ) -> tuple[LearnedFacts, BackendUnavailable | None]:
        try:
            return self.facts.learn(user_id, thread_id, turns), None
        except LlmOutOfFormat as exc:
            # Asking again would get the same answer; the turns stay in the transcript.
            log.warning("fact extraction answer rejected", extra={"userHash": log_id(user_id), "error": exc.message})
            return LearnedFacts(), None
        except BackendUnavailable as exc:
            log.warning("fact extraction failed", extra={"userHash": log_id(user_id), "part": exc.part})
            return LearnedFacts(), exc

    def _rewrite_profile(
        self, user_id: str, thread_id: str, turns: list[PromptTurn], where: dict[str, Any], learned: LearnedFacts
    ) -> ConsolidationResult:
        facts = {"factsAdded": len(learned.added), "factsSuperseded": len(learned.superseded)}
        base = ConsolidationResult("unchanged", facts_added=len(learned.added),
                                   facts_superseded=len(learned.superseded))
        budget = self.profiles.token_budget
        for _ in range(self.max_attempts):
            current = self.profiles.current(user_id)
            version = current.version if current else 0
            base.version = version
            # Turns the profile folded already (a replayed or overlapping event) are not folded again.
            folded = current.consolidated.get(thread_id, 0) if current else 0
            fresh = [t for t in turns if t.seq > folded]
            if not fresh:
                base.status, base.reason = "skipped", "already consolidated"
                return base
            if not any(t.role == "user" for t in fresh):
                # The assistant's words alone say nothing about the user: no model call.
                return self._unchanged(user_id, base, where, facts, "no user turns")
            body = current.body if current else empty_body()
            system, messages = rewrite_prompt(body, fresh, budget)
            try:
                answer = self.llm.complete(system, messages, max_tokens=budget + REWRITE_TOKEN_MARGIN)
                new_body = interpret_rewrite(answer)
            except ProfileSchemaError as exc:
                return self._failed(user_id, base, where, facts, f"out_of_format: {exc}", None)
            except LlmOutOfFormat as exc:
                return self._failed(user_id, base, where, facts, f"out_of_format: {exc.message}", None)
            except BackendUnavailable as exc:
                return self._failed(user_id, base, where, facts, f"unavailable: {exc.part}", exc)
            if new_body is None or new_body == body:
                return self._unchanged(user_id, base, where, facts, "noop" if new_body is None else "same body")
            try:
                saved = self.profiles.commit(
                    user_id, new_body, version, turns_added=len(fresh), source="consolidation",
                    event_detail={**where, **facts}, folded=(thread_id, fresh[-1].seq),
                )
            except Conflict:
                log.info("profile changed meanwhile; consolidating again", extra={"userHash": log_id(user_id)})
                continue
            except BackendUnavailable as exc:
                return self._failed(user_id, base, where, facts, f"unavailable: {exc.part}", exc)
            base.status, base.version = "updated", saved.version
            return base
        conflict = Conflict(f"profile of {user_id} kept changing during {self.max_attempts} attempts")
        return self._failed(user_id, base, where, facts, "conflict", conflict)

    def _unchanged(
        self, user_id: str, result: ConsolidationResult, where: dict[str, Any], facts: dict[str, int], reason: str
    ) -> ConsolidationResult:
        result.status, result.reason = "unchanged", reason
        self.profiles.publish(PROFILE_UNCHANGED, user_id, {**where, "version": result.version, **facts})
        return result

    def _failed(
        self,
        user_id: str,
        result: ConsolidationResult,
        where: dict[str, Any],
        facts: dict[str, int],
        reason: str,
        retry: BackendUnavailable | Conflict | None,
    ) -> ConsolidationResult:
        result.status, result.reason, result.retry = "failed", reason, retry
        log.warning(
            "profile consolidation failed; the profile is kept", extra={"userHash": log_id(user_id), "reason": reason}
        )
        self.profiles.publish(
            PROFILE_UPDATE_FAILED, user_id,
            {**where, "version": result.version, "reason": reason.split(":", 1)[0], "retrying": retry is not None,
             **facts},
        )
        return result
