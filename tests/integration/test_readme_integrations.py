"""Every Python example in the README's "Integrations" section runs as written against `agentmem serve`
(only the port differs: the server here listens on a free one)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.conftest import ROOT
from tests.integration.serve_process import agentmem_serve

README_URL = "http://127.0.0.1:8765"
# Strands' default model is Bedrock, which needs an AWS account: the Strands example runs with this scripted
# provider in its place (the only change), which flags a phrase unless a lesson in its system prompt names it.
STRANDS_DEFAULT_MODEL = "Agent(plugins=[memory])"
SCRIPTED_STRANDS_MODEL = '''
from strands.models.model import Model as _Model

class _ScriptedModel(_Model):
    def update_config(self, **config): pass
    def get_config(self): return {}
    def structured_output(self, *args, **kwargs): raise NotImplementedError
    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        answer = "No flags." if "Trail magic" in (system_prompt or "") else "FLAG: 'Trail magic'"
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": answer}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
'''


def integration_examples() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("\n## Integrations\n")
    end = readme.index("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", readme[start:end], flags=re.S)


EXAMPLES = integration_examples()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[str]:
    with agentmem_serve(tmp_path_factory.mktemp("readme"), AGENTMEM_ENABLED_AGENTS="brand-auditor") as url:
        yield url


def test_the_integrations_section_has_an_example_of_at_most_ten_lines_for_each_framework():
    assert len(EXAMPLES) == 4  # MCP, Strands, OpenAI Agents SDK, LangGraph
    for example in EXAMPLES:
        assert README_URL in example
        assert len(example.strip().splitlines()) <= 10, example


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.split("\n", 2)[1][:40])
def test_the_readme_example_runs_as_written_against_agentmem_serve(served, example, tmp_path):
    script = tmp_path / "example.py"
    code = example.replace(README_URL, served)
    if STRANDS_DEFAULT_MODEL in code:
        scripted = "Agent(model=_ScriptedModel(), plugins=[memory])"
        code = SCRIPTED_STRANDS_MODEL + code.replace(STRANDS_DEFAULT_MODEL, scripted)
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, env={**os.environ, "OPENAI_API_KEY": "unused"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip(), "the example printed nothing"
