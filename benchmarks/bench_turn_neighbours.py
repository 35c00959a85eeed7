"""What scoring neighbouring turns adds to a turn search: CPU time of the keyword search, the fusion
and the neighbour step, per query, on one LoCoMo conversation.

    .venv/bin/python benchmarks/bench_turn_neighbours.py [--path ../shared/eval/locomo-dev.json] [--rounds 5]

The first conversation's turns go into the local BM25 index (no embedder: the vector side's cost is
the embedder's and is measured by bench_embedder.py), and each of its questions is searched with
`neighbour_weight` 0 and 0.5, in interleaved rounds so load moves both alike. Printed: CPU time per
query (time.process_time) of each, and their difference, which is what the neighbour step costs.

Asserts nothing: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from agentmem.adapters.local.bm25_index import LocalBm25Index
from agentmem.eval.locomo import adjacent_dialog_ids, load_samples, read_conversation
from agentmem.service.turn_search import HybridTurnRetriever

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev.json"
DEPTH = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    conversation = read_conversation(load_samples(args.path)[0])
    questions = [question.text for question in conversation.questions]
    with tempfile.TemporaryDirectory() as folder:
        lexical = LocalBm25Index(Path(folder) / "lexical.sqlite3")
        plain = HybridTurnRetriever("t", embedder=None, vectors=None, lexical=lexical, neighbour_weight=0.0)
        with_neighbours = HybridTurnRetriever(
            "t", embedder=None, vectors=None, lexical=lexical, adjacent=adjacent_dialog_ids, neighbour_weight=0.5
        )
        plain.index_sessions("owner", conversation.sessions)
        cpu = {"neighbour_weight 0": 0.0, "neighbour_weight 0.5": 0.0}
        for _ in range(args.rounds):
            for name, search in (("neighbour_weight 0", plain), ("neighbour_weight 0.5", with_neighbours)):
                began = time.process_time()
                for question in questions:
                    search.search("owner", question, DEPTH)
                cpu[name] += time.process_time() - began
        lexical.close()
    calls = args.rounds * len(questions)
    print(f"{conversation.sample_id}: {sum(map(len, conversation.sessions))} turns, {len(questions)} questions, "
          f"{args.rounds} interleaved rounds, top {DEPTH}; load average {os.getloadavg()[0]:.1f}")
    for name, seconds in cpu.items():
        print(f"  {name}: {1000 * seconds / calls:.3f} ms CPU per query")
    extra = (cpu["neighbour_weight 0.5"] - cpu["neighbour_weight 0"]) * 1000 / calls
    print(f"  the neighbour step: {extra:+.3f} ms CPU per query")


if __name__ == "__main__":
    main()
