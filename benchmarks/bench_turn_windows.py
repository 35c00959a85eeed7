"""What embedding each turn's window (the turn with the turns before and after it) costs, on one LoCoMo
conversation: CPU to index the turns as they are appended, and CPU per search, with the window weight at 0
and at the default.

    .venv/bin/python benchmarks/bench_turn_windows.py [--path ../shared/eval/locomo-dev.json] [--rounds 3]

Indexing: the first conversation's sessions are appended an exchange (two turns, `--append`) at a time to
real SQLite transcripts and indexed with `TurnRecallService.index_appended` after each append (local MiniLM,
cache off; local vector and BM25 indexes), as the consolidate function does, with and without windows,
alternately in each round so load moves both alike. Searching: every question, embedded once, is
recalled 5 deep (retrieve's default) and 50 deep (the eval's) from each pair of indexes, alternately.
Printed: CPU time (time.process_time) per turn indexed and per recall.

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
from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.eval.locomo import load_samples, read_conversation
from agentmem.ports.transcripts import NewTurn
from agentmem.service.turn_recall import TurnRecallService, adjacent_turn_ids, turn_thread_id
from agentmem.service.turn_search import DEFAULT_WINDOW_WEIGHT, HybridTurnRetriever

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev.json"
TENANT, USER = "t", "u"
# retrieve's default recallK, and the eval's.
RECALL_KS = (5, 50)


def _service(folder: Path, embedder: MiniLMEmbedder, window_weight: float) -> TurnRecallService:
    search = HybridTurnRetriever(
        TENANT, embedder=embedder, vectors=LocalVectorIndex(folder / "vectors.sqlite3"),
        lexical=LocalBm25Index(folder / "lexical.sqlite3"), adjacent=adjacent_turn_ids, group=turn_thread_id,
        window_weight=window_weight,
    )
    return TurnRecallService(TENANT, SqliteTranscriptStore(folder / "turns.sqlite3"), search)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--append", type=int, default=2, help="turns per append (default 2: one exchange)")
    args = parser.parse_args()
    conversation = read_conversation(load_samples(args.path)[0])
    sessions = [session for session in conversation.sessions if session]
    questions = [question.text for question in conversation.questions]
    embedder = MiniLMEmbedder(cache_size=0)
    query_vectors = embedder.embed(questions)
    weights = (0.0, DEFAULT_WINDOW_WEIGHT)
    index_cpu = dict.fromkeys(weights, 0.0)
    search_cpu = {(weight, k): 0.0 for weight in weights for k in RECALL_KS}
    turns = sum(len(session) for session in sessions)
    for round_number in range(args.rounds):
        with tempfile.TemporaryDirectory() as folder:
            services = {}
            for weight in weights:
                (Path(folder) / str(weight)).mkdir()
                services[weight] = _service(Path(folder) / str(weight), embedder, weight)
            for number, session in enumerate(sessions, start=1):
                thread = f"session-{number}"
                for start in range(0, len(session), args.append):
                    chunk = session[start : start + args.append]
                    for weight, service in services.items():
                        stored = service.transcripts.append(
                            TENANT, USER, thread,
                            [NewTurn("user", f"{turn.speaker}: {turn.text}", len(turn.text.split())) for turn in chunk],
                            chunk[0].created_at,
                        )
                        began = time.process_time()
                        service.index_appended(USER, thread, stored[0].seq, stored[-1].seq)
                        index_cpu[weight] += time.process_time() - began
            for question, vector in zip(questions, query_vectors, strict=True):
                for k in RECALL_KS:
                    for weight, service in services.items():
                        began = time.process_time()
                        service.recall(USER, question, vector, k)
                        search_cpu[(weight, k)] += time.process_time() - began
        print(f"round {round_number + 1} done, load average {os.getloadavg()[0]:.1f}")
    print(f"{conversation.sample_id}: {turns} turns in {len(sessions)} sessions, appended {args.append} at a time, "
          f"{len(questions)} questions, {args.rounds} rounds; load average {os.getloadavg()[0]:.1f}")
    asked = args.rounds * len(questions)
    for weight in weights:
        recalls = ", ".join(f"k {k} {1000 * search_cpu[(weight, k)] / asked:.3f}" for k in RECALL_KS)
        print(f"  window_weight {weight}: indexing {1000 * index_cpu[weight] / (args.rounds * turns):.2f} ms CPU "
              f"per turn; recall {recalls} ms CPU per question")


if __name__ == "__main__":
    main()
