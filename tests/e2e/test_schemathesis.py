"""A bounded schemathesis run (`--checks all`) against `agentmem serve`, as a user starts it.

Every generated request, valid or not, must get an answer the OpenAPI document describes: no 5xx,
no undocumented status, no body outside its schema (the contract's error body included), and the
token refused when wrong (tests/e2e/schemathesis.toml counts the HTTP front's 414/431 as rejections).
One check is left out, `positive_data_acceptance` (ST202): cursors are
opaque tokens the API itself hands out, so a schema-valid random cursor is rightly a 400.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

TOKEN = "schemathesis-token"
pytestmark = pytest.mark.slow


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    env = {**os.environ, "AGENTMEM_API_TOKEN": TOKEN, "AGENTMEM_ENABLED_AGENTS": "a,b,auditor",
           "POWERTOOLS_LOG_LEVEL": "ERROR"}
    agentmem = str(Path(sys.executable).with_name("agentmem"))
    process = subprocess.Popen([agentmem, "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
                                "--log-level", "WARNING"], env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        for _ in range(200):
            line = process.stderr.readline()
            found = re.search(r"listening on (http://\S+)", line)
            if found:
                # The document is built on its first request (seconds on a loaded machine); schemathesis
                # gives its loader 10 s, so the fixture asks first, with time to spare.
                request = urllib.request.Request(f"{found.group(1)}/v1/openapi.json",
                                                 headers={"Authorization": f"Bearer {TOKEN}"})
                with urllib.request.urlopen(request, timeout=120) as answer:
                    assert answer.status == 200
                yield found.group(1)
                break
            if not line and process.poll() is not None:
                pytest.fail("agentmem serve exited before listening")
        else:
            pytest.fail("agentmem serve did not say where it listens")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)


def test_every_generated_request_gets_an_answer_the_openapi_document_describes(served: str, tmp_path: Path):
    schemathesis = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert schemathesis, "schemathesis is a dev dependency (pyproject.toml)"
    run = subprocess.run(
        [schemathesis, "--no-color", "--config-file", str(Path(__file__).with_name("schemathesis.toml")),
         "run", f"{served}/v1/openapi.json", "--checks", "all",
         "--exclude-checks", "positive_data_acceptance", "--max-examples", "10", "--seed", "1",
         "--request-timeout", "20", "-H", f"Authorization: Bearer {TOKEN}"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    summary = run.stdout[-6000:]
    assert run.returncode == 0, summary  # schemathesis exits 1 on any failure or error
    assert re.search(r"\d+ generated", summary), summary  # it did generate and send requests
