"""`retrieve` at the defaults, the turn search as shipped against the one before issue 22's second round
(tokens embedded as they are, no session step), interleaved question by question on one data folder.

    .venv/bin/python benchmarks/bench_turn_recall_ab.py [--path ../shared/eval/locomo-dev.json] [--questions 200]

The first LoCoMo conversation is ingested through the API into a temporary folder (as `agentmem eval
locomo` does); then each question is asked with `POST /v1/agents/{a}/retrieve` at the defaults (recallK 5,
tokenBudget 2000, embedding cache off), once with each turn search, alternating which goes first, so
load moves both alike. Printed: p50 / p95 of wall time and mean CPU time (time.process_time) per call,
and the load average. Asserts nothing: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentmem.adapters.local.bm25_index import LocalBm25Index
from agentmem.eval.locomo import load_samples, read_conversation
from agentmem.eval.locomo_api import AGENT, _Api, _ingest
from agentmem.service.turn_recall import adjacent_turn_ids, turn_thread_id
from agentmem.service.turn_search import HybridTurnRetriever

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    from agentmem.api.observability import logger
    from agentmem.local.server import create_app

    logging.getLogger(logger.name).setLevel(logging.ERROR)
    conversation = read_conversation(load_samples(args.path)[0])
    questions = [q.text for q in conversation.questions][: args.questions]
    wall: dict[str, list[float]] = {"before": [], "shipped": []}
    cpu: dict[str, list[float]] = {"before": [], "shipped": []}
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(sys.stderr):
        lexical = LocalBm25Index(Path(folder) / "lexical-bench.db")
        app = create_app(Path(folder), start_worker=False, ports={"lexical": lexical}, embedding_cache_size=0)
        try:
            api = _Api(app)
            _ingest(api, app, "bench-user", conversation)
            while app.worker.drain(timeout=600):
                pass
            recall = app.services.turn_recall
            assert recall is not None
            shipped = recall.search
            memory = app.services.memory
            before = HybridTurnRetriever(
                app.settings.tenant, embedder=memory.embedder, vectors=memory.vectors, lexical=lexical,
                adjacent=adjacent_turn_ids, group=turn_thread_id, embed_kinds=False, session_weight=0.0,
            )
            searches = {"before": before, "shipped": shipped}
            for number, question in enumerate(questions):
                order = ("before", "shipped") if number % 2 == 0 else ("shipped", "before")
                for name in order:
                    recall.search = searches[name]
                    began_cpu, began = time.process_time(), time.perf_counter()
                    status, _ = api("POST", f"/v1/agents/{AGENT}/retrieve", {
                        "input": question, "userId": "bench-user", "threadId": f"q-{name}-{number}",
                    })
                    wall[name].append(1000 * (time.perf_counter() - began))
                    cpu[name].append(1000 * (time.process_time() - began_cpu))
                    if status != 200:
                        raise RuntimeError(f"retrieve failed: {status}")
        finally:
            app.close()
    print(f"{conversation.sample_id}: {len(questions)} questions, each asked with both turn searches, "
          f"interleaved; load average {os.getloadavg()[0]:.1f}")
    for name in ("before", "shipped"):
        q = statistics.quantiles(wall[name], n=100)
        print(f"  {name:8} retrieve at the defaults: p50 {q[49]:6.2f} ms  p95 {q[94]:6.2f} ms wall, "
              f"CPU mean {statistics.fmean(cpu[name]):6.2f} ms")


if __name__ == "__main__":
    main()
