"""Every `agentmem` command, run as a user would, on a local data folder."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from agentmem.cli.main import cli
from agentmem.local.server import create_app
from click.testing import CliRunner

from tests.conftest import EVENTS
from tests.integration.local_client import LocalCaller

AGENT = "auditor"
TEXT = "Audit this outdoor gear article for brand voice: trail magic happens on every hike."


@pytest.fixture
def data_dir(tmp_path: Path, minilm, monkeypatch) -> Path:
    """A data folder holding two lessons of `auditor` and one user's conversation, written through the API."""
    monkeypatch.setenv("AGENTMEM_ENABLED_AGENTS", AGENT)
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    call = LocalCaller(app)
    for comment in ("'Trail magic' is our idiom; never flag it.", "Flag hype words like 'revolutionary'."):
        run_id = call("POST", f"/v1/agents/{AGENT}/retrieve", {"input": TEXT})[1]["runId"]
        call("PUT", f"/v1/agents/{AGENT}/runs/{run_id}/output", {"output": "FLAG 'trail magic'"})
        feedback = {"rating": "down", "comment": comment}
        assert call("POST", f"/v1/agents/{AGENT}/runs/{run_id}/feedback", feedback)[0] == 202
    status, _ = call("POST", "/v1/users/ana/threads/t1/turns", {"turns": [
        {"role": "user",
         "content": "I'm Ana, I work as a data engineer. Mail me at ana@example.org."},
        {"role": "assistant", "content": "Noted."}]})
    assert status == 201
    app.worker.drain()
    app.close()
    return tmp_path


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def lessons(data_dir: Path) -> list[dict]:
    return json.loads(run("memories", "list", AGENT, "--json", "--data-dir", str(data_dir)))


@pytest.mark.parametrize("command", [
    [], ["serve"], ["demo"], ["invoke"], ["eval"], ["eval", "pii"], ["eval", "locomo"], ["memories"],
    ["memories", "list"], ["memories", "mark"], ["memories", "delete"], ["profile"], ["profile", "show"],
    ["profile", "edit"], ["profile", "versions"], ["profile", "restore"], ["erase"], ["reindex"], ["export"],
    ["import"], ["wall"], ["rewrap"], ["redrive"],
])
def test_every_command_explains_itself(command):
    output = run(*command, "--help")
    assert "Usage: " in output and "--help" in output


def test_memories_can_be_listed_marked_and_deleted(data_dir):
    listed = lessons(data_dir)
    assert len(listed) == 2 and {m["status"] for m in listed} == {"indexed"}
    first = listed[0]["memoryId"]
    assert "importance 1.5" in run("memories", "mark", AGENT, first, "important", "--data-dir", str(data_dir))
    assert "importance 0.7" in run("memories", "mark", AGENT, first, "0.7", "--data-dir", str(data_dir))
    assert {m["memoryId"]: m["importance"] for m in lessons(data_dir)}[first] == 0.7
    run("memories", "delete", AGENT, first, "--data-dir", str(data_dir))
    assert [m["memoryId"] for m in lessons(data_dir)] == [listed[1]["memoryId"]]


def test_a_bad_importance_or_unknown_memory_is_a_clear_error(data_dir):
    result = CliRunner().invoke(cli, ["memories", "mark", AGENT, "mem-x", "huge", "--data-dir", str(data_dir)])
    assert result.exit_code == 2 and "IMPORTANCE" in result.output
    result = CliRunner().invoke(cli, ["memories", "delete", AGENT, "mem-x", "--data-dir", str(data_dir)])
    assert result.exit_code == 1 and "404 not_found" in result.output


def test_the_profile_can_be_shown_edited_listed_and_restored(data_dir, tmp_path_factory):
    shown = json.loads(run("profile", "show", "ana", "--json", "--data-dir", str(data_dir)))
    edited = shown["markdown"].replace("## Follow-ups\n_(empty)_", "## Follow-ups\n- Send the pipeline review")
    assert edited != shown["markdown"]
    source = tmp_path_factory.mktemp("edit") / "profile.md"
    source.write_text(edited)
    out = run("profile", "edit", "ana", "--file", str(source), "--data-dir", str(data_dir))
    assert f"version {shown['version'] + 1}" in out
    assert "Send the pipeline review" in run("profile", "show", "ana", "--data-dir", str(data_dir))
    versions = run("profile", "versions", "ana", "--data-dir", str(data_dir)).strip().splitlines()
    assert len(versions) >= 2
    run("profile", "restore", "ana", str(shown["version"]), "--data-dir", str(data_dir))
    assert "Send the pipeline review" not in run("profile", "show", "ana", "--data-dir", str(data_dir))


def test_erase_removes_the_user(data_dir):
    run("erase", "ana", "--yes", "--data-dir", str(data_dir))
    shown = json.loads(run("profile", "show", "ana", "--json", "--data-dir", str(data_dir)))
    assert shown["version"] == 0
    with sqlite3.connect(data_dir / "transcripts.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0] == 0


def test_erase_agent_destroys_the_vault_of_its_runs_without_a_user(data_dir):
    app = create_app(data_dir, start_worker=False)
    call = LocalCaller(app)
    run_id = call("POST", f"/v1/agents/{AGENT}/runs", {"input": "Write to kim@example.net", "output": "Done."})[1][
        "runId"]
    app.close()
    with sqlite3.connect(data_dir / "keys.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM data_keys WHERE user_id=?", (f"_agent:{AGENT}",)).fetchone()[0] == 1

    out = run("erase", "--agent", AGENT, "--yes", "--data-dir", str(data_dir))

    assert "personal data of runs without a user erased" in out
    with sqlite3.connect(data_dir / "keys.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM data_keys WHERE user_id=?", (f"_agent:{AGENT}",)).fetchone()[0] == 0
    with sqlite3.connect(data_dir / "agentmem.db") as conn:  # the run itself stays, masked
        [stored] = conn.execute("SELECT input FROM runs WHERE run_id=?", (run_id,)).fetchone()
    assert stored.startswith("Write to {{PII_EMAIL_") and "kim@" not in stored


def test_erase_needs_a_user_or_an_agent_but_not_both():
    result = CliRunner().invoke(cli, ["erase", "--yes"])
    assert result.exit_code == 2 and "USER_ID or --agent" in result.output
    result = CliRunner().invoke(cli, ["erase", "ana", "--agent", AGENT, "--yes"])
    assert result.exit_code == 2


def test_reindex_rebuilds_a_lost_vector_index(data_dir):
    (data_dir / "vectors.db").unlink()
    for suffix in ("-wal", "-shm"):
        (data_dir / f"vectors.db{suffix}").unlink(missing_ok=True)
    out = run("reindex", "--data-dir", str(data_dir))
    assert f"{AGENT}: 2 lesson(s)" in out and "reindexed 2 lesson(s) of 1 agent(s)" in out
    with sqlite3.connect(data_dir / "vectors.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM vectors WHERE kind='lesson'").fetchone()[0] == 2


def test_an_agents_lessons_move_between_data_folders_with_export_and_import(data_dir, tmp_path_factory, minilm):
    exported = tmp_path_factory.mktemp("export") / "auditor.jsonl"
    run("export", "--agent", AGENT, "-o", str(exported), "--data-dir", str(data_dir))
    records = [json.loads(line) for line in exported.read_text().splitlines()]
    assert records[0]["format"] == "agentmem.lessons/v1" and len(records) == 3
    assert all(r["run"]["input"] == TEXT for r in records[1:])

    target = tmp_path_factory.mktemp("target")
    assert "imported 2 lesson(s); 0 already present" in run("import", str(exported), "--data-dir", str(target))
    assert "imported 0 lesson(s); 2 already present" in run("import", str(exported), "--data-dir", str(target))
    app = create_app(target, start_worker=False, ports={"embedder": minilm})
    try:
        found = LocalCaller(app)("POST", f"/v1/agents/{AGENT}/retrieve", {"input": TEXT})[1]["lessons"]
    finally:
        app.close()
    assert sorted(x["memoryId"] for x in found) == sorted(r["memoryId"] for r in records[1:])


def test_a_users_memory_is_exported_masked_and_imported(data_dir, tmp_path_factory):
    exported = tmp_path_factory.mktemp("export") / "ana.jsonl"
    run("export", "--user", "ana", "--thread", "t1", "-o", str(exported), "--data-dir", str(data_dir))
    text = exported.read_text()
    assert "ana@example.org" not in text and "{{PII_EMAIL_" in text
    target = tmp_path_factory.mktemp("target")
    out = run("import", str(exported), "--data-dir", str(target))
    assert "imported 2 turn(s) in 1 thread(s)" in out


def test_import_refuses_a_file_that_is_not_an_export(tmp_path):
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text('{"hello": 1}\n')
    result = CliRunner().invoke(cli, ["import", str(bogus), "--data-dir", str(tmp_path / "d")])
    assert result.exit_code == 1 and "not an agentmem export" in result.output


def test_invoke_runs_a_handler_on_a_sample_event(tmp_path):
    out = run("invoke", "service", str(EVENTS / "service" / "health.json"), "--data-dir", str(tmp_path))
    answer = json.loads(out)
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["status"] == "ok"
    out = run("invoke", "retrieve", str(EVENTS / "retrieve" / "invalid.json"), "--data-dir", str(tmp_path))
    answer = json.loads(out)
    assert answer["statusCode"] == 400
    assert {d["field"] for d in json.loads(answer["body"])["error"]["details"]} >= {"agentId", "input", "topK"}


def test_invoke_refuses_an_unknown_function(tmp_path):
    result = CliRunner().invoke(cli, ["invoke", "nope", str(EVENTS / "service" / "health.json")])
    assert result.exit_code == 2 and "must be one of" in result.output


def test_eval_pii_prints_precision_and_recall_as_json(tmp_path):
    sample = tmp_path / "pii.json"
    text = "Write to jane@example.com or call 212-555-0147."
    sample.write_text(json.dumps([{"full_text": text, "spans": [
        {"entity_type": "EMAIL_ADDRESS", "entity_value": "jane@example.com", "start_position": 9, "end_position": 25},
        {"entity_type": "PHONE_NUMBER", "entity_value": "212-555-0147", "start_position": 34, "end_position": 46},
    ]}]))
    result = json.loads(run("eval", "pii", str(sample), "--json"))
    assert result["by_type"]["EMAIL_ADDRESS"] == {"precision": 1.0, "recall": 1.0, "support": 1}
    assert result["by_type"]["PHONE_NUMBER"]["recall"] == 1.0


def test_rewrap_moves_data_keys_onto_a_new_local_key_and_unmasking_still_works(data_dir, minilm):
    out = run("rewrap", "--rotate-local-key", "--data-dir", str(data_dir))
    # Ana's data key, and the agent's own subject's when the detector found personal data in its runs.
    rewrapped = int(re.search(r"re-wrapped (\d+) data key\(s\)", out).group(1))
    assert "new key-encryption key" in out and rewrapped in (1, 2)
    app = create_app(data_dir, start_worker=False, ports={"embedder": minilm})
    try:
        call = LocalCaller(app)
        masked = call("GET", "/v1/users/ana/threads/t1/turns")[1]["items"][0]["content"]
        restored = call("POST", "/v1/users/ana/threads/t1/unmask", {"text": masked})[1]["text"]
    finally:
        app.close()
    assert "ana@example.org" in restored and "ana@example.org" not in masked


def test_invoke_runs_a_handler_against_moto(tmp_path):
    out = run("invoke", "feedback", str(EVENTS / "feedback" / "create_run.json"), "--backend", "moto")
    answer = json.loads(out[out.index("{"):])
    assert answer["statusCode"] == 201 and json.loads(answer["body"])["runId"].startswith("run_")


def test_serve_answers_on_a_real_socket_and_keeps_data_across_restarts(tmp_path):
    import os
    import urllib.request

    from tests.integration.serve_process import ServeProcess, serve_command

    def start() -> tuple[ServeProcess, str]:
        process = ServeProcess(serve_command(tmp_path), {**os.environ, "AGENTMEM_ENABLED_AGENTS": AGENT})
        return process, process.wait_listening()

    def post(url: str, path: str, body: dict) -> dict:
        request = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    process, url = start()
    try:
        with urllib.request.urlopen(url + "/v1/health", timeout=10) as response:
            assert json.loads(response.read())["backend"] == "local"
        run_id = post(url, f"/v1/agents/{AGENT}/retrieve", {"input": TEXT})["runId"]
    finally:
        process.stop()
    process, url = start()
    try:
        with urllib.request.urlopen(f"{url}/v1/agents/{AGENT}/runs/{run_id}", timeout=10) as response:
            assert json.loads(response.read())["input"] == TEXT
    finally:
        process.stop()


def test_eval_locomo_prints_recall_as_json(tmp_path):
    sample = [{
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:00 pm on 1 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat named Pixel last week."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "I am training for a marathon in Berlin."},
                {"speaker": "Ann", "dia_id": "D1:3", "text": "My sister bakes sourdough bread every Sunday."},
            ],
        },
        "qa": [{"question": "What is the name of Ann's cat?", "answer": "Pixel", "evidence": ["D1:1"],
                "category": 4}],
    }]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(sample))
    result = json.loads(run("eval", "locomo", str(path), "--json"))
    assert result["overall"]["5"] == 1.0 and result["by_category"]["4"]["5"] == 1.0


def test_redrive_puts_dead_local_events_back_in_the_queue(data_dir):
    from agentmem.adapters.local.event_bus import SqliteEventBus
    from agentmem.ports.events import DomainEvent

    bus = SqliteEventBus(data_dir / "events.db")
    receipt = bus.publish([DomainEvent("FeedbackSubmitted", {"memoryId": "mem-x"})])[0]
    bus.fail(receipt.event_id or "", "indexer kept failing", retry_in=None)
    bus.close()
    assert "redrove 1 dead event(s)" in run("redrive", "--data-dir", str(data_dir))
    bus = SqliteEventBus(data_dir / "events.db")
    try:
        assert bus.counts().get("dead", 0) == 0 and [e.event_id for e in bus.due()] == [receipt.event_id]
    finally:
        bus.close()


def test_export_reads_a_data_folder_that_a_running_server_is_using(data_dir):
    import urllib.request

    from tests.integration.serve_process import agentmem_serve

    with agentmem_serve(data_dir, AGENTMEM_ENABLED_AGENTS=AGENT) as url:
        out = run("export", "--agent", AGENT, "--data-dir", str(data_dir))
        records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert records[0]["format"].startswith("agentmem.lessons") and len(records) == 3
        with urllib.request.urlopen(f"{url}/v1/health", timeout=10) as response:
            assert response.status == 200
