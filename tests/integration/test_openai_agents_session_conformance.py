"""`AgentMemSession` keeps the OpenAI Agents SDK's session protocol, on both backends: the local app
(SQLite) and the real handlers on the AWS adapters under moto (DynamoDB, KMS, the regex detector).

Each test states one behaviour of the protocol: items come back as given, `limit` and `session_settings`
(a `SessionSettings` or a dict) keep the newest items, `pop_item` and `get_items` read by one rule
(unmasked for the owner, or both masked), a token budget packs whole items, `clear_session` empties it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentmem.cli.target import InProcessTransport
from agentmem.client import MemoryClient, NotFound, Turn
from agentmem.integrations.openai_agents import AgentMemSession
from agentmem.local import apigateway
from agentmem.local.lambda_runtime import invoke
from agentmem.local.server import create_app
from agentmem.wiring import Services, set_services
from agents import Agent, RunConfig, Runner, SessionSettings
from agents.testing import ScriptedModel
from moto import mock_aws
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from tests.integration.conversations_harness import HashingEmbedder
from tests.integration.test_conversations_moto import AWS_ENVIRONMENT, Stack

EMAIL = "robert.smith@example.com"


class HandlerTransport:
    """MemoryClient's transport answered by the real Lambda handlers on one tenant's AWS Services."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def send(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        from urllib.parse import urlsplit

        set_services(self.services)
        parts = urlsplit(url)
        found = apigateway.match(method, parts.path)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        event = apigateway.proxy_event(
            found.route, found.path_parameters, method, path, dict(headers), body.decode() or None, "127.0.0.1"
        )
        result = invoke(found.route.function, event)
        return int(result["statusCode"]), dict(result.get("headers") or {}), (result.get("body") or "").encode()

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def aws_services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in AWS_ENVIRONMENT.items():
            patch.setenv(name, value)
        patch.delenv("AWS_PROFILE", raising=False)
        patch.delenv("AWS_ENDPOINT_URL", raising=False)
        with mock_aws():
            stack = Stack(tmp_path_factory.mktemp("moto"))
            yield stack.services("acme")
            set_services(None)
            for services in stack.built:
                services.close()


@pytest.fixture(params=["local", "aws"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryClient]:
    if request.param == "local":
        app = create_app(tmp_path, start_worker=False, ports={"embedder": HashingEmbedder()})
        transport: Any = InProcessTransport(app)
    else:
        # Every test's own environment is restored after it (tests/conftest.py): the fake AWS one again.
        monkeypatch = request.getfixturevalue("monkeypatch")
        for name, value in AWS_ENVIRONMENT.items():
            monkeypatch.setenv(name, value)
        transport = HandlerTransport(request.getfixturevalue("aws_services"))
    client = MemoryClient("http://agentmem.local", transport=transport)
    yield client
    client.close()


_threads = itertools.count()


def turns_of(memory: MemoryClient, user: str, thread: str) -> list[Turn]:
    """The thread's transcript; none once its last turn is gone (a thread exists from its first turn on)."""
    try:
        return list(memory.iter_turns(user, thread))
    except NotFound:
        return []


@pytest.fixture
def thread() -> str:
    """A thread id no other test uses (the AWS tenant is shared by the module)."""
    return f"t-{next(_threads)}"


GIVEN: list[Any] = [
    {"role": "user",
     "content": [{"type": "input_text", "text": f"Mail {EMAIL} the weather at the Golden Gate Bridge"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need the weather."}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather", "arguments": '{"city": "SF"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "Fog, 14°C"},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": f"Sent to {EMAIL}: fog.", "annotations": []}]},
]


def test_items_come_back_as_given_with_structured_content_tool_calls_and_reasoning(memory, thread):
    session = AgentMemSession(memory, "u-1", thread)

    async def steps() -> list[Any]:
        await session.add_items(GIVEN[:2])
        await session.add_items(GIVEN[2:])
        return await session.get_items()

    got = anyio.run(steps)
    assert got == GIVEN
    assert got[-1]["content"][0]["text"] == f"Sent to {EMAIL}: fog."  # what the SDK reads back
    # The two messages' text went to the transcript too (recall and the profile learn from it), masked.
    turns = turns_of(memory, "u-1", thread)
    assert [t.role for t in turns] == ["user", "assistant"] and all(EMAIL not in t.content for t in turns)


def test_what_is_stored_is_masked_where_it_holds_text(memory, thread):
    anyio.run(AgentMemSession(memory, "u-1", thread).add_items, GIVEN)
    stored = json.dumps([i.value for i in memory.search_items(("users", "u-1"), ("_sessions", thread), limit=50)])
    assert EMAIL not in stored and "{{PII_EMAIL_" in stored


def test_a_limit_keeps_the_newest_items_counting_tool_calls_and_outputs(memory, thread):
    session = AgentMemSession(memory, "u-1", thread)

    async def steps() -> list[list[Any]]:
        await session.add_items(GIVEN)
        return [await session.get_items(limit=n) for n in (2, 0, len(GIVEN) + 1, 99, -1)]

    two, none, one_more, many, negative = anyio.run(steps)
    assert two == GIVEN[3:] and none == []
    assert one_more == many == negative == GIVEN  # more than there are, or a negative limit: all of them


@pytest.mark.parametrize("settings", [SessionSettings(limit=2), {"limit": 2}], ids=["SessionSettings", "dict"])
def test_session_settings_as_given_or_as_a_dict_set_the_default_limit(memory, thread, settings):
    session = AgentMemSession(memory, "u-1", thread, session_settings=settings)
    assert isinstance(session.session_settings, SessionSettings) and session.session_settings.limit == 2

    async def steps() -> tuple[list[Any], list[Any]]:
        await session.add_items([{"role": "user", "content": f"Message {n}"} for n in range(5)])
        return await session.get_items(), await session.get_items(limit=4)

    default, explicit = anyio.run(steps)
    assert [i["content"] for i in default] == ["Message 3", "Message 4"]
    assert [i["content"] for i in explicit] == ["Message 1", "Message 2", "Message 3", "Message 4"]


def test_an_unknown_session_setting_is_refused_as_the_sdk_refuses_it(memory, thread):
    with pytest.raises(TypeError, match="limitt"):
        AgentMemSession(memory, "u-1", thread, session_settings={"limitt": 1})


def test_the_runner_reads_a_dict_configured_session_and_a_run_config_limit_overrides_it(memory, thread):
    model = ScriptedModel()
    agent = Agent(name="assistant", model=model)
    session = AgentMemSession(memory, "u-1", thread, session_settings={"limit": 100})

    async def steps() -> Any:
        await session.add_items([{"role": "user", "content": f"Turn {n}"} for n in range(6)])
        model.enqueue([_answer("Got it")])
        first = await Runner.run(agent, "New question", session=session)
        model.enqueue([_answer("Again")])
        await Runner.run(agent, "Once more", session=session, run_config=RunConfig(session_settings={"limit": 2}))
        return first

    assert anyio.run(steps).final_output == "Got it"
    first_input, second_input = (call.input for call in model.calls)
    assert len(first_input) == 7  # the whole history and the question
    assert [i["content"] if isinstance(i["content"], str) else i["content"][0]["text"] for i in second_input] == [
        "New question", "Got it", "Once more",
    ]


def test_pop_item_and_get_items_agree_returning_the_owners_own_words_by_default(memory, thread):
    session = AgentMemSession(memory, "u-1", thread)
    said = [{"role": "user", "content": f"I am Robert, {EMAIL}"}, {"role": "assistant", "content": "Hi Robert."}]

    async def steps() -> tuple[list[Any], Any, list[Any]]:
        await session.add_items(said)
        listed = await session.get_items()
        return listed, await session.pop_item(), await session.get_items()

    listed, popped, left = anyio.run(steps)
    assert listed == said and popped == said[1] and left == said[:1]


def test_with_unmask_off_pop_item_and_get_items_agree_returning_the_masked_items(memory, thread):
    session = AgentMemSession(memory, "u-1", thread, unmask=False)

    async def steps() -> tuple[list[Any], Any]:
        await session.add_items([{"role": "user", "content": f"Write to {EMAIL}"}])
        return await session.get_items(), await session.pop_item()

    [listed], popped = anyio.run(steps)
    assert popped == listed and EMAIL not in listed["content"] and "{{PII_EMAIL_" in listed["content"]


def test_pop_item_removes_the_newest_item_and_its_transcript_turn(memory, thread):
    session = AgentMemSession(memory, "u-1", thread)

    async def steps() -> list[Any]:
        assert await session.pop_item() is None
        await session.add_items(GIVEN)
        popped = [await session.pop_item() for _ in range(len(GIVEN) + 1)]
        return popped

    popped = anyio.run(steps)
    assert popped == [*reversed(GIVEN), None]
    assert turns_of(memory, "u-1", thread) == []


def test_a_token_budget_keeps_the_newest_whole_items_that_fit(memory, thread):
    session = AgentMemSession(memory, "u-1", thread)
    anyio.run(session.add_items, [{"role": "user", "content": "word " * 200}, *GIVEN[2:4]])
    stored = sorted(memory.search_items(("users", "u-1"), ("_sessions", thread), limit=50), key=lambda s: s.key)
    costs = [s.value["tokens"] for s in stored]
    packed = AgentMemSession(memory, "u-1", thread, token_budget=costs[1] + costs[2])
    assert anyio.run(packed.get_items) == GIVEN[2:4]
    assert anyio.run(AgentMemSession(memory, "u-1", thread, token_budget=costs[2] - 1).get_items) == []


def test_clear_session_empties_the_session_and_its_thread_and_nothing_else(memory, thread):
    session, other = AgentMemSession(memory, "u-1", thread), AgentMemSession(memory, "u-1", thread + "-other")

    async def steps() -> tuple[list[Any], list[Any]]:
        await session.add_items(GIVEN)
        await other.add_items([{"role": "user", "content": "elsewhere"}])
        await session.clear_session()
        await session.clear_session()  # idempotent
        return await session.get_items(), await other.get_items()

    mine, theirs = anyio.run(steps)
    assert mine == [] and [i["content"] for i in theirs] == ["elsewhere"]
    assert turns_of(memory, "u-1", thread) == []


def _answer(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id="msg_x", role="assistant", status="completed", type="message",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])
