"""Lessons at scale: a store of thousands of lessons made from LoCoMo conversation lines, and what
`retrieve` answers for topK 5 (bullets, lessons listed, groups), through the real services.

Each lesson's comment is one dialogue line ("Caroline: I went to the LGBTQ support group yesterday")
or one session's date line ("Caroline and Melanie spoke at 1:51 pm on 8 May, 2023"), the material
that chained into one 40-lesson group under single-link grouping. Prints the indexing rate too.

    .venv/bin/python benchmarks/bench_lesson_groups.py --lessons 2000
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from agentmem.adapters.local.minilm import MiniLMEmbedder
from agentmem.local.server import create_app

QUESTIONS = ("When did Caroline go to the LGBTQ support group?", "What did John adopt in April 2022?",
             "When did Melanie paint a sunrise?")


def lines(path: Path, count: int) -> list[str]:
    found: list[str] = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        a, b = conv["speaker_a"], conv["speaker_b"]
        for key in sorted(k for k in conv if k.startswith("session_") and k.endswith("_date_time")):
            found.append(f"{a} and {b} spoke at {conv[key]}.")
            for turn in conv.get(key.removesuffix("_date_time"), []):
                found.append(f"{turn['speaker']}: {turn['text']}")
    return found[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=2000)
    parser.add_argument("--data", type=Path, default=Path("../shared/eval/locomo-dev.json"))
    args = parser.parse_args()
    comments = lines(args.data, args.lessons)
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Path(tmp), start_worker=False, ports={"embedder": MiniLMEmbedder()}, enabled_agents=["memo"])
        memory = app.services.memory
        started = time.perf_counter()
        for comment in comments:
            run = memory.record_run("memo", f"Remember: {comment}")
            memory.submit_feedback("memo", run.run_id, "up", comment)
        fed = time.perf_counter() - started
        started = time.perf_counter()
        indexed = app.worker.drain(timeout=3600)
        took = time.perf_counter() - started
        print(f"{len(comments)} lessons: feedback {len(comments) / fed:.0f}/s, indexed {indexed} at "
              f"{indexed / took:.1f}/s (grouping included; load {os.getloadavg()[0]:.1f})")
        for question in QUESTIONS:
            answer = app.services.retrieval.retrieve("memo", question, top_k=5)
            system = answer["messages"][0]["content"] if answer["messages"] else ""
            bullets = [line for line in system.splitlines() if line.startswith("- ")]
            groups = {lesson["groupId"] for lesson in answer["lessons"]}
            print(f"  {question!r}: {len(bullets)} bullets, {len(answer['lessons'])} lessons listed, "
                  f"{len(groups)} groups")
        app.close()


if __name__ == "__main__":
    main()
