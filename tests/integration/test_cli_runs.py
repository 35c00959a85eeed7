"""`agentmem runs list`: the review queue on the command line, on a local data folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentmem.cli.main import cli
from agentmem.local.server import create_app
from click.testing import CliRunner

from tests.integration.local_client import LocalCaller

AGENT = "auditor"


@pytest.fixture
def data_dir(tmp_path: Path, minilm, monkeypatch) -> tuple[Path, dict[str, str]]:
    """Three runs of `auditor`: one with a 👎, one with a 👍, one awaiting a verdict (the newest)."""
    monkeypatch.setenv("AGENTMEM_ENABLED_AGENTS", AGENT)
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    call = LocalCaller(app)
    ids = {}
    for name, rating in (("down", "down"), ("up", "up"), ("waiting", None)):
        body = {"input": f"Audit the {name} article.", "output": "ok"}
        status, answer = call("POST", f"/v1/agents/{AGENT}/runs", body)
        assert status == 201
        ids[name] = answer["runId"]
        if rating:
            assert call("POST", f"/v1/agents/{AGENT}/runs/{ids[name]}/feedback", {"rating": rating})[0] == 202
    app.close()
    return tmp_path, ids


def run(*args: str) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def test_runs_list_shows_the_queue_awaiting_a_verdict(data_dir):
    folder, ids = data_dir
    out, err = run("runs", "list", AGENT, "--feedback", "none", "--data-dir", str(folder))
    assert ids["waiting"] in out and ids["down"] not in out and ids["up"] not in out
    assert "Audit the waiting article." in out
    assert err.strip() == "1 run awaiting a verdict"


def test_runs_list_as_json_is_newest_first_with_each_verdict(data_dir):
    folder, ids = data_dir
    out, _ = run("runs", "list", AGENT, "--json", "--data-dir", str(folder))
    listed = json.loads(out)
    assert [r["runId"] for r in listed] == [ids["waiting"], ids["up"], ids["down"]]
    assert [r["verdict"] for r in listed] == [None, "up", "down"]
    assert listed[2]["feedback"][0]["rating"] == "down"


def test_runs_list_honours_its_limit_and_the_down_filter(data_dir):
    folder, ids = data_dir
    out, _ = run("runs", "list", AGENT, "--feedback", "down", "--json", "--data-dir", str(folder))
    assert [r["runId"] for r in json.loads(out)] == [ids["down"]]
    out, err = run("runs", "list", AGENT, "--limit", "2", "--data-dir", str(folder))
    assert len(out.strip().splitlines()) == 2 and err.strip() == "2 runs"


def test_runs_list_explains_itself_and_names_its_targets():
    out, _ = run("runs", "list", "--help")
    for option in ("--feedback", "--stack", "--url", "--data-dir", "--json"):
        assert option in out
