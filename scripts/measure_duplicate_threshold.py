"""Measure where MiniLM cosine similarity separates near-duplicate lessons from distinct ones.

A lesson is embedded by its digest (`build_digest`: editor comment, then the run's output, then its
input), so the pairs are digests. The fixture `scripts/data/duplicate_lessons.json` holds
editor-style lessons of one agent in topics: lessons of one topic make the same point in other words
on different runs (paraphrase pairs); lessons of different topics make different points (distinct
pairs). Every pair is scored with the project's own MiniLMEmbedder, exactly as retrieve compares
candidates.

The rule: the smallest multiple of 0.05 at least 0.05 above every distinct pair (a false merge hides
a lesson, a missed merge only repeats one; the margin is for a fixture this small), reported with the
share of paraphrase pairs it merges. Both the whole digest and `comparison_text` (the editor's words)
are measured; retrieve compares `comparison_text`.

    .venv/bin/python scripts/measure_duplicate_threshold.py
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from pathlib import Path

import numpy as np
from agentmem.adapters.local.minilm import MODEL_ID, MiniLMEmbedder
from agentmem.domain.lessons import build_digest, comparison_text

FIXTURE = Path(__file__).parent / "data" / "duplicate_lessons.json"
PERCENTILES = (0, 5, 25, 50, 75, 95, 100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--digest-max-chars", type=int, default=500)
    args = parser.parse_args()
    topics = json.loads(args.fixture.read_text())["topics"]
    embedder = MiniLMEmbedder()
    for compared in ("digest", "comparison text"):
        labelled = [
            (t["topic"], build_digest(x["comment"], x["output"], x["input"], args.digest_max_chars))
            for t in topics
            for x in t["lessons"]
        ]
        if compared != "digest":
            labelled = [(topic, comparison_text(digest)) for topic, digest in labelled]
        print(f"\n## comparing each lesson's {compared}")
        report(topics, labelled, embedder)


def report(topics: list[dict], labelled: list[tuple[str, str]], embedder: MiniLMEmbedder) -> None:
    vectors = np.asarray(embedder.embed([d for _, d in labelled]), dtype=np.float32)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = unit @ unit.T
    same: list[float] = []
    other: list[float] = []
    for i, j in itertools.combinations(range(len(labelled)), 2):
        (same if labelled[i][0] == labelled[j][0] else other).append(float(cosine[i, j]))
    print(f"model {MODEL_ID}; {len(topics)} topics, {len(labelled)} lessons")
    print("| pairs | n | " + " | ".join(f"p{p}" for p in PERCENTILES) + " |")
    print("|---|---|" + "---|" * len(PERCENTILES))
    for name, values in (("paraphrase (same topic)", same), ("distinct (other topic)", other)):
        cells = " | ".join(f"{np.percentile(values, p):.3f}" for p in PERCENTILES)
        print(f"| {name} | {len(values)} | {cells} |")
    threshold = math.ceil((max(other) + 0.05) / 0.05 - 1e-9) * 0.05
    merged = sum(v >= threshold for v in same) / len(same)
    print(f"threshold (smallest multiple of 0.05 >= 0.05 above every distinct pair): {threshold:.2f}")
    print(f"paraphrase pairs merged at it: {merged:.1%}; distinct pairs merged: 0.0%")
    for candidate in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8):
        s = sum(v >= candidate for v in same) / len(same)
        o = sum(v >= candidate for v in other) / len(other)
        print(f"  at {candidate:.2f}: paraphrases merged {s:.1%}, distinct merged {o:.1%}")


if __name__ == "__main__":
    main()
