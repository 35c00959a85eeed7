"""The CLI's progress bar is drawn on a terminal's stderr and nowhere else (a pipe or a log gets nothing)."""

from __future__ import annotations

import io

from agentmem.cli.terminal import progressbar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_is_drawn_on_stderr_with_its_label(monkeypatch):
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    with progressbar(range(3), label="Scoring all (3 records)") as bar:
        assert list(bar) == [0, 1, 2]
    assert "Scoring all (3 records)" in stderr.getvalue() and "100%" in stderr.getvalue()


def test_in_a_pipe_nothing_is_written_not_even_the_label(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    with progressbar(length=2, label="Re-indexing lessons") as bar:
        bar.update(2)
    assert stderr.getvalue() == ""
