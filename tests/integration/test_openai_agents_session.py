"""`AgentMemSession` under the OpenAI Agents SDK's session protocol, and with its Runner on a scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentmem.cli.target import InProcessTransport
from agentmem.client import MemoryClient
from agentmem.integrations.openai_agents import AgentMemSession, AppendOnlyTranscript
from agentmem.local.server import create_app
from agents import Agent, Runner
from agents.items import ModelResponse
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


@pytest.fixture
def memory(tmp_path: Path, minilm) -> Iterator[MemoryClient]:
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    client = MemoryClient("http://agentmem.local", transport=InProcessTransport(app))
    yield client
    client.close()


def test_the_session_protocol_on_agentmem_transcripts(memory):
    session = AgentMemSession(memory, "u-42", "t-1")

    async def steps() -> None:
        assert session.session_id == "t-1"
        assert await session.get_items() == []
        await session.add_items([
            {"role": "user", "content": "Write to ana@example.com about the refund"},
            {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Done.", "annotations": []}]},
        ])
        items = await session.get_items()
        assert [i["role"] for i in items] == ["user", "assistant"]
        assert "ana@example.com" not in items[0]["content"] and "{{PII_EMAIL_" in items[0]["content"]
        assert items[1] == {"role": "assistant", "content": "Done."}
        assert await session.get_items(limit=1) == [items[1]]
        # The same thread seen by another session object (another process): the same history.
        assert await AgentMemSession(memory, "u-42", "t-1").get_items() == items
        assert await AgentMemSession(memory, "u-9", "t-1").get_items() == []
        with pytest.raises(AppendOnlyTranscript, match="append-only"):
            await session.pop_item()
        with pytest.raises(AppendOnlyTranscript, match="append-only"):
            await session.clear_session()
        assert await session.get_items() == items

    anyio.run(steps)


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
    model = ScriptedModel(["Noted: you live in Lisbon.", "You live in Lisbon."])
    agent = Agent(name="assistant", instructions="Be brief.", model=model)
    session = AgentMemSession(memory, "u-42", "t-3")

    async def steps() -> Any:
        await Runner.run(agent, "I live in Lisbon.", session=session)
        return await Runner.run(agent, "Where do I live?", session=AgentMemSession(memory, "u-42", "t-3"))

    result = anyio.run(steps)
    assert result.final_output == "You live in Lisbon."
    second_input = model.inputs[1]
    texts = [item["content"] if isinstance(item["content"], str) else item["content"][0]["text"]
             for item in second_input]

    def plain(text: str) -> str:  # the history is masked (places are personal data); the user's unmask restores it
        return memory.unmask("u-42", "t-3", text)

    assert [plain(t) for t in texts[:2]] == ["I live in Lisbon.", "Noted: you live in Lisbon."]
    assert texts[-1] == "Where do I live?"
    stored = [(t.role, plain(t.content)) for t in memory.iter_turns("u-42", "t-3")]
    assert stored == [("user", "I live in Lisbon."), ("assistant", "Noted: you live in Lisbon."),
                      ("user", "Where do I live?"), ("assistant", "You live in Lisbon.")]
