"""Write the `retrieve` answers of side_by_side's LoCoMo questions, one JSON line each, to compare two versions.

A change to the retrieve path that must not change any answer is checked by running this with each
version's code first on PYTHONPATH, on the same kept folder, and comparing the two files byte for byte
(`cmp`). The folder is the one `benchmarks/bench_retrieve_parts.py --data-dir DIR` ingests into
`DIR/<size>` (ingested here too on first use); each run works on a fresh copy of it, so both versions
start from the same records, vault and counters. Every field of an answer is written, keys sorted,
but `runId` (a random id per run).

Run: PYTHONPATH=$PWD/shared:$PWD .venv/bin/python scripts/dump_retrieve_answers.py --data-dir DIR --size 1000 OUT
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import bench_retrieve_parts  # noqa: E402
import side_by_side  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the JSON lines file to write")
    parser.add_argument("--data-dir", type=Path, required=True, help="where the ingested folders are kept")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--questions", type=int, default=200)
    eval_dir = Path(os.environ.get("AGENTMEM_EVAL_DIR", side_by_side.ROOT.parent / "shared" / "eval"))
    parser.add_argument("--data", type=Path, default=eval_dir / "locomo-dev.json")
    args = parser.parse_args()
    questions = side_by_side.locomo_questions(args.data, args.questions)
    folder = bench_retrieve_parts.kept_folder(args.data_dir, args.size, args.data)
    with tempfile.TemporaryDirectory(prefix="retrieve-answers-") as tmp:
        shutil.copytree(folder, Path(tmp) / "data")
        worker = side_by_side.AgentmemWorker(Path(tmp) / "data")
        path = f"/v1/agents/{side_by_side.AGENT}/retrieve"
        with args.out.open("w", encoding="utf-8") as out:
            for question in questions:
                answer = worker._call("POST", path, {"input": question, "topK": side_by_side.TOP_K})
                answer.pop("runId", None)
                out.write(json.dumps(answer, sort_keys=True) + "\n")
        worker.app.close()
    print(f"{len(questions)} answers of {args.size:,} lessons written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
