"""Print how the lesson rule groups the fixtures' pairs (shared/agentmem/eval/lesson_grouping.py).

    .venv/bin/python scripts/measure_lesson_grouping.py      # a few seconds, deterministic
    .venv/bin/python scripts/measure_lesson_grouping.py --masked [--render tokens]
        # the comments masked first by the local detector, as lessons are stored; embedded with their
        # tokens read as kinds (what the indexer does) or as stored (`--render tokens`, the old way)
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from agentmem.adapters.local.minilm import MiniLMEmbedder
from agentmem.eval.lesson_grouping import load_pairs, masked_pairs, measure, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--masked", action="store_true", help="mask the comments first (the local detector)")
    parser.add_argument("--render", choices=["kinds", "tokens"], default="kinds")
    args = parser.parse_args()
    pairs = load_pairs()
    if args.masked:
        from agentmem.local.server import create_app

        with tempfile.TemporaryDirectory(prefix="measure-grouping-") as folder:
            app = create_app(Path(folder), start_worker=False)
            try:
                masker = app.services.conversations
                pairs = masked_pairs(pairs, lambda texts: masker.mask_texts("_agent:measure", texts))
            finally:
                app.close()
    render = (lambda text: text) if args.render == "tokens" else None
    rows = measure(MiniLMEmbedder(), pairs) if render is None else measure(MiniLMEmbedder(), pairs, render)
    print(table(rows))


if __name__ == "__main__":
    main()
