"""Cross-validated turn-search settings on LoCoMo, measured through `retrieve`.

Tuning on the conversations one reports on overstates recall on new ones. This measures several
settings of the turn search ("variants": fusion weight, neighbouring turns, the next turn as keyword
context, dates in the embedded text, BM25's length normalisation) through the product path of
`agentmem.eval.locomo_api`, then cross-validates the choice between them: with K folds of
conversations, each fold's setting is the one with the best recall on the *other* folds (the tuning
side), and its recall is reported on that fold alone (the held-out side). Pooled over the folds,
that is an estimate of recall on conversations nothing was chosen on.

How it runs: the conversations are ingested once, as `evaluate_through_api` does (one user per
conversation, one thread per session, the worker drained: masking, storing, consolidation). Then for
each variant the recall indexes are rebuilt from the stored (masked) turns, the way
`TurnRecallService` indexes appended turns, into fresh index files with that variant's settings,
and every question is asked with `POST /v1/agents/{a}/retrieve` (recallK 50). Only the turn search
differs between variants: same transcripts, same profile and facts, same handler.

Run: python -m agentmem.eval.locomo_cv ../shared/eval/locomo-dev.json --folds 5 [--variant NAME ...] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from agentmem.adapters.local.bm25_index import DEFAULT_B, LocalBm25Index
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.domain.question_form import statement_form
from agentmem.eval.locomo import (
    CATEGORY_NAMES,
    RecallsByCategory,
    fold_conversations,
    load_samples,
    read_conversation,
    recall_at_k,
    select_samples,
)
from agentmem.eval.locomo_api import AGENT, MAX_RECALL_K, MAX_TOKEN_BUDGET, _Api, _ingest, _percentile
from agentmem.service.turn_recall import (
    DEFAULT_LENGTH_PRIOR_WEIGHT,
    DEFAULT_QUESTION_PRIOR_WEIGHT,
    adjacent_turn_ids,
    turn_thread_id,
)
from agentmem.service.turn_search import (
    DEFAULT_LEXICAL_WEIGHT,
    DEFAULT_NEIGHBOUR_WEIGHT,
    DEFAULT_SESSION_TOP,
    DEFAULT_SESSION_WEIGHT,
    DEFAULT_WINDOW_WEIGHT,
    HybridTurnRetriever,
)

KS = (5, 10, 25, 50)
# What a fold's choice maximises on its tuning side: the mean of R@5 and R@10 over its questions.
SELECTION_KS = (5, 10)
MULTI_HOP, TEMPORAL = 1, 2


@dataclass(frozen=True)
class Variant:
    """One setting of the turn search (the product's defaults unless said otherwise)."""

    name: str
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    neighbour_weight: float = DEFAULT_NEIGHBOUR_WEIGHT
    following_context: bool = False
    dense_dates: bool = True
    bm25_b: float = DEFAULT_B
    neighbour_span: int = 1
    statement_queries: bool = False
    embed_kinds: bool = True
    session_weight: float = DEFAULT_SESSION_WEIGHT
    session_top: int = DEFAULT_SESSION_TOP
    length_prior_weight: float = DEFAULT_LENGTH_PRIOR_WEIGHT
    question_prior_weight: float = DEFAULT_QUESTION_PRIOR_WEIGHT
    window_weight: float = DEFAULT_WINDOW_WEIGHT
    vector_depth: int | None = None

    @property
    def index_key(self) -> tuple[bool, bool, float, bool, bool]:
        """What changes the indexed documents: variants with the same key share one pair of indexes."""
        return (self.following_context, self.dense_dates, self.bm25_b, self.embed_kinds, self.window_weight > 0)

    def indexes(self, folder: Path) -> tuple[LocalVectorIndex, LocalBm25Index]:
        """Fresh index files in `folder` for this variant's documents."""
        return LocalVectorIndex(folder / "vectors.sqlite3"), LocalBm25Index(folder / "lexical.sqlite3", b=self.bm25_b)

    def retriever(
        self, tenant: str, embedder: Any, indexes: tuple[LocalVectorIndex, LocalBm25Index]
    ) -> HybridTurnRetriever:
        """A turn search with these settings over `indexes`."""
        vectors, lexical = indexes
        return HybridTurnRetriever(
            tenant, embedder=embedder, vectors=vectors, lexical=lexical,
            lexical_weight=self.lexical_weight, neighbour_weight=self.neighbour_weight,
            adjacent=(
                functools.partial(adjacent_turn_ids, span=self.neighbour_span) if self.neighbour_weight > 0 else None
            ),
            following_context=self.following_context, dense_dates=self.dense_dates,
            dense_query=statement_form if self.statement_queries else None,
            embed_kinds=self.embed_kinds, group=turn_thread_id if self.session_weight > 0 else None,
            session_weight=self.session_weight, session_top=self.session_top, window_weight=self.window_weight,
            vector_depth=self.vector_depth,
        )


# The turn search as issue 22 found it: equal weights, no neighbours, the previous turn as keyword context,
# tokens embedded as they are, no session scores.
BASELINE = Variant("baseline", neighbour_weight=0.0, embed_kinds=False, session_weight=0.0, length_prior_weight=0.0,
                   question_prior_weight=0.0, window_weight=0.0)
_NEIGHBOURS = replace(BASELINE, name="neighbours-0.5", neighbour_weight=0.5)
# The search shipped after stage 5: neighbours, tokens embedded as kinds, the session's score at 0.5.
_SESSIONS = replace(_NEIGHBOURS, name="kinds+sessions-0.5", embed_kinds=True, session_weight=0.5)
# Stage 6's choice: a prior on the turn's length, the session's score at 1.0.
_LENGTHS = replace(_SESSIONS, name="length-0.3+sessions-1.0", length_prior_weight=0.3, session_weight=1.0)
# Stage 7's choice, shipped after the third round: length 0.2, questions 0.35, sessions 1.0.
_PRIORS = replace(_LENGTHS, name="length-0.2+questions-0.35", length_prior_weight=0.2, question_prior_weight=0.35)
# Stage 1: each lever alone against the baseline, at a few values. Stage 2: around the one that held
# out in every fold (neighbours), and the others again on top of it.
STAGES: Mapping[str, tuple[Variant, ...]] = {
    "levers": (
        BASELINE,
        replace(BASELINE, name="lexical-weight-0.6", lexical_weight=0.6),
        replace(BASELINE, name="lexical-weight-0.7", lexical_weight=0.7),
        replace(BASELINE, name="lexical-weight-0.4", lexical_weight=0.4),
        replace(BASELINE, name="neighbours-0.1", neighbour_weight=0.1),
        replace(BASELINE, name="neighbours-0.2", neighbour_weight=0.2),
        replace(BASELINE, name="neighbours-0.35", neighbour_weight=0.35),
        replace(BASELINE, name="next-turn-context", following_context=True),
        replace(BASELINE, name="undated-vectors", dense_dates=False),
        replace(BASELINE, name="bm25-b-0.5", bm25_b=0.5),
        replace(BASELINE, name="bm25-b-0.9", bm25_b=0.9),
    ),
    "neighbours": (
        BASELINE,
        replace(BASELINE, name="neighbours-0.35", neighbour_weight=0.35),
        _NEIGHBOURS,
        replace(BASELINE, name="neighbours-0.75", neighbour_weight=0.75),
        replace(BASELINE, name="neighbours-1.0", neighbour_weight=1.0),
        replace(_NEIGHBOURS, name="neighbours-0.5+span-2", neighbour_span=2),
        replace(_NEIGHBOURS, name="neighbours-0.5+next-turn", following_context=True),
        replace(_NEIGHBOURS, name="neighbours-0.5+bm25-b-0.5", bm25_b=0.5),
        replace(_NEIGHBOURS, name="neighbours-0.5+lexical-0.4", lexical_weight=0.4),
    ),
    # Stage 3: rewriting the question for the vector side, with and without neighbours.
    "queries": (
        BASELINE,
        replace(BASELINE, name="statement-queries", statement_queries=True),
        _NEIGHBOURS,
        replace(_NEIGHBOURS, name="neighbours-0.5+statement-queries", statement_queries=True),
    ),
    # Stage 4, on top of neighbours (the shipped search before it): tokens embedded as their kind, the
    # session's score, both, and the fusion weight again now that the vector side is stronger.
    "sessions": (
        _NEIGHBOURS,
        replace(_NEIGHBOURS, name="kinds", embed_kinds=True),
        replace(_NEIGHBOURS, name="sessions-0.3", session_weight=0.3),
        replace(_NEIGHBOURS, name="kinds+sessions-0.2", embed_kinds=True, session_weight=0.2),
        replace(_NEIGHBOURS, name="kinds+sessions-0.3", embed_kinds=True, session_weight=0.3),
        replace(_NEIGHBOURS, name="kinds+sessions-0.5", embed_kinds=True, session_weight=0.5),
        replace(_NEIGHBOURS, name="kinds+sessions-0.3+top-3", embed_kinds=True, session_weight=0.3, session_top=3),
        replace(_NEIGHBOURS, name="kinds+sessions-0.3+lexical-0.4", embed_kinds=True, session_weight=0.3,
                lexical_weight=0.4),
        replace(_NEIGHBOURS, name="kinds+sessions-0.3+neighbours-0.75", embed_kinds=True, session_weight=0.3,
                neighbour_weight=0.75),
    ),
    # Stage 5: stage 4 chose the largest session weight it offered in every fold, so above it.
    "session-weights": (
        _NEIGHBOURS,
        replace(_NEIGHBOURS, name="kinds", embed_kinds=True),
        replace(_NEIGHBOURS, name="kinds+sessions-0.5", embed_kinds=True, session_weight=0.5),
        replace(_NEIGHBOURS, name="kinds+sessions-0.75", embed_kinds=True, session_weight=0.75),
        replace(_NEIGHBOURS, name="kinds+sessions-1.0", embed_kinds=True, session_weight=1.0),
        replace(_NEIGHBOURS, name="kinds+sessions-0.5+top-1", embed_kinds=True, session_weight=0.5, session_top=1),
        replace(_NEIGHBOURS, name="kinds+sessions-1.0+top-1", embed_kinds=True, session_weight=1.0, session_top=1),
    ),
    # Stage 6 (third round): a prior on the turn's length, over the shipped search, and the session weight
    # again beside it (a scratch re-ranking of the candidates chose 1.0 with the prior).
    "lengths": (
        _SESSIONS,
        replace(_SESSIONS, name="length-0.2", length_prior_weight=0.2),
        replace(_SESSIONS, name="length-0.3", length_prior_weight=0.3),
        replace(_SESSIONS, name="length-0.4", length_prior_weight=0.4),
        replace(_SESSIONS, name="sessions-1.0", session_weight=1.0),
        replace(_SESSIONS, name="length-0.2+sessions-1.0", length_prior_weight=0.2, session_weight=1.0),
        replace(_SESSIONS, name="length-0.3+sessions-1.0", length_prior_weight=0.3, session_weight=1.0),
        replace(_SESSIONS, name="length-0.4+sessions-1.0", length_prior_weight=0.4, session_weight=1.0),
    ),
    # Stage 7: over stage 6's choice (length 0.3, sessions 1.0), a prior against turns that ask rather than tell.
    "questions": (
        _LENGTHS,
        replace(_LENGTHS, name="questions-0.2", question_prior_weight=0.2),
        replace(_LENGTHS, name="questions-0.35", question_prior_weight=0.35),
        replace(_LENGTHS, name="questions-0.5", question_prior_weight=0.5),
        replace(_LENGTHS, name="length-0.2+questions-0.35", length_prior_weight=0.2, question_prior_weight=0.35),
        replace(_LENGTHS, name="questions-0.35+sessions-0.5", question_prior_weight=0.35, session_weight=0.5),
    ),
    # Stage 8 (fourth round): each turn also embedded with the turns before and after it, a third list; the
    # vector query 200 deep (about 100 turns and 100 windows), then 100 shared (what every fold chose).
    "windows": (
        _PRIORS,
        replace(_PRIORS, name="windows-0.2", window_weight=0.2, vector_depth=200),
        replace(_PRIORS, name="windows-0.3", window_weight=0.3, vector_depth=200),
        replace(_PRIORS, name="windows-0.4", window_weight=0.4, vector_depth=200),
        replace(_PRIORS, name="windows-0.3+vector-depth-100", window_weight=0.3, vector_depth=100),
    ),
}


@dataclass
class Measured:
    """Per-question recall of each variant, by conversation and category, and its retrieve latencies."""

    ks: tuple[int, ...]
    conversations: list[str]
    recalls: dict[str, dict[str, RecallsByCategory]] = field(default_factory=dict)  # variant -> conv -> ...
    latency_ms: dict[str, list[float]] = field(default_factory=dict)


def measure_variants(
    path: str | Path,
    variants: Sequence[Variant],
    *,
    conversations: Sequence[str] | None = None,
    ks: Sequence[int] = KS,
    progress: Callable[[str], None] | None = None,
) -> Measured:
    """Ingest the conversations once through the API, then measure every variant's recall through `retrieve`."""
    from agentmem.api.observability import logger
    from agentmem.local.server import create_app

    ks = tuple(sorted(set(ks)))
    if not ks or ks[0] < 1 or ks[-1] > MAX_RECALL_K:
        raise ValueError(f"k values must be between 1 and {MAX_RECALL_K}")
    quiet = logging.getLogger(logger.name)
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    samples = select_samples(load_samples(path), conversations)
    parsed = [read_conversation(sample) for sample in samples]
    measured = Measured(ks=ks, conversations=[c.sample_id for c in parsed])
    with tempfile.TemporaryDirectory(prefix="agentmem-locomo-cv-") as folder, contextlib.redirect_stdout(sys.stderr):
        app = create_app(Path(folder), start_worker=False, embedding_cache_size=0)
        try:
            api = _Api(app)
            dialog_ids: dict[str, dict[tuple[str, int], str]] = {}
            for conversation in parsed:
                user = f"locomo-{conversation.sample_id}"
                dialog_ids[conversation.sample_id] = _ingest(api, app, user, conversation)
                while app.worker.drain(timeout=600):
                    pass
                if progress is not None:
                    progress(f"ingested {conversation.sample_id}")
            recall = app.services.turn_recall
            assert recall is not None, "build_services always wires the turn recall"
            built: dict[tuple[bool, bool, float, bool, bool], tuple[LocalVectorIndex, LocalBm25Index]] = {}
            try:
                for variant in variants:
                    indexes = built.get(variant.index_key)
                    fresh = indexes is None
                    if indexes is None:
                        variant_folder = Path(folder) / f"indexes-{len(built) + 1}"
                        variant_folder.mkdir()
                        indexes = built[variant.index_key] = variant.indexes(variant_folder)
                    recall.search = variant.retriever(app.settings.tenant, app.services.memory.embedder, indexes)
                    recall.length_prior_weight = variant.length_prior_weight
                    recall.question_prior_weight = variant.question_prior_weight
                    if fresh:
                        _reindex(recall, parsed, dialog_ids)
                    measured.recalls[variant.name], measured.latency_ms[variant.name] = _measure(
                        api, parsed, dialog_ids, ks
                    )
                    if progress is not None:
                        progress(f"measured {variant.name}" + (" (indexed anew)" if fresh else ""))
            finally:
                for pair in built.values():
                    for index in pair:
                        index.close()
        finally:
            app.close()
            quiet.setLevel(level)
    return measured


def _reindex(recall: Any, parsed: Sequence[Any], dialog_ids: Mapping[str, Mapping[tuple[str, int], str]]) -> None:
    """Index every stored turn anew with the current turn search, thread by thread (as appended)."""
    for conversation in parsed:
        last_seq: dict[str, int] = {}
        for thread, seq in dialog_ids[conversation.sample_id]:
            last_seq[thread] = max(seq, last_seq.get(thread, 0))
        for thread, last in last_seq.items():
            recall.index_appended(f"locomo-{conversation.sample_id}", thread, 1, last)


def _measure(
    api: _Api, parsed: Sequence[Any], dialog_ids: Mapping[str, Mapping[tuple[str, int], str]], ks: Sequence[int],
) -> tuple[dict[str, RecallsByCategory], list[float]]:
    by_conversation: dict[str, RecallsByCategory] = {}
    latencies: list[float] = []
    for conversation in parsed:
        user = f"locomo-{conversation.sample_id}"
        ids = dialog_ids[conversation.sample_id]
        own: RecallsByCategory = {}
        for number, question in enumerate((q for q in conversation.questions if q.evidence), start=1):
            body = {
                "input": question.text, "userId": user, "threadId": f"question-{number}",
                "tokenBudget": MAX_TOKEN_BUDGET, "recallK": max(ks),
            }
            began = time.perf_counter()
            status, answer = api("POST", f"/v1/agents/{AGENT}/retrieve", body)
            latencies.append((time.perf_counter() - began) * 1000)
            if status != 200:
                raise RuntimeError(f"retrieve failed: {status} {answer}")
            ranked = [ids.get((r["threadId"], int(r["seq"])), "") for r in answer["recalled"]]
            mine = own.setdefault(question.category, {k: [] for k in ks})
            for k in ks:
                mine[k].append(recall_at_k(ranked, question.evidence, k))
        by_conversation[conversation.sample_id] = own
    return by_conversation, latencies


def _pooled(parts: Sequence[RecallsByCategory], k: int, category: int | None = None) -> float | None:
    values = [
        value for part in parts for cat, recalls in part.items() if category is None or cat == category
        for value in recalls[k]
    ]
    return sum(values) / len(values) if values else None


def _criterion(parts: Sequence[RecallsByCategory]) -> float:
    return sum(_pooled(parts, k) or 0.0 for k in SELECTION_KS) / len(SELECTION_KS)


def _figures(parts: Sequence[RecallsByCategory]) -> dict[str, float | None]:
    return {
        "R@5": _pooled(parts, 5), "R@10": _pooled(parts, 10),
        "multi-hop R@10": _pooled(parts, 10, MULTI_HOP), "temporal R@10": _pooled(parts, 10, TEMPORAL),
        "open-domain R@10": _pooled(parts, 10, 3),
    }


def cross_validate(measured: Measured, folds: int, candidates: Sequence[str], baseline: str) -> dict[str, Any]:
    """Per fold: the candidate best on the other folds (ties: the first given), and its held-out recall.

    Returns `{"folds": [{"fold", "tuned_on", "reported_on", "chosen", "chosen_figures",
    "baseline_figures"}], "pooled": {"chosen": figures, "baseline": figures}}`, figures as fractions.
    """
    ids = measured.conversations
    rows = []
    chosen_parts: list[RecallsByCategory] = []
    baseline_parts: list[RecallsByCategory] = []
    for fold in range(1, folds + 1):
        held_out = fold_conversations(ids, folds, fold)
        tuning = [i for i in ids if i not in held_out]
        scores = {name: _criterion([measured.recalls[name][i] for i in tuning]) for name in candidates}
        best = max(candidates, key=lambda name: (scores[name], -candidates.index(name)))
        chosen = [measured.recalls[best][i] for i in held_out]
        before = [measured.recalls[baseline][i] for i in held_out]
        chosen_parts += chosen
        baseline_parts += before
        rows.append({
            "fold": fold, "tuned_on": tuning, "reported_on": held_out, "chosen": best,
            "tuning_criterion": scores[best],
            "chosen_figures": _figures(chosen), "baseline_figures": _figures(before),
        })
    return {
        "candidates": list(candidates), "baseline": baseline,
        "folds": rows, "pooled": {"chosen": _figures(chosen_parts), "baseline": _figures(baseline_parts)},
    }


def variant_table(measured: Measured) -> list[dict[str, Any]]:
    """Each variant's recall over every conversation measured, and per conversation at R@10."""
    rows = []
    for name, by_conversation in measured.recalls.items():
        parts = list(by_conversation.values())
        rows.append({
            "variant": name, **_figures(parts),
            "R@25": _pooled(parts, 25), "R@50": _pooled(parts, 50),
            "by_conversation_R@10": {i: _pooled([part], 10) for i, part in by_conversation.items()},
            "retrieve_p50_ms": _percentile(measured.latency_ms[name], 0.5),
        })
    return rows


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def format_report(table: Sequence[Mapping[str, Any]], cv: Mapping[str, Any]) -> str:
    """The variants' table and the cross-validation table, as plain text (recall in percent)."""
    lines = ["variant (all conversations)        R@5   R@10   R@25   R@50  multi-hop@10  temporal@10  open@10  p50 ms"]
    for row in table:
        lines.append(
            f"{row['variant']:<32}{_pct(row['R@5']):>6}{_pct(row['R@10']):>7}{_pct(row['R@25']):>7}"
            f"{_pct(row['R@50']):>7}{_pct(row['multi-hop R@10']):>14}{_pct(row['temporal R@10']):>13}"
            f"{_pct(row['open-domain R@10']):>9}{row['retrieve_p50_ms'] or 0:>8.1f}"
        )
    lines.append("")
    lines.append(f"cross-validation over {len(cv['folds'])} folds, candidates: {', '.join(cv['candidates'])}")
    lines.append("fold  reported on  chosen on the other folds      R@5 (base)    R@10 (base)   multi-hop@10 (base)"
                 "  temporal@10 (base)")
    for row in cv["folds"]:
        after, before = row["chosen_figures"], row["baseline_figures"]
        lines.append(
            f"{row['fold']:<6}{','.join(row['reported_on']):<13}{row['chosen']:<30}"
            + "".join(
                f"{_pct(after[key]):>7} ({_pct(before[key])})"
                for key in ("R@5", "R@10", "multi-hop R@10", "temporal R@10")
            )
        )
    after, before = cv["pooled"]["chosen"], cv["pooled"]["baseline"]
    lines.append(
        f"{'pooled':<6}{'all':<13}{'(each fold its own choice)':<30}"
        + "".join(
            f"{_pct(after[key]):>7} ({_pct(before[key])})" for key in ("R@5", "R@10", "multi-hop R@10", "temporal R@10")
        )
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: measure a stage's variants, print both tables (or write one JSON object too)."""
    parser = argparse.ArgumentParser(prog="python -m agentmem.eval.locomo_cv", description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--folds", type=int, default=5, help="folds of conversations (default 5)")
    parser.add_argument("--stage", choices=sorted(STAGES), default="levers", help="which variants (default levers)")
    parser.add_argument("--variant", action="append", default=None,
                        help="only this variant of the stage (repeatable); the stage's baseline is always measured")
    parser.add_argument("--json", type=Path, default=None, help="also write the full result to this file")
    args = parser.parse_args(argv)
    stage = STAGES[args.stage]
    by_name = {variant.name: variant for variant in stage}
    unknown = sorted(set(args.variant or ()) - set(by_name))
    if unknown:
        parser.error(f"not in stage {args.stage}: {', '.join(unknown)}")
    names = [stage[0].name, *[name for name in args.variant or by_name if name != stage[0].name]]
    variants = [by_name[name] for name in names]
    started = time.perf_counter()
    measured = measure_variants(
        args.path, variants, progress=lambda message: print(f"{time.perf_counter() - started:7.1f} s  {message}",
                                                            file=sys.stderr)
    )
    table = variant_table(measured)
    cv = cross_validate(measured, args.folds, names, stage[0].name)
    print(format_report(table, cv))
    if args.json is not None:
        args.json.write_text(json.dumps({
            "variants": [asdict(v) for v in variants], "table": table, "cross_validation": cv,
            "recalls": measured.recalls, "category_names": CATEGORY_NAMES,
        }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
