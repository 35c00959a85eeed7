"""`agentmem demo` end to end: a real local server on a socket, the real client, the real model."""

from __future__ import annotations

import re

from agentmem.cli.main import cli
from click.testing import CliRunner


def test_the_demo_shows_fewer_flags_after_feedback_and_leaves_other_agents_untouched():
    result = CliRunner().invoke(cli, ["demo", "--batch"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    last = re.fullmatch(r"flags: (\d+) -> (\d+)", lines[-1])
    assert last, lines[-1]
    before, after = int(last.group(1)), int(last.group(2))
    assert before >= 12 and after < before
    assert "Lessons from past runs" in result.output
    # Articles never given feedback lose flags too; the other agent got no lesson.
    unseen = re.search(r"(\d+) articles never given feedback: (\d+) -> (\d+) flags", result.output)
    assert unseen and int(unseen.group(3)) < int(unseen.group(2))
    assert "'copy-editor': 30 flags, 0 lessons injected" in result.output
