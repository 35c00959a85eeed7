"""A terminal running `agentmem serve` / demo / eval shows agentmem's own lines, not third-party warnings."""

from __future__ import annotations

import json
import logging
import os
import urllib.request
from pathlib import Path

import pytest
from agentmem.cli.terminal import THIRD_PARTY_LOGGERS, quiet_third_parties

from tests.integration.serve_process import ServeProcess, serve_command

AGENT = "auditor"
# spaCy's pipeline labels "third" and "second" ORDINAL, which Presidio warns it has no entity for.
WITH_ORDINALS = "On the third day of my second trip I met Dana in Lisbon."


@pytest.fixture
def restore_loggers():
    levels = {name: logging.getLogger(name).level for name in THIRD_PARTY_LOGGERS}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def test_without_verbose_presidios_warnings_are_held_back_and_with_it_they_are_shown(restore_loggers, caplog):
    presidio = logging.getLogger("presidio-analyzer")
    quiet_third_parties(verbose=False)
    with caplog.at_level(logging.INFO):
        presidio.warning("Entity ORDINAL is not mapped to a Presidio entity")
    assert caplog.records == []
    assert os.environ["POWERTOOLS_METRICS_DISABLED"] == "true"
    presidio.setLevel(logging.NOTSET)
    quiet_third_parties(verbose=True)
    with caplog.at_level(logging.INFO):
        presidio.warning("Entity ORDINAL is not mapped to a Presidio entity")
    assert [r.getMessage() for r in caplog.records] == ["Entity ORDINAL is not mapped to a Presidio entity"]


@pytest.mark.slow
def test_serve_prints_no_presidio_warning_and_no_metric_json_for_a_text_with_ordinals(tmp_path: Path):
    process = ServeProcess(serve_command(tmp_path), {**os.environ, "AGENTMEM_ENABLED_AGENTS": AGENT})
    try:
        url = process.wait_listening()
        request = urllib.request.Request(
            f"{url}/v1/agents/{AGENT}/retrieve", json.dumps({"input": WITH_ORDINALS, "userId": "u-1"}).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            assert response.status == 200
    finally:
        terminal = process.stop()  # stdout and stderr, everything it printed
    assert "listening on http://127.0.0.1:" in terminal  # agentmem's own line is there
    assert "is not mapped to a Presidio entity" not in terminal
    assert '"_aws"' not in terminal and "CloudWatchMetrics" not in terminal
