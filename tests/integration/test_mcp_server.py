"""The MCP server, driven by the MCP SDK's own client: in process, over stdio (`agentmem mcp`), and over
HTTP against a running `agentmem serve` (`/mcp`), and through the `mcp` Lambda handler on API Gateway events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentmem.cli.target import InProcessTransport
from agentmem.client import MemoryClient
from agentmem.domain.profile import SECTIONS
from agentmem.integrations.mcp import TOOLS, Identity, build_server
from agentmem.local.lambda_runtime import invoke
from agentmem.local.server import create_app
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import EVENTS
from tests.integration.indexer_watch import GIVE_UP_SECONDS, watch_functions
from tests.integration.serve_process import agentmem_serve

AGENT = "brand-auditor"
USER = "u-42"
TASK = "Audit the spring catalogue intro: 'Trail magic happens on every hike.'"
COMMENT = "'Trail magic' is our own idiom; do not flag it."
TOOL_NAMES = {spec.name for spec in TOOLS}


@pytest.fixture
def consumed(monkeypatch: pytest.MonkeyPatch) -> threading.Semaphore:
    """Released after each run of the indexer or the consolidate function (watched before the app starts)."""
    return watch_functions(monkeypatch, "indexer", "consolidate")


@pytest.fixture
def local(tmp_path: Path, minilm, consumed) -> Iterator[MemoryClient]:
    app = create_app(tmp_path, start_worker=True, ports={"embedder": minilm}, enabled_agents=[AGENT])
    client = MemoryClient("http://agentmem.local", transport=InProcessTransport(app))
    yield client
    client.close()


def call(server: Any, steps: Any) -> Any:
    async def main() -> Any:
        async with Client(server) as client:
            return await steps(client)

    return anyio.run(main)


def payload(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def eventually(probe: Any, consumed: threading.Semaphore, invocations: int = 20) -> Any:
    """`probe()` again after each consumer invocation until it answers (its last answer when none did)."""
    value = await probe()
    for _ in range(invocations):
        if value or not await anyio.to_thread.run_sync(lambda: consumed.acquire(timeout=GIVE_UP_SECONDS)):
            break
        value = await probe()
    return value


def test_tools_list_names_every_tool_with_the_schema_of_its_request_model(local):
    tools = call(build_server(local, Identity(AGENT, USER, "t-1")), lambda c: c.list_tools())
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == TOOL_NAMES
    for spec in TOOLS:
        tool = by_name[spec.name]
        assert tool.input_schema == spec.arguments.model_json_schema(by_alias=True)
        assert tool.description == spec.description and len(tool.description) > 40
        # Whom a tool acts for is never an argument.
        assert not {"userId", "agentId"} & set(tool.input_schema.get("properties", {}))
    retrieve = by_name["retrieve_memory"].input_schema
    assert retrieve["required"] == ["input"]
    assert retrieve["properties"]["tokenBudget"]["minimum"] == 100
    assert by_name["give_feedback"].input_schema["properties"]["rating"]["enum"] == ["up", "down"]
    assert by_name["list_runs"].annotations.read_only_hint


def test_the_list_runs_schema_accepts_what_the_runs_route_does(local):
    """The tool's model and the route's query parameters, as the OpenAPI document has them, agree."""
    document = local.request("GET", "/v1/openapi.json")
    parameters = {p["name"]: p["schema"] for p in document["paths"]["/v1/agents/{agentId}/runs"]["get"]["parameters"]}
    tool = next(spec for spec in TOOLS if spec.name == "list_runs").arguments.model_json_schema(by_alias=True)
    assert set(tool["properties"]) == set(parameters) - {"agentId"}
    limit, route_limit = tool["properties"]["limit"], parameters["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (
        route_limit["minimum"], route_limit["maximum"], route_limit["default"])
    assert tool["properties"]["feedback"]["enum"] == parameters["feedback"]["enum"]
    assert tool["properties"]["feedback"]["default"] == parameters["feedback"]["default"]
    cursor = next(b for b in tool["properties"]["cursor"]["anyOf"] if b.get("type") == "string")
    route_cursor = next(b for b in parameters["cursor"]["anyOf"] if b.get("type") == "string")
    assert cursor["maxLength"] == route_cursor["maxLength"]


def test_every_tool_works_in_process_and_feedback_becomes_a_lesson_of_the_next_run(local, consumed):
    async def steps(c: Client) -> None:
        first = payload(await c.call_tool("retrieve_memory", {"input": TASK, "threadId": "t-1"}))
        assert first["memory"] == "enabled" and first["lessons"] == []
        run_id = first["runId"]
        assert payload(await c.call_tool("set_run_output", {"runId": run_id, "output": "FLAG: 'Trail magic'"}))
        receipt = payload(await c.call_tool("give_feedback", {"runId": run_id, "rating": "down", "comment": COMMENT}))
        assert receipt["status"] == "accepted"

        async def lessons() -> list[Any]:
            items = payload(await c.call_tool("list_lessons", {}))["items"]
            return items if items and all(x.get("status") != "pending" for x in items) else []

        (lesson,) = await eventually(lessons, consumed)
        assert lesson["comment"] == COMMENT
        other = payload(await c.call_tool("record_run", {"input": "Audit the autumn intro", "output": "ok"}))["runId"]
        down = payload(await c.call_tool("list_runs", {"feedback": "down"}))["items"]
        assert [r["runId"] for r in down] == [run_id] and down[0]["feedback"][0]["comment"] == COMMENT
        awaiting = payload(await c.call_tool("list_runs", {"feedback": "none", "limit": 1}))
        assert [r["runId"] for r in awaiting["items"]] == [other] and awaiting["nextCursor"] is None
        first = payload(await c.call_tool("list_runs", {"limit": 1}))
        rest = payload(await c.call_tool("list_runs", {"limit": 1, "cursor": first["nextCursor"]}))
        assert [r["runId"] for r in first["items"] + rest["items"]] == [other, run_id]
        marked = payload(await c.call_tool("mark_lesson", {"memoryId": lesson["memoryId"], "importance": "important"}))
        assert marked["importance"] == 1.5
        second = payload(await c.call_tool("retrieve_memory", {"input": TASK}))
        assert [x["memoryId"] for x in second["lessons"]] == [lesson["memoryId"]]
        assert "Lessons from past runs" in second["messages"][0]["content"]
        assert payload(await c.call_tool("delete_lesson", {"memoryId": lesson["memoryId"]}))["status"] == "deleted"
        assert payload(await c.call_tool("list_lessons", {}))["items"] == []
        assert payload(await c.call_tool("record_run", {"input": "a", "output": "b"}))["runId"].startswith("run_")

        stored = payload(await c.call_tool("append_turns", {"turns": [
            {"role": "user", "content": "I live in Lisbon. Write to me at ana@example.com"}]}))
        masked = stored["turns"][0]["content"]
        assert "ana@example.com" not in masked and "{{PII_EMAIL_" in masked
        assert payload(await c.call_tool("unmask", {"text": masked}))["text"].endswith("ana@example.com")

        async def facts() -> list[Any]:
            return payload(await c.call_tool("list_facts", {}))["items"]

        async def unmasked(text: str) -> str:
            return str(payload(await c.call_tool("unmask", {"text": text}))["text"])

        # The place may be masked (the local detector finds places): the user's own unmask restores it.
        found = [f for f in await eventually(facts, consumed) if "Lisbon" in await unmasked(f["text"])]
        fact = found[0]
        assert payload(await c.call_tool("delete_fact", {"factId": fact["factId"]}))["status"] == "deleted"
        assert fact["factId"] not in {f["factId"] for f in payload(await c.call_tool("list_facts", {}))["items"]}

        async def consolidated() -> Any:  # the same consumer writes the facts and then the profile
            current = payload(await c.call_tool("get_profile", {}))
            return current if current["version"] >= 1 else None

        profile = await eventually(consolidated, consumed)
        body = "".join(f"## {name}\n" + ("- Lives in Porto\n" if i == 0 else "") for i, name in enumerate(SECTIONS))
        edited = payload(await c.call_tool("edit_profile", {"markdown": body, "version": profile["version"]}))
        assert edited["version"] == profile["version"] + 1 and "Lives in Porto" in await unmasked(edited["markdown"])
        stale = await c.call_tool("edit_profile", {"markdown": body, "version": profile["version"]})
        assert stale.is_error and "conflict" in stale.content[0].text

    call(build_server(local, Identity(AGENT, USER, "t-1")), steps)


BAD_ARGUMENTS: dict[str, dict[str, Any]] = {
    "retrieve_memory": {"input": "x", "tokenBudget": 5},
    "record_run": {"input": "x"},
    "set_run_output": {"runId": "bad id!", "output": "x"},
    "give_feedback": {"runId": "run_1", "rating": "meh"},
    "list_runs": {"feedback": "maybe", "limit": 500},
    "list_lessons": {"limit": 0},
    "mark_lesson": {"memoryId": "m1", "importance": 7},
    "delete_lesson": {},
    "append_turns": {"turns": [{"role": "system", "content": "x"}]},
    "get_profile": {"userId": "someone-else"},
    "edit_profile": {"markdown": "x"},
    "list_facts": {"includeSuperseded": "maybe"},
    "delete_fact": {"factId": ""},
    "update_fact": {"factId": "f1", "text": ""},
    "search_memory": {"query": "x", "kinds": ["runs"]},
    "list_threads": {"limit": 0},
    "unmask": {"text": 42},
}


def test_bad_arguments_get_a_tool_error_for_every_tool_not_a_crash(local):
    assert set(BAD_ARGUMENTS) == TOOL_NAMES

    async def steps(c: Client) -> dict[str, Any]:
        results = {name: await c.call_tool(name, args) for name, args in BAD_ARGUMENTS.items()}
        as_another = {"input": "x", "userId": "u-9"}
        results["retrieve_memory as another user"] = await c.call_tool("retrieve_memory", as_another)
        results["unknown run"] = await c.call_tool("give_feedback", {"runId": "run_nope", "rating": "down"})
        # The server is still up after all of them.
        results["after"] = await c.call_tool("list_lessons", {})
        return results

    results = call(build_server(local, Identity(AGENT, USER, "t-1")), steps)
    after = results.pop("after")
    assert not after.is_error
    for name, result in results.items():
        assert result.is_error, name
        assert result.content[0].text.startswith("Error executing tool"), (name, result.content[0].text)
    assert "not_found" in results["unknown run"].content[0].text
    assert "extra" in results["retrieve_memory as another user"].content[0].text.lower()


def test_a_server_without_a_user_refuses_the_user_tools_with_a_message_saying_how(local):
    async def steps(c: Client) -> Any:
        return await c.call_tool("get_profile", {}), await c.call_tool("retrieve_memory", {"input": TASK})

    profile, retrieve = call(build_server(local, Identity(AGENT)), steps)
    assert profile.is_error and "--user" in profile.content[0].text
    assert not retrieve.is_error and payload(retrieve)["profile"] is None


# -- stdio -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_agentmem_mcp_over_stdio_lists_and_calls_the_tools(tmp_path):
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmem.cli", "mcp", "--agent", AGENT, "--user", USER, "--data-dir", str(tmp_path)],
        env={**os.environ, "AGENTMEM_ENABLED_AGENTS": AGENT},
    )

    async def steps(c: Client) -> Any:
        tools = await c.list_tools()
        retrieved = await c.call_tool("retrieve_memory", {"input": TASK})
        bad = await c.call_tool("give_feedback", {"runId": "run_1", "rating": "sideways"})
        return tools, retrieved, bad

    tools, retrieved, bad = call(parameters, steps)
    assert {t.name for t in tools.tools} == TOOL_NAMES
    assert payload(retrieved)["memory"] == "enabled"
    assert bad.is_error


def test_agentmem_mcp_refuses_to_start_for_nobody():
    result = subprocess.run([sys.executable, "-m", "agentmem.cli", "mcp"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--agent, --user or both" in result.stderr


# -- HTTP: /mcp on agentmem serve ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[str]:
    with agentmem_serve(tmp_path_factory.mktemp("served"), AGENTMEM_ENABLED_AGENTS=AGENT) as url:
        yield url


@pytest.mark.slow
def test_an_mcp_client_sees_every_tool_with_its_schema_on_a_running_server(served):
    async def steps(c: Client) -> Any:
        tools = await c.list_tools()
        run = payload(await c.call_tool("retrieve_memory", {"input": TASK}))
        stored = payload(await c.call_tool("append_turns", {"turns": [{"role": "user", "content": "hello"}]}))
        bad = await c.call_tool("mark_lesson", {"memoryId": "m1", "importance": "very"})
        return tools, run, stored, bad

    tools, run, stored, bad = call(f"{served}/mcp?agentId={AGENT}&userId={USER}&threadId=t-http", steps)
    schemas = {t.name: t.input_schema for t in tools.tools}
    assert schemas == {spec.name: spec.arguments.model_json_schema(by_alias=True) for spec in TOOLS}
    assert run["runId"].startswith("run_")
    assert stored["userId"] == USER and stored["threadId"] == "t-http"
    assert bad.is_error


@pytest.mark.slow
def test_the_http_endpoint_acts_for_the_user_its_url_names_and_refuses_a_malformed_one(served):
    async def profile(c: Client) -> Any:
        return await c.call_tool("get_profile", {})

    nobody = call(f"{served}/mcp?agentId={AGENT}", profile)
    assert nobody.is_error and "userId" in nobody.content[0].text
    malformed = call(f"{served}/mcp?agentId={AGENT}&userId=bad%20user", profile)
    assert malformed.is_error and "not a valid identifier" in malformed.content[0].text


# -- the Lambda function -------------------------------------------------------------------------------


def test_the_mcp_lambda_handler_answers_tools_list_and_tools_call_on_api_gateway_events(tmp_path, minilm):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, enabled_agents=[AGENT])
    try:
        listed = invoke("mcp", json.loads((EVENTS / "mcp" / "tools_list.json").read_text()))
        assert listed["statusCode"] == 200
        names = {t["name"] for t in json.loads(listed["body"])["result"]["tools"]}
        assert names == TOOL_NAMES
        called = invoke("mcp", json.loads((EVENTS / "mcp" / "tools_call.json").read_text()))
        result = json.loads(called["body"])["result"]
        assert result["isError"] is False and result["structuredContent"]["memory"] == "enabled"
        run_id = result["structuredContent"]["runId"]
        # The run really went through the retrieve handler: it is recorded, for the user the URL named.
        status, _, body = app.handle("GET", f"/v1/agents/{AGENT}/runs/{run_id}", {}, b"", "127.0.0.1")
        assert status == 200 and json.loads(body)["userId"] == "u-42"
        event = json.loads((EVENTS / "mcp" / "tools_call.json").read_text())
        event["body"] = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                    "params": {"name": "retrieve_memory", "arguments": {"input": 5}}})
        bad = json.loads(invoke("mcp", event)["body"])["result"]
        assert bad["isError"] is True
        stream = invoke("mcp", json.loads((EVENTS / "mcp" / "get_stream.json").read_text()))
        assert stream["statusCode"] == 405 and json.loads(stream["body"])["error"]["code"] == "method_not_allowed"
    finally:
        app.close()


def test_the_user_can_search_their_memory_list_threads_and_correct_a_fact_through_tools(local, consumed):
    async def steps(c: Client) -> None:
        for thread, text in (("t-1", "I know Python and I like ramen."), ("t-2", "Hello again.")):
            turns = [{"role": "user", "content": text}]
            payload(await c.call_tool("append_turns", {"threadId": thread, "turns": turns}))

        async def python_facts() -> list[Any]:
            # What the test asserts on, not any fact: a consolidation's facts may be listed while it writes them.
            return [f for f in payload(await c.call_tool("list_facts", {}))["items"] if "Python" in f["text"]]

        (python,) = await eventually(python_facts, consumed)
        threads = payload(await c.call_tool("list_threads", {}))
        found = payload(await c.call_tool("search_memory", {"query": "what food", "kinds": ["turns"], "limit": 1}))
        updated = payload(await c.call_tool("update_fact", {"factId": python["factId"], "text": "User knows Rust"}))
        again = payload(await c.call_tool("search_memory", {"query": "Rust", "kinds": ["facts"], "limit": 1}))

        assert [t["threadId"] for t in threads["items"]] == ["t-2", "t-1"]
        assert [t["content"] for t in found["turns"]] == ["I know Python and I like ramen."]
        assert updated["text"] == "User knows Rust" and again["facts"][0]["factId"] == python["factId"]

    call(build_server(local, Identity(AGENT, USER, "t-1")), steps)
