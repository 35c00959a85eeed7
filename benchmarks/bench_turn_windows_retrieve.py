"""`retrieve` at the defaults with each turn's window embedded (as shipped) and without, interleaved question
by question on one data folder.

    .venv/bin/python benchmarks/bench_turn_windows_retrieve.py [--path ../shared/eval/locomo-dev.json]

The first LoCoMo conversation is ingested through the API into a temporary folder (as `agentmem eval locomo`
does); its turns are then indexed into a second pair of recall indexes without windows, and each question is
asked with `POST /v1/agents/{a}/retrieve` at the defaults (recallK 5, tokenBudget 2000, embedding cache off)
once over each pair, alternating which goes first, so load moves both alike. Printed: p50 / p95 of wall time
and mean CPU time (time.process_time) per call, and the load average. Asserts nothing: timings depend on the
machine and its load.
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
from dataclasses import replace
from pathlib import Path

from agentmem.eval.locomo import load_samples, read_conversation
from agentmem.eval.locomo_api import AGENT, _Api, _ingest
from agentmem.eval.locomo_cv import STAGES, _reindex

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev.json"
USER = "bench-user"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    args = parser.parse_args()
    from agentmem.api.observability import logger
    from agentmem.local.server import create_app

    logging.getLogger(logger.name).setLevel(logging.ERROR)
    conversation = read_conversation(load_samples(args.path)[0])
    questions = [q.text for q in conversation.questions]
    # Stage 8's base: the search as shipped before windows (the same as today's but for the window weight).
    without_windows = replace(STAGES["windows"][0], name="without")
    wall: dict[str, list[float]] = {"without": [], "shipped": []}
    cpu: dict[str, list[float]] = {"without": [], "shipped": []}
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(sys.stderr):
        app = create_app(Path(folder), start_worker=False, embedding_cache_size=0)
        try:
            api = _Api(app)
            dialog_ids = _ingest(api, app, f"locomo-{conversation.sample_id}", conversation)
            while app.worker.drain(timeout=600):
                pass
            recall = app.services.turn_recall
            assert recall is not None
            shipped = recall.search
            (Path(folder) / "without").mkdir()
            indexes = without_windows.indexes(Path(folder) / "without")
            recall.search = without_windows.retriever(app.settings.tenant, app.services.memory.embedder, indexes)
            _reindex(recall, [conversation], {conversation.sample_id: dialog_ids})
            searches = {"without": recall.search, "shipped": shipped}
            for number, question in enumerate(questions):
                order = ("without", "shipped") if number % 2 == 0 else ("shipped", "without")
                for name in order:
                    recall.search = searches[name]
                    began_cpu, began = time.process_time(), time.perf_counter()
                    status, _ = api("POST", f"/v1/agents/{AGENT}/retrieve", {
                        "input": question, "userId": f"locomo-{conversation.sample_id}",
                        "threadId": f"q-{name}-{number}",
                    })
                    wall[name].append(1000 * (time.perf_counter() - began))
                    cpu[name].append(1000 * (time.process_time() - began_cpu))
                    if status != 200:
                        raise RuntimeError(f"retrieve failed: {status}")
            for index in indexes:
                index.close()
        finally:
            app.close()
    print(f"{conversation.sample_id}: {len(questions)} questions, each asked with and without windows, "
          f"interleaved; load average {os.getloadavg()[0]:.1f}")
    for name in ("without", "shipped"):
        q = statistics.quantiles(wall[name], n=100)
        print(f"  {name:8} retrieve at the defaults: p50 {q[49]:6.2f} ms  p95 {q[94]:6.2f} ms wall, "
              f"CPU mean {statistics.fmean(cpu[name]):6.2f} ms")


if __name__ == "__main__":
    main()
