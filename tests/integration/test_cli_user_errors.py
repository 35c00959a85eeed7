"""Every `agentmem` command given bad input ends with one line saying what to do, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentmem.cli.main import cli
from agentmem.client import MemoryClient, MissingCredentials, MissingRegion
from click.testing import CliRunner

STACK = "AgentMem-nowhere"


@pytest.fixture
def no_aws(monkeypatch, tmp_path: Path) -> None:
    """No AWS region, no credentials anywhere botocore looks (and no instance metadata to wait for)."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def fails_in_one_line(*args: str, expect: str) -> str:
    """Runs the command; asserts a non-zero exit, no uncaught exception, one `Error:` line containing `expect`."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code != 0, result.output
    # An uncaught exception is what click would print as a traceback: the runner keeps it instead.
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    assert expect in errors[0], result.output
    return errors[0]


def write_lines(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_import_of_a_file_with_a_line_that_is_not_json_names_the_line(tmp_path):
    export = write_lines(tmp_path / "lessons.jsonl", json.dumps({"format": "agentmem.lessons/1"}), "{not json")
    line = fails_in_one_line("import", str(export), "--data-dir", str(tmp_path / "data"), expect="line 2: not JSON")
    assert "agentmem export" in line


def test_import_of_json_lines_that_are_not_objects_is_refused(tmp_path):
    export = write_lines(tmp_path / "numbers.jsonl", "1", "2")
    fails_in_one_line("import", str(export), "--data-dir", str(tmp_path / "data"), expect="JSON object")


@pytest.mark.parametrize("command", [
    ["memories", "list", "auditor"],
    ["runs", "list", "auditor"],
    ["profile", "show", "ana"],
    ["export", "--agent", "auditor"],
    ["reindex"],
    ["redrive"],
    ["rewrap"],
    ["config", "get"],
])
def test_stack_without_a_region_says_to_give_one(command, no_aws):
    fails_in_one_line(*command, "--stack", STACK, expect="region")


@pytest.mark.parametrize("command", [
    ["wall", "--stack", STACK],
    ["mcp", "--agent", "auditor", "--user", "ana", "--stack", STACK],
    ["invoke", "retrieve", str(Path(__file__).parents[2] / "events" / "retrieve" / "basic.json"), "--backend", "aws",
     "--stack", STACK],
])
def test_wall_mcp_and_invoke_on_a_stack_without_a_region_say_to_give_one(command, no_aws):
    fails_in_one_line(*command, expect="region")


@pytest.mark.parametrize("command", [
    ["memories", "list", "auditor"],
    ["export", "--agent", "auditor"],
    ["config", "get"],
])
def test_stack_without_credentials_says_to_configure_them(command, no_aws):
    fails_in_one_line(*command, "--stack", STACK, "--region", "eu-west-1", expect="credentials")


def test_a_server_that_is_not_there_is_one_line(tmp_path):
    # Port 9 (discard) is never an agentmem server; the refusal is immediate.
    fails_in_one_line("memories", "list", "auditor", "--url", "http://127.0.0.1:9", expect="127.0.0.1:9")


@pytest.mark.parametrize("command", [["export", "--agent", "a"], ["import", "x.jsonl"], ["reindex"], ["redrive"],
                                     ["rewrap"], ["config", "get"]])
def test_commands_on_the_data_itself_do_not_offer_url(command):
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0 and "--url" not in result.output and "--stack" in result.output
    result = CliRunner().invoke(cli, [*command, "--url", "http://127.0.0.1:8765"])
    assert result.exit_code == 2 and "No such option '--url'" in result.output


def test_eval_without_its_file_names_the_path_and_the_folder_to_set(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTMEM_EVAL_DIR", str(tmp_path))
    line = fails_in_one_line("eval", "pii", expect=str(tmp_path / "pii-dev.json"))
    assert "AGENTMEM_EVAL_DIR" in line
    fails_in_one_line("eval", "locomo", str(tmp_path / "missing.json"), expect=str(tmp_path / "missing.json"))


@pytest.mark.parametrize("kind", ["pii", "locomo"])
def test_eval_of_a_file_that_is_not_json_is_one_line(kind, tmp_path):
    broken = write_lines(tmp_path / "broken.json", "[{oops")
    fails_in_one_line("eval", kind, str(broken), expect=f"{broken}: not a")


def test_invoke_of_an_event_that_is_not_json_is_one_line(tmp_path):
    event = write_lines(tmp_path / "event.json", "{oops")
    fails_in_one_line("invoke", "retrieve", str(event), "--data-dir", str(tmp_path), expect="not JSON")


def test_serve_beyond_loopback_without_a_token_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTMEM_API_TOKEN", raising=False)
    fails_in_one_line("serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", str(tmp_path), expect="apiToken")


def test_erase_without_a_subject_is_a_usage_error_not_a_traceback():
    result = CliRunner().invoke(cli, ["erase", "--yes"])
    assert result.exit_code == 2 and "USER_ID" in result.output and result.exception.__class__ is SystemExit


def test_for_stack_without_a_region_or_credentials_raises_missing_credentials(no_aws):
    with pytest.raises(MissingRegion, match="region"):
        MemoryClient.for_stack(STACK)
    with pytest.raises(MissingCredentials, match="credentials") as raised:
        MemoryClient.for_stack(STACK, region="eu-west-1")
    assert not isinstance(raised.value, MissingRegion)


def test_as_a_process_a_bad_import_file_prints_no_traceback(tmp_path):
    export = write_lines(tmp_path / "lessons.jsonl", "{not json")
    done = subprocess.run(
        [sys.executable, "-m", "agentmem.cli", "import", str(export), "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stderr.strip().splitlines() == [
        f"Error: {export}, line 1: not JSON (Expecting property name enclosed in double quotes); "
        "give a file written by `agentmem export`"
    ]
