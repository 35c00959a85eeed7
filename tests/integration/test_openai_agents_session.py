"""`AgentMemSession` under the OpenAI Agents SDK's session protocol, and with its Runner on a scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentmem.cli.target import InProcessTransport
from agentmem.client import MemoryClient
from agentmem.integrations.openai_agents import AgentMemSession
from agentmem.local.server import create_app
from agents import Agent, Runner
from agents.items import ModelResponse
from agents.memory.session import Session
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText


class ScriptedModel(Model):
    """Answers from a script; keeps the input of every call."""

    def __init__(self, answers: list[str]):
        self.answers = list(answers)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, **kwargs) -> ModelResponse:
        self.inputs.append(input)
        text = self.answers.pop(0)
        message = ResponseOutputMessage(id=f"msg_{len(self.inputs)}", role="assistant", status="completed",
                                        type="message",
                                        content=[ResponseOutputText(type="output_text", text=text, annotations=[])])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):  # pragma: no cover - not used by Runner.run
        raise NotImplementedError


def scripted_agent(*answers: str) -> tuple[ScriptedModel, Agent]:
    model = ScriptedModel(list(answers))
    return model, Agent(name="assistant", instructions="Be brief.", model=model)


def texts(model_input: list[Any]) -> list[str]:
    """The text of each message item a model was given."""
    return [item["content"] if isinstance(item["content"], str) else item["content"][0]["text"]
            for item in model_input]


@pytest.fixture
def memory(tmp_path: Path, minilm) -> Iterator[MemoryClient]:
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    client = MemoryClient("http://agentmem.local", transport=InProcessTransport(app))
    yield client
    client.close()


def test_the_session_protocol_on_agentmem_items_and_transcripts(memory):
    session = AgentMemSession(memory, "u-42", "t-1")
    given = [
        {"role": "user", "content": "Write to ana@example.com about the refund"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Done.", "annotations": []}]},
    ]

    async def steps() -> None:
        assert session.session_id == "t-1"
        assert await session.get_items() == []
        await session.add_items(given)
        items = await session.get_items()
        assert items == given  # as given, and unmasked for their owner
        assert await session.get_items(limit=1) == [items[-1]]
        # The messages' text is the thread's transcript, masked.
        turns = list(memory.iter_turns("u-42", "t-1"))
        assert [t.role for t in turns] == ["user", "assistant"] and "{{PII_EMAIL_" in turns[0].content
        # The same thread seen by another session object (another process): the same history.
        assert await AgentMemSession(memory, "u-42", "t-1").get_items() == items
        assert await AgentMemSession(memory, "u-9", "t-1").get_items() == []

    assert isinstance(session, Session)  # the SDK's runtime-checkable protocol
    anyio.run(steps)


def test_pop_item_deletes_the_newest_item_and_returns_it_unmasked_for_the_user_as_get_items_does(memory):
    session = AgentMemSession(memory, "u-42", "t-pop")

    async def steps() -> None:
        assert await session.pop_item() is None  # an empty session
        await session.add_items([
            {"role": "user", "content": "Mail the invoice to ana@example.com"},
            {"role": "assistant", "content": "Sent to ana@example.com."},
        ])
        popped = await session.pop_item()
        assert popped == {"role": "assistant", "content": "Sent to ana@example.com."}
        [kept] = await session.get_items()
        assert kept == {"role": "user", "content": "Mail the invoice to ana@example.com"}
        # Another user's session of the same thread id is another thread: nothing to pop there.
        assert await AgentMemSession(memory, "u-9", "t-pop").pop_item() is None
        assert (await session.pop_item())["content"] == "Mail the invoice to ana@example.com"
        assert await session.get_items() == [] and await session.pop_item() is None
        await session.add_items([{"role": "user", "content": "again"}])
        assert [t.seq for t in memory.iter_turns("u-42", "t-pop")] == [1]

    anyio.run(steps)


def test_clear_session_deletes_the_thread_and_the_session_starts_afresh(memory):
    session = AgentMemSession(memory, "u-42", "t-clear")
    other = AgentMemSession(memory, "u-42", "t-other")

    async def steps() -> None:
        await session.add_items([{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"}])
        await other.add_items([{"role": "user", "content": "elsewhere"}])
        await session.clear_session()
        assert await session.get_items() == []
        assert [i["content"] for i in await other.get_items()] == ["elsewhere"]
        await session.clear_session()  # idempotent
        await session.add_items([{"role": "user", "content": "new start"}])
        assert [(t.seq, t.content) for t in memory.iter_turns("u-42", "t-clear")] == [(1, "new start")]

    anyio.run(steps)


def test_a_corrected_question_after_pop_item_is_all_the_runner_sends_the_model(memory):
    model, agent = scripted_agent("Paris.", "Lisbon is the capital of Portugal.")
    session = AgentMemSession(memory, "u-42", "t-undo")

    async def steps() -> Any:
        await Runner.run(agent, "What is the capital of Portgual?", session=session)
        # The SDK's documented correction pattern: take back the answer and the question, ask again.
        assert (await session.pop_item())["content"][0]["text"] == "Paris."  # the model's message, as it was
        assert (await session.pop_item())["role"] == "user"
        return await Runner.run(agent, "What is the capital of Portugal?", session=session)

    result = anyio.run(steps)
    assert result.final_output == "Lisbon is the capital of Portugal."
    assert texts(model.inputs[1]) == ["What is the capital of Portugal?"]
    stored = [memory.unmask("u-42", "t-undo", t.content) for t in memory.iter_turns("u-42", "t-undo")]
    assert stored == ["What is the capital of Portugal?", "Lisbon is the capital of Portugal."]


def test_a_token_budget_keeps_the_newest_turns_that_fit(memory):
    session = AgentMemSession(memory, "u-42", "t-2")
    long = "word " * 200

    async def steps() -> list[Any]:
        await session.add_items([{"role": "user", "content": long}, {"role": "assistant", "content": "short"},
                                 {"role": "user", "content": "also short"}])
        tokens = [t.tokens for t in memory.iter_turns("u-42", "t-2")]
        packed = AgentMemSession(memory, "u-42", "t-2", token_budget=tokens[1] + tokens[2])
        return await packed.get_items()

    assert [i["content"] for i in anyio.run(steps)] == ["short", "also short"]


def test_the_runner_feeds_the_history_back_to_the_model_in_the_next_run(memory):
    model, agent = scripted_agent("Noted: you live in Lisbon.", "You live in Lisbon.")
    session = AgentMemSession(memory, "u-42", "t-3")

    async def steps() -> Any:
        await Runner.run(agent, "I live in Lisbon.", session=session)
        return await Runner.run(agent, "Where do I live?", session=AgentMemSession(memory, "u-42", "t-3"))

    result = anyio.run(steps)
    assert result.final_output == "You live in Lisbon."
    said = texts(model.inputs[1])

    def plain(text: str) -> str:  # the history is masked (places are personal data); the user's unmask restores it
        return memory.unmask("u-42", "t-3", text)

    assert [plain(t) for t in said[:2]] == ["I live in Lisbon.", "Noted: you live in Lisbon."]
    assert said[-1] == "Where do I live?"
    stored = [(t.role, plain(t.content)) for t in memory.iter_turns("u-42", "t-3")]
    assert stored == [("user", "I live in Lisbon."), ("assistant", "Noted: you live in Lisbon."),
                      ("user", "Where do I live?"), ("assistant", "You live in Lisbon.")]
