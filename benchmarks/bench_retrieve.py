"""Warm `retrieve` latency through the Lambda handler, at 1k, 10k and 100k lessons for one agent.

The store holds 10 agents. Stored lessons get random unit vectors (exact search
costs the same whatever the vectors are), and 20 of the target agent's lessons
are planted near each query so that ranking, record fetches and packing run
as they do in real use. Reported separately:

- embed: the query embedding alone (MiniLM, int8 in ONNX Runtime, cache off, ~30-token input);
- rest: the whole handler with the query's embedding already cached, i.e.
  everything but the embedding (validation, vector search, ranking, record
  fetch, packing, recording the run);
- total: the whole handler with a fresh input each time.

Run: .venv/bin/python benchmarks/bench_retrieve.py [--sizes 1000 10000 100000] [--repeat 200]
Prints numbers; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

QUERY = "Audit this outdoor gear article for brand voice issues: hype words, clichés and stacked exclamation marks."
OTHER_AGENTS = 9
PLANTED = 20


def percentiles(samples: list[float], cpu: float | None = None) -> str:
    ms = sorted(s * 1000 for s in samples)
    q = statistics.quantiles(ms, n=100)
    line = f"p50 {q[49]:7.2f} ms  p95 {q[94]:7.2f} ms  p99 {q[98]:7.2f} ms  (n={len(ms)})"
    # CPU of the whole process (all its threads) per call: on a shared machine, less noisy than wall time.
    return line if cpu is None else f"{line}  CPU {cpu / len(ms) * 1000:6.2f} ms/call"


def seed(services, agent: str, count: int, rng: np.random.Generator, query_vecs: np.ndarray) -> None:
    from agentmem.domain.models import Feedback, Memory, Run
    from agentmem.ports.vectors import VectorItem

    store, index, tenant = services.memory.store, services.memory.vectors.inner, services.settings.tenant
    now = time.time()
    dim = query_vecs.shape[1]
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    # Plant lessons close to the queries so that some are eligible.
    for i in range(min(PLANTED, count)):
        v = query_vecs[i % len(query_vecs)] + 0.35 * vectors[i]
        vectors[i] = v / np.linalg.norm(v)
    items = []
    for i in range(count):
        run_id, fb_id, mem_id = f"run-{agent}-{i}", f"fb-{agent}-{i}", f"mem-{agent}-{i}"
        created = now - rng.uniform(0, 80 * 86_400)
        store.put_run(Run(tenant, agent, run_id, f"input {i}", created, output=f"output {i}"))
        store.add_feedback(
            Feedback(tenant, agent, run_id, fb_id, "down", f"comment {i}", created, mem_id),
            Memory(tenant, agent, mem_id, run_id, fb_id, "down", f"comment {i}",
                   f"Editor: comment {i}\nOutput: output {i}\nInput: input {i}", 1.0, created, status="indexed"),
        )
        items.append(VectorItem(tenant, "lesson", agent, mem_id, vectors[i], created))
        if len(items) == 5000:
            index.upsert(items)
            items = []
    index.upsert(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from agentmem.adapters.local.minilm import MiniLMEmbedder
    from agentmem.local import apigateway
    from agentmem.local.lambda_runtime import LocalLambdaContext, load_handler
    from agentmem.local.server import create_app
    from agentmem.tokens import get_token_counter

    rng = np.random.default_rng(7)
    embedder = MiniLMEmbedder(cache_size=4096)
    from agentmem.adapters.local.minilm import default_model_dir
    from tokenizers import Tokenizer

    word_pieces = Tokenizer.from_file(str(default_model_dir() / "tokenizer.json"))
    word_pieces.no_padding()
    print(f"query: {len(word_pieces.encode(QUERY).ids)} MiniLM word pieces, "
          f"{get_token_counter().count(QUERY)} cl100k tokens")
    uncached = MiniLMEmbedder(cache_size=0)
    uncached.embed([QUERY])
    samples = []
    cpu = time.process_time()
    for i in range(args.repeat):
        text = f"{QUERY} ({i})"
        t = time.perf_counter()
        uncached.embed([text])
        samples.append(time.perf_counter() - t)
    print(f"embed (cache off, this query): {percentiles(samples, time.process_time() - cpu)}")

    handler = load_handler("retrieve")
    context = LocalLambdaContext("retrieve")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            agents = ["agent-0"] + [f"agent-{i}" for i in range(1, OTHER_AGENTS + 1)]
            app = create_app(Path(tmp), start_worker=False, ports={"embedder": embedder}, enabled_agents=agents)
            query_vecs = embedder.embed([f"{QUERY} ({i})" for i in range(args.repeat)] + [QUERY])
            t = time.perf_counter()
            seed(app.services, "agent-0", size, rng, query_vecs)
            for other in agents[1:]:
                seed(app.services, other, max(100, size // 10), rng, query_vecs)
            seeded = time.perf_counter() - t

            def event(text: str) -> dict:
                route = apigateway.match("POST", "/v1/agents/agent-0/retrieve")
                return apigateway.proxy_event(route.route, route.path_parameters, "POST",
                                              "/v1/agents/agent-0/retrieve", {"Content-Type": "application/json"},
                                              json.dumps({"input": text}), "127.0.0.1")

            for _ in range(20):  # warm: caches, code paths, the index's first load
                handler(event(QUERY), context)
            rest, lessons = [], []
            cpu = time.process_time()
            for _ in range(args.repeat):
                e = event(QUERY)
                t = time.perf_counter()
                answer = handler(e, context)
                rest.append(time.perf_counter() - t)
            rest_cpu = time.process_time() - cpu
            lessons.append(len(json.loads(answer["body"])["lessons"]))
            total = []
            cpu = time.process_time()
            for i in range(args.repeat):
                e = event(f"{QUERY} [{size}-{i}]")
                t = time.perf_counter()
                handler(e, context)
                total.append(time.perf_counter() - t)
            total_cpu = time.process_time() - cpu
            print(f"\n{size:>7} lessons for agent-0 (+{OTHER_AGENTS} agents with {max(100, size // 10)} each; "
                  f"seeded in {seeded:.0f} s); lessons injected: {lessons[0]}")
            print(f"  rest  (embedding cached): {percentiles(rest, rest_cpu)}")
            print(f"  total (fresh input)     : {percentiles(total, total_cpu)}")
            app.close()


if __name__ == "__main__":
    main()
