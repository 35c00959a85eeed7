"""Recall@k of agentmem's turn search on LoCoMo conversations (snap-research/LoCoMo's JSON format).

Each conversation's dialog turns are indexed with `HybridTurnRetriever` (MiniLM vectors in the local
vector index, BM25 in the local lexical index, one owner per conversation), then every question is
searched and scored as in the LoCoMo paper: the share of the question's evidence dialog ids found
among the ids of the top-k retrieved turns, averaged over questions.

Choices where the data needs one:
- An evidence entry holding several ids ("D8:6; D9:17", "D9:1 D4:4 D4:6") is split into its ids,
  and "D:11:26" is read as D11:26; the paper's code would count such entries as never retrieved.
- Ids that name no turn of the conversation (a handful, e.g. "D4:36" of a 30-turn session) are
  dropped; a question left with no evidence id is not scored (the paper's code counts it as 1.0).
- "overall" covers all five categories, adversarial (5) included, as the paper's overall does
  (its per-question mean over every category); "overall_without_adversarial" leaves 5 out.
- Image turns are indexed with their BLIP caption, as in the paper; the `query` field (the search
  words the dataset's authors used to find the image) is not, since a real user's turn has none.

Run: python -m agentmem.eval.locomo ../shared/eval/locomo-dev.json [--json] [--retriever lexical|dense]
     [--fusion max|minmax|rrf] [--candidate-depth N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agentmem.adapters.local.bm25_index import LocalBm25Index
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.ports.embedder import Embedder
from agentmem.service.turn_search import (
    DEFAULT_CANDIDATE_DEPTH,
    FUSIONS,
    ConversationTurn,
    Fusion,
    HybridTurnRetriever,
)

RetrieverKind = Literal["hybrid", "lexical", "dense"]
RETRIEVER_KINDS: tuple[RetrieverKind, ...] = ("hybrid", "lexical", "dense")
KS = (5, 10, 25, 50)
ADVERSARIAL = 5
# Numbering as in the dataset file (the paper's tables list them in another order).
CATEGORY_NAMES: Mapping[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
# The paper's DRAGON retriever, dialog turns as the unit, all ten conversations (Table 3).
PAPER_DRAGON_OVERALL: Mapping[int, float] = {5: 0.567, 10: 0.662, 25: 0.767, 50: 0.827}
EVAL_TENANT = "locomo-eval"

_DIALOG_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class Question:
    """A QA item reduced to what recall needs: its text, category and the turn ids that answer it."""

    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo sample: its sessions of turns, in order, and its questions."""

    sample_id: str
    sessions: tuple[tuple[ConversationTurn, ...], ...]
    questions: tuple[Question, ...]
    evidence_entries_split: int  # raw evidence entries that held more than one id, or a misspelt one
    evidence_ids_missing: int  # evidence ids naming no turn of this conversation


def load_samples(path: str | Path) -> list[dict[str, Any]]:
    """The raw samples of a LoCoMo JSON file (a list of {"sample_id", "conversation", "qa", ...})."""
    with open(path, encoding="utf-8") as handle:
        samples = json.load(handle)
    if not isinstance(samples, list):
        raise ValueError(f"{path}: expected a JSON list of LoCoMo samples")
    return samples


def fold_conversations(sample_ids: Sequence[str], folds: int, fold: int) -> list[str]:
    """The conversations of fold `fold` (1 to `folds`): every `folds`-th id of the file, from the `fold`-th.

    With 5 folds of 5 conversations each fold is one conversation; the other folds are what a
    cross-validation tunes on while it reports on this one.
    """
    if folds < 2 or not 1 <= fold <= folds:
        raise ValueError("need folds >= 2 and 1 <= fold <= folds")
    if folds > len(sample_ids):
        raise ValueError(f"{folds} folds for {len(sample_ids)} conversations")
    return list(sample_ids[fold - 1 :: folds])


def select_samples(samples: Sequence[dict[str, Any]], conversations: Collection[str] | None) -> list[dict[str, Any]]:
    """The samples whose `sample_id` is in `conversations` (all of them for None), in file order."""
    if conversations is None:
        return list(samples)
    known = {str(sample.get("sample_id", "")) for sample in samples}
    unknown = sorted(set(conversations) - known)
    if unknown:
        raise ValueError(f"no such conversation in the file: {', '.join(unknown)}")
    return [sample for sample in samples if str(sample.get("sample_id", "")) in conversations]


def parse_evidence(entries: Sequence[str], known_ids: Collection[str]) -> tuple[list[str], int, int]:
    """The distinct turn ids a question's evidence names, in order, keeping only those in `known_ids`.

    Returns (ids, entries that were not one well-formed id, ids dropped as unknown).
    """
    ids: list[str] = []
    irregular = missing = 0
    for entry in entries:
        found = _DIALOG_ID.findall(entry)
        canonical = [f"D{int(session)}:{int(turn)}" for session, turn in found]
        if len(canonical) != 1 or canonical[0] != entry.strip():
            irregular += 1
        for turn_id in canonical:
            if turn_id not in known_ids:
                missing += 1
            elif turn_id not in ids:
                ids.append(turn_id)
    return ids, irregular, missing


def recall_at_k(ranked_ids: Sequence[str], evidence: Collection[str], k: int) -> float:
    """The share of `evidence` among the first `k` of `ranked_ids` (0.0 to 1.0)."""
    if not evidence:
        raise ValueError("recall needs at least one evidence id")
    top = set(ranked_ids[:k])
    return sum(1 for turn_id in evidence if turn_id in top) / len(evidence)


def adjacent_dialog_ids(turn_id: str) -> list[str]:
    """The dialog ids just before and after one ("D3:5" -> "D3:4", "D3:6"): the library path's `Adjacency`."""
    found = _DIALOG_ID.fullmatch(turn_id)
    if found is None:
        return []
    session, turn = int(found.group(1)), int(found.group(2))
    return [f"D{session}:{turn - 1}", f"D{session}:{turn + 1}"]


def dialog_session(turn_id: str) -> str:
    """The session of a dialog id ("D3:5" -> "D3"): the library path's `Grouping`."""
    return turn_id.split(":", 1)[0]


def _session_timestamp(date_text: str | None) -> float:
    if not date_text:
        return 0.0
    try:
        return datetime.strptime(date_text.strip(), _SESSION_DATE_FORMAT).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return 0.0


def _caption(turn: Mapping[str, Any]) -> str | None:
    caption = turn.get("blip_caption")
    return caption.strip() if isinstance(caption, str) and caption.strip() else None


def read_conversation(sample: Mapping[str, Any]) -> Conversation:
    """A sample's sessions (session_1, session_2, ... until the first missing) and scorable questions."""
    dialog = sample["conversation"]
    sessions = []
    number = 1
    while f"session_{number}" in dialog:
        date_text = dialog.get(f"session_{number}_date_time")
        created_at = _session_timestamp(date_text)
        sessions.append(
            tuple(
                ConversationTurn(
                    turn_id=turn["dia_id"],
                    speaker=turn.get("speaker", ""),
                    text=turn.get("text", ""),
                    session_date=date_text,
                    image_caption=_caption(turn),
                    created_at=created_at,
                )
                for turn in dialog[f"session_{number}"]
            )
        )
        number += 1
    known_ids = {turn.turn_id for session in sessions for turn in session}
    questions = []
    irregular_total = missing_total = 0
    for item in sample.get("qa", []):
        evidence, irregular, missing = parse_evidence(item.get("evidence", []), known_ids)
        irregular_total += irregular
        missing_total += missing
        questions.append(Question(str(item["question"]), int(item["category"]), tuple(evidence)))
    return Conversation(
        sample_id=str(sample.get("sample_id", "")),
        sessions=tuple(sessions),
        questions=tuple(questions),
        evidence_entries_split=irregular_total,
        evidence_ids_missing=missing_total,
    )


@contextmanager
def local_retriever(
    kind: RetrieverKind = "hybrid",
    *,
    embedder: Embedder | None = None,
    candidate_depth: int = DEFAULT_CANDIDATE_DEPTH,
    fusion: Fusion = "max",
) -> Iterator[HybridTurnRetriever]:
    """A retriever on agentmem's local indexes in a throwaway folder (removed on exit)."""
    if kind not in RETRIEVER_KINDS:
        raise ValueError(f"retriever must be one of {', '.join(RETRIEVER_KINDS)}")
    with tempfile.TemporaryDirectory(prefix="agentmem-locomo-") as folder:
        vectors = lexical = None
        if kind in ("hybrid", "dense"):
            if embedder is None:
                from agentmem.adapters.local.minilm import MiniLMEmbedder

                embedder = MiniLMEmbedder()
            vectors = LocalVectorIndex(Path(folder) / "vectors.sqlite3")
        else:
            embedder = None
        if kind in ("hybrid", "lexical"):
            lexical = LocalBm25Index(Path(folder) / "lexical.sqlite3")
        try:
            yield HybridTurnRetriever(
                EVAL_TENANT,
                embedder=embedder,
                vectors=vectors,
                lexical=lexical,
                candidate_depth=candidate_depth,
                fusion=fusion,
                adjacent=adjacent_dialog_ids,
                group=dialog_session,
            )
        finally:
            for index in (vectors, lexical):
                if index is not None:
                    index.close()


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def evaluate(
    path: str | Path,
    *,
    retriever: RetrieverKind = "hybrid",
    embedder: Embedder | None = None,
    ks: Sequence[int] = KS,
    candidate_depth: int = DEFAULT_CANDIDATE_DEPTH,
    fusion: Fusion = "max",
    conversations: Collection[str] | None = None,
) -> dict[str, Any]:
    """Recall@k per category and overall for every conversation in the LoCoMo file at `path`
    (or those whose sample id is in `conversations`).

    Returns `{"overall": {"5": r, ...}, "overall_without_adversarial": {...}, "by_category":
    {"1": {"5": r, ...}, ...}, "questions": {...}, ...}`, recalls as fractions (None for a group
    with no scored question). `embedder` defaults to the local MiniLM.
    """
    started = time.perf_counter()
    ks = sorted(set(ks))
    if not ks or ks[0] < 1:
        raise ValueError("k values must be >= 1")
    per_category: dict[int, dict[int, list[float]]] = {}
    by_conversation: dict[str, Any] = {}
    chosen = select_samples(load_samples(path), conversations)
    counted = turns = skipped = irregular = missing = 0
    with local_retriever(
        retriever, embedder=embedder, candidate_depth=candidate_depth, fusion=fusion
    ) as search:
        for sample in chosen:
            conversation = read_conversation(sample)
            counted += 1
            own: RecallsByCategory = {}
            turns += sum(len(session) for session in conversation.sessions)
            irregular += conversation.evidence_entries_split
            missing += conversation.evidence_ids_missing
            owner = conversation.sample_id or f"conversation-{counted}"
            search.index_sessions(owner, conversation.sessions)
            scored = [question for question in conversation.questions if question.evidence]
            skipped += len(conversation.questions) - len(scored)
            rankings = search.search_many(owner, [question.text for question in scored], max(ks))
            for question, hits in zip(scored, rankings, strict=True):
                ranked_ids = [hit.item_id for hit in hits]
                recalls = per_category.setdefault(question.category, {k: [] for k in ks})
                mine = own.setdefault(question.category, {k: [] for k in ks})
                for k in ks:
                    value = recall_at_k(ranked_ids, question.evidence, k)
                    recalls[k].append(value)
                    mine[k].append(value)
            by_conversation[owner] = conversation_summary(own, ks)

    return {
        **recall_summary(per_category, ks),
        "questions": {
            **question_counts(per_category, ks),
            "skipped_without_evidence": skipped,
        },
        "evidence": {"entries_split": irregular, "ids_not_in_conversation": missing},
        "conversations": counted,
        "turns": turns,
        "retriever": retriever,
        "fusion": fusion if retriever == "hybrid" else None,
        "candidate_depth": candidate_depth,
        "by_conversation": by_conversation,
        "seconds": round(time.perf_counter() - started, 1),
    }


RecallsByCategory = dict[int, dict[int, list[float]]]


def conversation_summary(per_category: RecallsByCategory, ks: Sequence[int]) -> dict[str, Any]:
    """One conversation's recall (overall and per category) and question counts, for `by_conversation`."""
    summary = recall_summary(per_category, ks)
    return {
        "overall": summary["overall"],
        "by_category": summary["by_category"],
        "questions": question_counts(per_category, ks),
    }


def recall_summary(per_category: RecallsByCategory, ks: Sequence[int]) -> dict[str, Any]:
    """Mean recall@k overall, without adversarial questions and per category, from per-question recalls."""

    def summary(categories: Collection[int]) -> dict[str, float | None]:
        return {
            str(k): _mean([value for category in categories for value in per_category[category][k]])
            for k in ks
        }

    categories = sorted(per_category)
    without_adversarial = [category for category in categories if category != ADVERSARIAL]
    return {
        "overall": summary(categories),
        "overall_without_adversarial": summary(without_adversarial),
        "by_category": {str(category): summary([category]) for category in categories},
        "category_names": {str(category): CATEGORY_NAMES.get(category, "other") for category in categories},
    }


def question_counts(per_category: RecallsByCategory, ks: Sequence[int]) -> dict[str, Any]:
    """How many questions were scored: overall, without adversarial ones, per category."""

    def count(categories: Collection[int]) -> int:
        return sum(len(per_category[category][ks[0]]) for category in categories)

    categories = sorted(per_category)
    without_adversarial = [category for category in categories if category != ADVERSARIAL]
    return {
        "overall": count(categories),
        "overall_without_adversarial": count(without_adversarial),
        "by_category": {str(category): count([category]) for category in categories},
    }


def format_table(result: Mapping[str, Any]) -> str:
    """`evaluate`'s result as a plain-text table, recall in percent, with the paper's DRAGON row."""
    ks = list(result["overall"])
    questions = result["questions"]

    def cell(value: float | None) -> str:
        return f"{'-' if value is None else format(100 * value, '.1f'):>8}"

    def row(label: str, count: int | str, recalls: Mapping[str, float | None]) -> str:
        return f"{label:<30}{count!s:>9}" + "".join(cell(recalls.get(k)) for k in ks)

    method = result["retriever"] + (f" ({result['fusion']} fusion)" if result.get("fusion") else "")
    lines = [
        f"LoCoMo recall@k, {method} retriever: {result['conversations']} conversations, "
        f"{result['turns']} turns, {questions['overall']} questions, {result['seconds']} s",
        f"{'category':<30}{'questions':>9}" + "".join(f"{'R@' + k:>8}" for k in ks),
    ]
    for category, recalls in result["by_category"].items():
        name = result["category_names"].get(category, "")
        lines.append(row(f"{category} {name}", questions["by_category"][category], recalls))
    lines.append(row("overall (paper's: all five)", questions["overall"], result["overall"]))
    lines.append(
        row("overall without adversarial", questions["overall_without_adversarial"],
            result["overall_without_adversarial"])
    )
    paper = {str(k): value for k, value in PAPER_DRAGON_OVERALL.items()}
    lines.append(row("paper, DRAGON, overall", "", paper))
    lines.append(
        f"skipped: {questions['skipped_without_evidence']} questions without evidence; "
        f"{result['evidence']['entries_split']} evidence entries split or repaired, "
        f"{result['evidence']['ids_not_in_conversation']} ids naming no turn dropped"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print the recall table (or, with --json, the result object) for one file."""
    parser = argparse.ArgumentParser(
        prog="python -m agentmem.eval.locomo", description="Recall@k of agentmem's turn search on LoCoMo."
    )
    parser.add_argument("path", type=Path, help="a LoCoMo JSON file, e.g. ../shared/eval/locomo-dev.json")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument(
        "--retriever", choices=RETRIEVER_KINDS, default="hybrid", help="hybrid (default) or one index alone"
    )
    parser.add_argument(
        "--fusion", choices=FUSIONS, default="max", help="how the hybrid merges its two lists (default max)"
    )
    parser.add_argument(
        "--candidate-depth",
        type=int,
        default=DEFAULT_CANDIDATE_DEPTH,
        help=f"candidates read from each index per question (default {DEFAULT_CANDIDATE_DEPTH})",
    )
    args = parser.parse_args(argv)
    if args.candidate_depth < 1:
        parser.error("--candidate-depth must be >= 1")
    result = evaluate(
        args.path, retriever=args.retriever, fusion=args.fusion, candidate_depth=args.candidate_depth
    )
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
