"""Measure where all-MiniLM-L6-v2 cosine similarity separates related from unrelated text, on LoCoMo.

    .venv/bin/python scripts/measure_threshold.py [--data ../shared/eval/locomo-dev.json] [--reject 0.95]
    .venv/bin/python scripts/measure_threshold.py --masked [--render kinds|tokens]  # as lessons are stored

Pairs scored (every text embedded with the project's own MiniLMEmbedder):
- related: (question, each turn its `evidence` names), QA categories 1-4;
- adversarial: the same for category 5, whose questions ask about things never said (reported, not used);
- same conversation: (question, random turns of its own conversation that are not evidence);
- unrelated: (question, random turns of a different conversation);
- near duplicate: (turn, the same turn lightly edited: a word dropped, case and punctuation changed).

The threshold is the smallest multiple of 0.05 that rejects at least `--reject` of the unrelated pairs.
Prints the distributions and the threshold sweep as Markdown (docs/eligibility-threshold.md keeps a copy).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from agentmem.adapters.local.minilm import MODEL_ID, MiniLMEmbedder

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = PROJECT_ROOT.parent / "shared" / "eval" / "locomo-dev.json"
PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
_DIALOG_ID = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class Question:
    conversation: str
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Corpus:
    turns: dict[tuple[str, str], str]  # (conversation, dialog id) -> "Speaker: text"
    turn_ids_by_conversation: dict[str, list[str]]
    questions: list[Question]


def load_corpus(path: Path) -> Corpus:
    conversations = json.loads(path.read_text(encoding="utf-8"))
    turns: dict[tuple[str, str], str] = {}
    turn_ids: dict[str, list[str]] = {}
    questions: list[Question] = []
    for conversation in conversations:
        name = conversation["sample_id"]
        turn_ids[name] = []
        for key, session in conversation["conversation"].items():
            if not (key.startswith("session_") and isinstance(session, list)):
                continue
            for turn in session:
                # A stored lesson is prose; a turn with only an image caption has no text to compare.
                if turn.get("text", "").strip():
                    turns[(name, turn["dia_id"])] = f"{turn['speaker']}: {turn['text']}"
                    turn_ids[name].append(turn["dia_id"])
        for qa in conversation["qa"]:
            # Some evidence entries hold several ids in one string ("D8:6; D9:17").
            evidence = tuple(dict.fromkeys(match for item in qa["evidence"] for match in _DIALOG_ID.findall(item)))
            evidence = tuple(dialog_id for dialog_id in evidence if (name, dialog_id) in turns)
            if evidence:
                questions.append(Question(name, qa["question"], int(qa["category"]), evidence))
    return Corpus(turns, turn_ids, questions)


def lightly_edited(text: str, rng: random.Random) -> str:
    """The same sentence as a user would retype it: one word dropped, case and punctuation changed."""
    words = text.split()
    if len(words) > 4:
        del words[rng.randrange(1, len(words))]
    edited = " ".join(words).lower().rstrip(".!?")
    return edited + rng.choice(["", ".", "?", " please", "!"])


def masked_texts(texts: Sequence[str], render: str) -> dict[str, str]:
    """Each text masked as agentmem stores it (the local detector, one agent's subject for all, so a
    value is the same token everywhere), then rendered as the embedder is given it."""
    import tempfile

    from agentmem.domain.embedded_text import lesson_embedded_text
    from agentmem.local.server import create_app

    with tempfile.TemporaryDirectory(prefix="measure-threshold-") as folder:
        app = create_app(Path(folder), start_worker=False)
        try:
            masked = [text for start in range(0, len(texts), 50)
                      for text in app.services.conversations.mask_texts("_agent:measure", texts[start:start + 50])]
        finally:
            app.close()
    shown = [lesson_embedded_text(text) for text in masked] if render == "kinds" else masked
    return dict(zip(texts, shown, strict=True))


def _cosines(embedder: MiniLMEmbedder, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    left = embedder.embed([a for a, _ in pairs])
    right = embedder.embed([b for _, b in pairs])
    return np.einsum("ij,ij->i", left, right)


def _distribution_row(name: str, scores: np.ndarray) -> str:
    values = " | ".join(f"{value:.3f}" for value in np.percentile(scores, PERCENTILES))
    return f"| {name} | {len(scores)} | {scores.mean():.3f} | {values} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--negatives-per-question", type=int, default=10)
    parser.add_argument("--near-duplicates", type=int, default=1000)
    parser.add_argument("--reject", type=float, default=0.95, help="share of unrelated pairs to reject")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--masked", action="store_true",
                        help="mask every text first, as a stored lesson and a retrieve input are (the local detector)")
    parser.add_argument("--render", choices=["kinds", "tokens"], default="kinds",
                        help="with --masked: tokens read as their kind (what agentmem embeds) or as stored")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    corpus = load_corpus(args.data)
    conversations = sorted(corpus.turn_ids_by_conversation)
    answerable = [question for question in corpus.questions if question.category != 5]
    adversarial = [question for question in corpus.questions if question.category == 5]

    related = [(q.text, corpus.turns[(q.conversation, d)]) for q in answerable for d in q.evidence]
    related_categories = np.array([q.category for q in answerable for _ in q.evidence])
    adversarial_pairs = [(q.text, corpus.turns[(q.conversation, d)]) for q in adversarial for d in q.evidence]
    same_conversation: list[tuple[str, str]] = []
    unrelated: list[tuple[str, str]] = []
    for question in answerable:
        own = [d for d in corpus.turn_ids_by_conversation[question.conversation] if d not in question.evidence]
        for dialog_id in rng.sample(own, args.negatives_per_question):
            same_conversation.append((question.text, corpus.turns[(question.conversation, dialog_id)]))
        others = [name for name in conversations if name != question.conversation]
        for _ in range(args.negatives_per_question):
            other = rng.choice(others)
            dialog_id = rng.choice(corpus.turn_ids_by_conversation[other])
            unrelated.append((question.text, corpus.turns[(other, dialog_id)]))
    all_turns = sorted(corpus.turns.values())
    near_duplicates = [
        (turn, lightly_edited(turn, rng)) for turn in rng.sample(all_turns, min(args.near_duplicates, len(all_turns)))
    ]

    if args.masked:
        groups = {"related": related, "adversarial": adversarial_pairs, "same": same_conversation,
                  "unrelated": unrelated, "near": near_duplicates}
        rendered = masked_texts(sorted({t for pairs in groups.values() for pair in pairs for t in pair}), args.render)
        related, adversarial_pairs, same_conversation, unrelated, near_duplicates = (
            [(rendered[a], rendered[b]) for a, b in pairs] for pairs in groups.values())

    embedder = MiniLMEmbedder(cache_size=100_000)
    started = time.perf_counter()
    scores = {
        "related (question, evidence turn)": _cosines(embedder, related),
        "adversarial question, its evidence turn": _cosines(embedder, adversarial_pairs),
        "same conversation, not evidence": _cosines(embedder, same_conversation),
        "unrelated (other conversation)": _cosines(embedder, unrelated),
        "near duplicate (lightly edited turn)": _cosines(embedder, near_duplicates),
    }
    elapsed = time.perf_counter() - started

    unrelated_scores = scores["unrelated (other conversation)"]
    quantile = float(np.quantile(unrelated_scores, args.reject))
    threshold = math.ceil(round(quantile / 0.05, 6)) * 0.05
    bootstrap = np.random.default_rng(args.seed)
    resampled = [
        float(np.quantile(bootstrap.choice(unrelated_scores, len(unrelated_scores)), args.reject)) for _ in range(1000)
    ]
    interval = np.percentile(resampled, [2.5, 97.5])

    masking = f"masked, tokens rendered as {args.render}" if args.masked else "as written (not masked)"
    print(f"model {MODEL_ID}; data {args.data.name}; {len(answerable)} answerable questions; texts {masking};")
    print(f"seed {args.seed}; {embedder.texts_encoded} distinct texts embedded in {elapsed:.1f} s\n")
    header = " | ".join(f"p{p}" for p in PERCENTILES)
    print(f"| pairs | n | mean | {header} |")
    print("|---" * (3 + len(PERCENTILES)) + "|")
    for name, values in scores.items():
        print(_distribution_row(name, values))

    print("\n| threshold | unrelated rejected | same-conversation rejected | related kept | near duplicates kept |")
    print("|---|---|---|---|---|")
    for candidate in np.arange(0.15, 0.651, 0.05):
        print(
            f"| {candidate:.2f} | {np.mean(unrelated_scores < candidate):.1%} "
            f"| {np.mean(scores['same conversation, not evidence'] < candidate):.1%} "
            f"| {np.mean(scores['related (question, evidence turn)'] >= candidate):.1%} "
            f"| {np.mean(scores['near duplicate (lightly edited turn)'] >= candidate):.1%} |"
        )
    related_scores = scores["related (question, evidence turn)"]
    print(f"\nrelated pairs kept at {threshold:.2f}, by LoCoMo QA category:")
    for category, name in ((1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop")):
        kept = related_scores[related_categories == category] >= threshold
        print(f"- {category} {name}: {kept.mean():.1%} of {kept.size}")
    print(
        f"\n{args.reject:.0%} of unrelated pairs score below {quantile:.3f} "
        f"(bootstrap 95% interval {interval[0]:.3f}-{interval[1]:.3f}); "
        f"chosen eligibilityThreshold (rounded up to 0.05): {threshold:.2f}"
    )


if __name__ == "__main__":
    main()
