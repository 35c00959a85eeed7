"""`agentmem users ...` run as a user would, on a local data folder written through the API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentmem.cli.main import cli
from agentmem.local.server import create_app
from click.testing import CliRunner

from tests.integration.local_client import LocalCaller


@pytest.fixture
def data_dir(tmp_path: Path, minilm) -> Path:
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    call = LocalCaller(app)
    for user, thread, text in (("ana", "t1", "I know Python and I like ramen."), ("ana", "t2", "Hello again."),
                               ("bob", "t1", "Hi.")):
        status, _ = call("POST", f"/v1/users/{user}/threads/{thread}/turns",
                         {"turns": [{"role": "user", "content": text}]})
        assert status == 201
    app.worker.drain()
    app.close()
    return tmp_path


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_users_list_prints_the_tenants_users_and_filters_by_prefix(data_dir: Path) -> None:
    assert run("users", "list", "--data-dir", str(data_dir)).splitlines()[:2] == ["ana", "bob"]
    assert [u["userId"] for u in json.loads(run("users", "list", "--prefix", "b", "--json",
                                                "--data-dir", str(data_dir)))] == ["bob"]


def test_users_threads_lists_newest_activity_first(data_dir: Path) -> None:
    threads = json.loads(run("users", "threads", "ana", "--json", "--data-dir", str(data_dir)))

    assert [(t["threadId"], t["turnCount"]) for t in threads] == [("t2", 1), ("t1", 1)]


def test_users_search_and_edit_fact_correct_what_the_search_finds(data_dir: Path) -> None:
    found = json.loads(run("users", "search", "ana", "what food", "--kind", "turns", "--json",
                           "--data-dir", str(data_dir)))
    fact_id = json.loads(run("users", "search", "ana", "programming language", "--kind", "facts", "--json",
                             "--data-dir", str(data_dir)))["facts"][0]["factId"]

    edited = run("users", "edit-fact", "ana", fact_id, "User knows Rust", "--data-dir", str(data_dir))
    after = json.loads(run("users", "search", "ana", "Rust", "--kind", "facts", "--json", "--data-dir", str(data_dir)))

    assert found["turns"][0]["content"] == "I know Python and I like ramen." and found["facts"] == []
    assert edited.strip() == f"{fact_id}  User knows Rust"
    assert after["facts"][0] == {**after["facts"][0], "factId": fact_id, "text": "User knows Rust"}


def test_editing_a_missing_fact_fails_with_the_contracts_error(data_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["users", "edit-fact", "ana", "no-such-fact", "x", "--data-dir", str(data_dir)])

    assert result.exit_code == 1 and "404 not_found: fact no-such-fact of user ana not found" in result.output
