"""The README's cost table shows what scripts/cost_at_rest.py prints today (it synthesises the app)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def table_rows(text: str) -> dict[str, list[str]]:
    """Rows of the Markdown tables in `text` whose first cell is a vector mode, by that cell."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def test_the_readme_cost_table_is_the_cost_scripts_output():
    printed = subprocess.run([sys.executable, str(ROOT / "scripts" / "cost_at_rest.py")], cwd=ROOT, check=True,
                             capture_output=True, text=True, timeout=900).stdout
    script = table_rows(printed)
    readme = ROOT / "README.md"
    section = readme.read_text().split("\n## Deploy to AWS", 1)[1].split("\n## ", 1)[0]
    shown = table_rows(section)
    assert len(script) == 4 and shown.keys() == script.keys()
    for mode, (label, keys, alarms, _dashboards, _pollers, at_rest, usage) in script.items():
        # README: mode | KMS keys | alarms | at rest | + 1M retrieves and 100k lessons (the total, no breakdown)
        assert shown[mode] == [label, keys, alarms, at_rest, usage.split(" (")[0]], (mode, shown[mode])
    assert re.search(r"\*\*\$\d+\.\d\d\*\*", section)
