"""LoCoMo recall through the product: conversations ingested over the HTTP API, questions asked with `retrieve`.

What a new user of a local agentmem would do, step by step:

1. a fresh data folder and `create_app` (the handlers `agentmem serve` runs, the default adapters);
2. each conversation is one user; each session one thread (`session-1`, `session-2`, ...); its turns
   are appended in order with `POST /v1/users/{u}/threads/{t}/turns`, one request per session. The
   first speaker's turns are `user` turns, the other's `assistant` turns; each turn's content is
   "Speaker: words", with " [shares <caption>]" for a shared image (the BLIP caption, as in the
   paper), because that is what a transcript of two people says;
3. the event worker is drained: the asynchronous indexing and consolidation (the `consolidate` function);
4. each question is a `POST /v1/agents/{a}/retrieve` with the conversation's user, in a new thread
   of its own, and its `recalled` turns are mapped back to dialog ids by (threadId, seq).

The one thing a client cannot do through the API is date a turn: the service stamps a turn with the
time it is appended. The eval sets the conversation service's clock to each session's date while it
appends that session, as if the user had talked on those days. Nothing else is touched.

Recall@k needs up to 50 turns per question, more than a normal answer packs: the eval asks with
`recallK: 50` and `tokenBudget: 32000` (the API's maxima); an agent's default is `recallK: 5` in
the 2,000-token budget. Tokens per answer and the latency of each retrieve call (the whole handler:
masking, query embedding, lessons, profile, facts, turn search, packing, run record) are reported.

`keyword_side=False` runs the turn search on its vector side alone, to measure what the keyword side is
worth. `ports` swaps adapters in (by `build_services` name: `vectors`, `lexical`, ...): the S3 Vectors
mode's figure (`scripts/eval_locomo_s3vectors.py`) runs the same questions on the AWS adapters so.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentmem.eval.locomo import (
    KS,
    Conversation,
    RecallsByCategory,
    conversation_summary,
    load_samples,
    question_counts,
    read_conversation,
    recall_at_k,
    recall_summary,
    select_samples,
)
from agentmem.ports.embedder import Embedder

AGENT = "locomo-reader"
MAX_RECALL_K = 50
MAX_TOKEN_BUDGET = 32_000


def _percentile(values: Sequence[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    position = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[position]


def _content(speaker: str, text: str, caption: str | None) -> str:
    line = f"{speaker}: {text}" if speaker else text
    return f"{line} [shares {caption}]" if caption else line


class _Api:
    """The local app's HTTP entry point, called as a client would (JSON in, status and JSON out)."""

    def __init__(self, app: Any):
        self.app = app

    def __call__(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        status, _, out = self.app.handle(
            method, path, {"Content-Type": "application/json"}, json.dumps(body).encode(), "127.0.0.1"
        )
        return status, json.loads(out) if out else None


def _ingest(api: _Api, app: Any, user: str, conversation: Conversation) -> dict[tuple[str, int], str]:
    """Append every session as a thread; the dialog id of each stored (threadId, seq)."""
    dialog_ids: dict[tuple[str, int], str] = {}
    speakers: list[str] = []
    for number, session in enumerate(conversation.sessions, start=1):
        if not session:
            continue
        thread = f"session-{number}"
        for turn in session:
            if turn.speaker not in speakers:
                speakers.append(turn.speaker)
        turns = [
            {
                "role": "user" if speakers.index(turn.speaker) == 0 else "assistant",
                "content": _content(turn.speaker, turn.text, turn.image_caption),
            }
            for turn in session
        ]
        session_time = session[0].created_at
        app.services.conversations.clock = lambda at=session_time: at
        status, answer = api("POST", f"/v1/users/{user}/threads/{thread}/turns", {"turns": turns})
        if status != 201:
            raise RuntimeError(f"appending {thread} of {conversation.sample_id} failed: {status} {answer}")
        for stored, turn in zip(answer["turns"], session, strict=True):
            dialog_ids[(thread, int(stored["seq"]))] = turn.turn_id
    return dialog_ids


def evaluate_through_api(
    path: str | Path,
    *,
    keyword_side: bool = True,
    embedder: Embedder | None = None,
    ks: Sequence[int] = KS,
    limit_conversations: int | None = None,
    conversations: Collection[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    ports: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Recall@k of `retrieve`'s `recalled` turns on a LoCoMo file, per category and overall.

    `conversations` keeps only the samples with those ids (a cross-validation fold); the result's
    `by_conversation` has each conversation's own recall, so folds can be scored from one run.

    `progress(done, total)` is called after each conversation (a progress bar's hook).

    Returns the same shape as `agentmem.eval.locomo.evaluate`, plus `tokens` and `latency_ms`.
    """
    from agentmem.local.server import create_app
    from agentmem.service.turn_recall import adjacent_turn_ids, turn_thread_id
    from agentmem.service.turn_search import HybridTurnRetriever

    started = time.perf_counter()
    # The handlers log every request and event at INFO, and consolidation warns of each personal value it
    # keeps from the model; the eval prints its own table (stdout stays one JSON object with --json).
    from agentmem.api.observability import logger

    quiet = logging.getLogger(logger.name)
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    ks = sorted(set(ks))
    if not ks or ks[0] < 1 or ks[-1] > MAX_RECALL_K:
        raise ValueError(f"k values must be between 1 and {MAX_RECALL_K}")
    per_category: RecallsByCategory = {}
    latencies: list[float] = []
    default_latencies: list[float] = []
    default_tokens: list[int] = []
    tokens: list[int] = []
    by_conversation: dict[str, Any] = {}
    samples = select_samples(load_samples(path), conversations)[:limit_conversations]
    counted = turns = skipped = irregular = missing = 0
    # The handlers' metrics (CloudWatch EMF lines, printed) go to stderr: stdout is the eval's own answer.
    with tempfile.TemporaryDirectory(prefix="agentmem-locomo-api-") as folder, contextlib.redirect_stdout(sys.stderr):
        adapters = {**(ports or {}), **({"embedder": embedder} if embedder is not None else {})}
        # No embedding cache: every question pays for its embedding, as a new input would.
        app = create_app(Path(folder), start_worker=False, ports=adapters or None, embedding_cache_size=0)
        try:
            if not keyword_side:
                recall = app.services.turn_recall
                assert recall is not None, "build_services always wires the turn recall"
                recall.search = HybridTurnRetriever(
                    app.settings.tenant, embedder=app.services.memory.embedder,
                    vectors=app.services.memory.vectors, lexical=None, adjacent=adjacent_turn_ids,
                    group=turn_thread_id,
                )
            api = _Api(app)
            for sample in samples:
                conversation = read_conversation(sample)
                counted += 1
                turns += sum(len(session) for session in conversation.sessions)
                irregular += conversation.evidence_entries_split
                missing += conversation.evidence_ids_missing
                user = f"locomo-{conversation.sample_id or counted}"
                dialog_ids = _ingest(api, app, user, conversation)
                while app.worker.drain(timeout=600):
                    pass
                if app.services.memory.bus.next_due_in() is not None:  # type: ignore[attr-defined]
                    raise RuntimeError("events still pending after draining: indexing did not finish")
                scored = [question for question in conversation.questions if question.evidence]
                skipped += len(conversation.questions) - len(scored)
                own: RecallsByCategory = {}
                for number, question in enumerate(scored, start=1):
                    body = {
                        "input": question.text, "userId": user, "threadId": f"question-{number}",
                        "tokenBudget": MAX_TOKEN_BUDGET, "recallK": max(ks),
                    }
                    began = time.perf_counter()
                    status, answer = api("POST", f"/v1/agents/{AGENT}/retrieve", body)
                    latencies.append((time.perf_counter() - began) * 1000)
                    if status != 200:
                        raise RuntimeError(f"retrieve failed: {status} {answer}")
                    tokens.append(int(answer["tokens"]))
                    ranked = [dialog_ids.get((r["threadId"], int(r["seq"])), "") for r in answer["recalled"]]
                    recalls = per_category.setdefault(question.category, {k: [] for k in ks})
                    mine = own.setdefault(question.category, {k: [] for k in ks})
                    for k in ks:
                        value = recall_at_k(ranked, question.evidence, k)
                        recalls[k].append(value)
                        mine[k].append(value)
                    # The same question as an agent asks it by default (recallK 5, tokenBudget 2000).
                    began = time.perf_counter()
                    status, answer = api("POST", f"/v1/agents/{AGENT}/retrieve", {
                        "input": question.text, "userId": user, "threadId": f"default-{number}",
                    })
                    default_latencies.append((time.perf_counter() - began) * 1000)
                    if status != 200:
                        raise RuntimeError(f"retrieve failed: {status} {answer}")
                    default_tokens.append(int(answer["tokens"]))
                by_conversation[conversation.sample_id or user] = conversation_summary(own, ks)
                if progress is not None:
                    progress(counted, len(samples))
        finally:
            app.close()
            quiet.setLevel(level)

    return {
        **recall_summary(per_category, ks),
        "questions": {**question_counts(per_category, ks), "skipped_without_evidence": skipped},
        "evidence": {"entries_split": irregular, "ids_not_in_conversation": missing},
        "conversations": counted,
        "turns": turns,
        "retriever": "retrieve" + ("" if keyword_side else ", vector side only"),
        "fusion": None,
        "recall_k": max(ks),
        "token_budget": MAX_TOKEN_BUDGET,
        "tokens": {"mean": round(sum(tokens) / len(tokens), 1) if tokens else None, "p50": _percentile(tokens, 0.5)},
        "latency_ms": {
            "p50": _round(_percentile(latencies, 0.5)),
            "p95": _round(_percentile(latencies, 0.95)),
            "calls": len(latencies),
        },
        "at_defaults": {
            "tokens": {
                "mean": round(sum(default_tokens) / len(default_tokens), 1) if default_tokens else None,
                "p50": _percentile(default_tokens, 0.5),
            },
            "latency_ms": {
                "p50": _round(_percentile(default_latencies, 0.5)),
                "p95": _round(_percentile(default_latencies, 0.95)),
            },
        },
        "by_conversation": by_conversation,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def format_extras(result: Mapping[str, Any]) -> str:
    """The lines the product path adds under the recall table: tokens and latency of `retrieve`."""
    latency, tokens = result["latency_ms"], result["tokens"]
    defaults = result["at_defaults"]
    return "\n".join([
        f"retrieve as measured (recallK {result['recall_k']}, tokenBudget {result['token_budget']}): "
        f"tokens per answer mean {tokens['mean']}, p50 {tokens['p50']}; "
        f"latency p50 {latency['p50']} ms, p95 {latency['p95']} ms over {latency['calls']} calls",
        f"retrieve at the defaults (recallK 5, tokenBudget 2000): tokens per answer mean "
        f"{defaults['tokens']['mean']}, p50 {defaults['tokens']['p50']}; latency p50 "
        f"{defaults['latency_ms']['p50']} ms, p95 {defaults['latency_ms']['p95']} ms",
        "(latency: the whole retrieve handler, query embedding included, embedding cache off)",
    ])
