"""How often `retrieve` brings the lesson that answers a question: LoCoMo's turns as lessons.

    .venv/bin/python scripts/measure_lesson_recall.py [--data ../shared/eval/locomo-dev.json] [--threshold 0.3]

Each LoCoMo conversation is one agent; each of its turns ("Speaker: text") becomes a lesson the way
`benchmarks/side_by_side.py` makes them (a run "LoCoMo memory N" / "noted", then a 👍 feedback with the
turn as the comment: masked, digested, embedded, grouped by the indexer). Then each answerable question
(categories 1-4) is asked with `POST /v1/agents/{agent}/retrieve` (topK 10, a budget large enough to
keep every bullet): R@k is the share of evidence turns whose lesson is listed in the answer's first k
groups. Everything goes through the handlers `agentmem serve` runs, so the eligibility threshold, the
ranking, the grouping and the rendering of personal-data tokens all count. Deterministic for one code.
Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_DIALOG_ID = re.compile(r"D\d+:\d+")
KS = (1, 5, 10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "locomo-dev.json")
    parser.add_argument("--threshold", type=float, help="eligibilityThreshold (default: the model's measured one)")
    args = parser.parse_args()
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    conversations = json.loads(args.data.read_text(encoding="utf-8"))
    agents = [f"locomo-{n}" for n in range(len(conversations))]
    from agentmem.local.server import create_app

    found = {k: 0 for k in KS}
    by_agent: dict[str, dict[int, int]] = {}  # per conversation: hits at each k, and (key 0) evidence lessons
    wanted = 0
    questions = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lesson-recall-") as folder:
        overrides = {} if args.threshold is None else {"eligibility_threshold": args.threshold}
        app = create_app(Path(folder), start_worker=False, enabled_agents=agents, **overrides)
        threshold = app.services.settings.effective_eligibility_threshold
        headers = {"content-type": "application/json", "host": "127.0.0.1"}

        def call(method: str, path: str, body: object) -> dict[str, object]:
            status, _, answer = app.handle(method, path, headers, json.dumps(body).encode(), "127.0.0.1")
            if status not in (200, 201, 202):
                raise RuntimeError(f"{method} {path}: {status}")
            return json.loads(answer)  # type: ignore[no-any-return]

        try:
            for agent, conversation in zip(agents, conversations, strict=True):
                lesson_of: dict[str, str] = {}
                for key, session in conversation["conversation"].items():
                    if not (key.startswith("session_") and isinstance(session, list)):
                        continue
                    for turn in session:
                        if not turn.get("text", "").strip():
                            continue
                        run = call("POST", f"/v1/agents/{agent}/runs",
                                   {"input": f"LoCoMo memory {len(lesson_of) + 1}", "output": "noted"})
                        receipt = call("POST", f"/v1/agents/{agent}/runs/{run['runId']}/feedback",
                                       {"rating": "up", "comment": f"{turn['speaker']}: {turn['text']}"})
                        lesson_of[turn["dia_id"]] = str(receipt["memoryId"])
                    app.worker.drain(timeout=600)
                for qa in conversation["qa"]:
                    if int(qa["category"]) == 5:
                        continue
                    evidence = {lesson_of[d] for item in qa["evidence"] for d in _DIALOG_ID.findall(item)
                                if d in lesson_of}
                    if not evidence:
                        continue
                    questions += 1
                    wanted += len(evidence)
                    answer = call("POST", f"/v1/agents/{agent}/retrieve",
                                  {"input": qa["question"], "topK": max(KS), "tokenBudget": 32_000})
                    groups: list[str] = []
                    listed: dict[str, int] = {}
                    for lesson in answer["lessons"]:  # type: ignore[union-attr]
                        if lesson["groupId"] not in groups:
                            groups.append(lesson["groupId"])
                        listed[lesson["memoryId"]] = len(groups)
                    for k in KS:
                        hits = sum(1 for memory_id in evidence if listed.get(memory_id, k + 1) <= k)
                        found[k] += hits
                        by_agent.setdefault(agent, {n: 0 for n in (*KS, 0)})[k] += hits
                    by_agent[agent][0] += len(evidence)
        finally:
            app.close()
    elapsed = time.perf_counter() - started
    recall = " / ".join(f"{100 * found[k] / wanted:.1f}" for k in KS)
    print(f"{questions} questions, {wanted} evidence lessons, {len(agents)} agents, threshold {threshold:.2f}; "
          f"R@{' / R@'.join(str(k) for k in KS)} (groups): {recall}; {elapsed:.0f} s, load {os.getloadavg()[0]:.1f}")
    for agent, tally in by_agent.items():
        print(f"  {agent}: " + " / ".join(f"{100 * tally[k] / tally[0]:.1f}" for k in KS) + f" ({tally[0]} evidence)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
