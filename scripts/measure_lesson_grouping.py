"""Print how the lesson rule groups the fixtures' pairs (shared/agentmem/eval/lesson_grouping.py).

    .venv/bin/python scripts/measure_lesson_grouping.py      # a few seconds, deterministic
"""

from __future__ import annotations

from agentmem.adapters.local.minilm import MiniLMEmbedder
from agentmem.eval.lesson_grouping import load_pairs, measure, table


def main() -> None:
    print(table(measure(MiniLMEmbedder(), load_pairs())))


if __name__ == "__main__":
    main()
