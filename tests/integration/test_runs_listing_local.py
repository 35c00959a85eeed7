"""`GET /v1/agents/{agentId}/runs`, the editors' review queue, through the real handler on the embedded backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentmem.api.presenters import SNIPPET_CHARS
from agentmem.local.server import create_app

from tests.integration.local_client import LocalCaller

AUDIT = "Audit this outdoor gear article for brand voice: our trail magic moments make every hike special."
SIMILAR = "Audit this hiking article for brand voice: trail magic moments keep every hike special."
COMMENT = "'Trail magic' is our brand's own idiom, used on purpose. Do not flag it."


@pytest.fixture
def app(tmp_path: Path, minilm):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, enabled_agents=["auditor"])
    yield app
    app.close()


@pytest.fixture
def call(app):
    return LocalCaller(app)


def record(call, text: str, output: str = "FLAG: 'trail magic' (cliché)", user: str | None = None) -> str:
    body = {"input": text, "output": output, **({"userId": user} if user else {})}
    status, answer = call("POST", "/v1/agents/auditor/runs", body)
    assert status == 201, answer
    return answer["runId"]


def run_ids(call, query: str = "") -> list[str]:
    status, answer = call("GET", f"/v1/agents/auditor/runs{query}")
    assert status == 200, answer
    return [item["runId"] for item in answer["items"]]


def test_the_queue_lists_runs_awaiting_a_verdict_and_a_verdict_moves_the_run_out(app, call):
    first = record(call, AUDIT, user="u-dana")
    second = record(call, "Audit the spring catalogue intro.")
    assert run_ids(call, "?feedback=none") == [second, first]

    status, receipt = call("POST", f"/v1/agents/auditor/runs/{first}/feedback", {"rating": "down", "comment": COMMENT})
    assert status == 202

    assert run_ids(call, "?feedback=none") == [second]
    assert run_ids(call, "?feedback=up") == []
    status, answer = call("GET", "/v1/agents/auditor/runs?feedback=down")
    [item] = answer["items"]
    assert item["runId"] == first and item["verdict"] == "down" and item["userId"] == "u-dana"
    assert item["input"] == AUDIT and item["output"].startswith("FLAG") and not item["inputTruncated"]
    [given] = item["feedback"]
    assert (given["memoryId"], given["rating"], given["comment"]) == (receipt["memoryId"], "down", COMMENT)
    assert given["lessonStatus"] == "pending"
    assert run_ids(call) == run_ids(call, "?feedback=any") == [second, first]

    app.worker.drain()
    status, answer = call("GET", "/v1/agents/auditor/runs?feedback=down")
    assert answer["items"][0]["feedback"][0]["lessonStatus"] == "indexed"


def test_a_listed_run_names_the_lessons_injected_into_it(app, call):
    taught = record(call, AUDIT)
    receipt = call("POST", f"/v1/agents/auditor/runs/{taught}/feedback", {"rating": "down", "comment": COMMENT})[1]
    app.worker.drain()
    status, retrieved = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})
    assert status == 200
    assert [lesson["memoryId"] for lesson in retrieved["lessons"]] == [receipt["memoryId"]]
    status, answer = call("GET", "/v1/agents/auditor/runs?feedback=none")
    [item] = answer["items"]
    assert item["runId"] == retrieved["runId"]
    assert item["injectedMemoryIds"] == [receipt["memoryId"]]
    assert item["output"] is None and item["feedback"] == []


def test_long_inputs_and_outputs_are_listed_as_snippets_and_the_run_has_them_whole(call):
    long_input, long_output = "word " * 400, "flag " * 300
    run_id = record(call, long_input, long_output)
    [item] = call("GET", "/v1/agents/auditor/runs")[1]["items"]
    assert item["inputTruncated"] and item["outputTruncated"]
    assert len(item["input"]) <= SNIPPET_CHARS and item["input"].endswith("…")
    assert long_input.startswith(item["input"][:-1])
    whole = call("GET", f"/v1/agents/auditor/runs/{run_id}")[1]
    assert whole["input"] == long_input and whole["output"] == long_output


def test_pages_follow_next_cursor_and_a_cursor_stays_with_its_filter(call):
    ids = [record(call, f"Audit article {n}.") for n in range(5)]
    status, page = call("GET", "/v1/agents/auditor/runs?feedback=none&limit=2")
    seen = [item["runId"] for item in page["items"]]
    while page["nextCursor"]:
        status, page = call("GET", f"/v1/agents/auditor/runs?feedback=none&limit=2&cursor={page['nextCursor']}")
        assert status == 200
        seen += [item["runId"] for item in page["items"]]
    assert seen == list(reversed(ids))

    cursor = call("GET", "/v1/agents/auditor/runs?feedback=none&limit=2")[1]["nextCursor"]
    status, error = call("GET", f"/v1/agents/auditor/runs?feedback=any&cursor={cursor}")
    assert status == 400 and error["error"]["code"] == "validation_error"
    assert [d["field"] for d in error["error"]["details"]] == ["cursor"]


@pytest.mark.parametrize(
    "query, field",
    [("?feedback=maybe", "feedback"), ("?limit=0", "limit"), ("?limit=101", "limit"), ("?cursor=%25%25", "cursor")],
)
def test_bad_query_parameters_are_a_400_naming_the_parameter(call, query, field):
    record(call, AUDIT)
    status, error = call("GET", f"/v1/agents/auditor/runs{query}")
    assert status == 400 and error["error"]["code"] == "validation_error"
    assert any(field in d["field"] for d in error["error"]["details"]), error


def test_an_agent_with_no_runs_has_an_empty_queue(call):
    status, answer = call("GET", "/v1/agents/nobody/runs?feedback=none")
    assert status == 200 and answer == {"items": [], "nextCursor": None}


def test_the_openapi_document_describes_the_listing_and_its_filter(call):
    status, document = call("GET", "/v1/openapi.json")
    assert status == 200
    operation = document["paths"]["/v1/agents/{agentId}/runs"]["get"]
    feedback = next(p for p in operation["parameters"] if p["name"] == "feedback")
    assert feedback["in"] == "query" and set(feedback["schema"]["enum"]) == {"none", "up", "down", "any"}
    assert "awaiting a verdict" in operation["description"]
