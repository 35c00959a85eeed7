"""What issue 22's two later levers add to a turn search, per query, on one LoCoMo conversation:
the session step (CPU of the fusion with `session_weight` 0 and the default) and the second query
embedding a question holding a personal-data token costs (tokens are embedded as their kind).

    .venv/bin/python benchmarks/bench_turn_sessions.py [--path ../shared/eval/locomo-dev.json] [--rounds 5]

Session step: the first conversation's turns go into the local BM25 index (neighbours on, as shipped),
and each question is searched with and without the session step, in interleaved rounds so load moves
both alike. Embedding: each question, with a person token in it as retrieve's masked input has, is
embedded alone by the local MiniLM (cache off), as the turn search does once more for such a question.
Printed: CPU time per query (time.process_time) and wall time for the embedding.

Asserts nothing: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from agentmem.adapters.local.bm25_index import LocalBm25Index
from agentmem.adapters.local.minilm import MiniLMEmbedder
from agentmem.domain.embedded_text import tokens_as_kinds
from agentmem.eval.locomo import adjacent_dialog_ids, dialog_session, load_samples, read_conversation
from agentmem.service.turn_search import DEFAULT_SESSION_WEIGHT, HybridTurnRetriever

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev.json"
DEPTH = 100
TOKEN = "{{PII_PERSON_a4c72700_1}}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    conversation = read_conversation(load_samples(args.path)[0])
    questions = [question.text for question in conversation.questions]
    with tempfile.TemporaryDirectory() as folder:
        lexical = LocalBm25Index(Path(folder) / "lexical.sqlite3")
        common = {"embedder": None, "vectors": None, "lexical": lexical, "adjacent": adjacent_dialog_ids}
        without = HybridTurnRetriever("t", **common, session_weight=0.0)
        with_sessions = HybridTurnRetriever("t", **common, group=dialog_session)
        without.index_sessions("owner", conversation.sessions)
        names = ("session_weight 0", f"session_weight {DEFAULT_SESSION_WEIGHT}")
        cpu = dict.fromkeys(names, 0.0)
        for _ in range(args.rounds):
            for name, search in zip(names, (without, with_sessions), strict=True):
                began = time.process_time()
                for question in questions:
                    search.search("owner", question, DEPTH)
                cpu[name] += time.process_time() - began
        lexical.close()
    calls = args.rounds * len(questions)
    print(f"{conversation.sample_id}: {sum(map(len, conversation.sessions))} turns, {len(questions)} questions, "
          f"{args.rounds} interleaved rounds, top {DEPTH}; load average {os.getloadavg()[0]:.1f}")
    for name, seconds in cpu.items():
        print(f"  keyword search + neighbours, {name}: {1000 * seconds / calls:.3f} ms CPU per query")
    print(f"  the session step: {(cpu[names[1]] - cpu[names[0]]) * 1000 / calls:+.3f} ms CPU per query")

    embedder = MiniLMEmbedder(cache_size=0)
    masked = [f"{TOKEN} asks: {question}" for question in questions]
    embedder.embed([tokens_as_kinds(masked[0])])  # the model loaded before timing
    began_cpu, began = time.process_time(), time.perf_counter()
    for text in masked:
        embedder.embed([tokens_as_kinds(text)])
    cpu_ms = 1000 * (time.process_time() - began_cpu) / len(masked)
    wall_ms = 1000 * (time.perf_counter() - began) / len(masked)
    print(f"  the second query embedding (MiniLM, one question): {cpu_ms:.2f} ms CPU, {wall_ms:.2f} ms wall; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
