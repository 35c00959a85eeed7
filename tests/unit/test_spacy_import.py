"""spaCy imported without its command line: the pipeline's imports only, the CLI still there when used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import sys
from agentmem.adapters.local.spacy_import import import_spacy
import_spacy()
import spacy
import presidio_analyzer
print(sorted(name for name in ("spacy.cli", "typer", "weasel", "httpx", "jinja2") if name in sys.modules))
print(sorted(spacy.info(silent=True))[:2], "spacy.cli" in sys.modules)
import spacy.cli
print(callable(spacy.cli.download))
"""


def test_spacy_and_presidio_load_without_the_cli_and_spacy_info_loads_it_when_called() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, check=True)
    lines = done.stdout.splitlines()
    assert lines[0] == "[]"
    assert lines[1] == "['location', 'pipelines'] True"
    assert lines[2] == "True"
