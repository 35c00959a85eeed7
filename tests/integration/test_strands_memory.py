"""A Strands agent with `AgentMemPlugin`, on a scripted model provider (no network), against the real local service."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.cli.target import InProcessTransport
from agentmem.client import MemoryClient
from agentmem.integrations.strands import RUN_ID_STATE_KEY, AgentMemPlugin
from agentmem.local.server import create_app
from strands import Agent
from strands.models.model import Model

from tests.integration.indexer_watch import after_indexing, watch_indexer

AGENT = "brand-auditor"
AUDIT = "Audit the spring catalogue intro: 'Trail magic happens on every hike.'"
SIMILAR = "Audit the summer catalogue intro: 'Trail magic waits at every summit.'"
COMMENT = "'Trail magic' is our own idiom; do not flag it."
SYSTEM = "You audit articles for the brand's voice."


class ScriptedModel(Model):
    """A model provider that answers from a script and keeps what it was sent (system prompt, messages)."""

    def __init__(self, script: list[dict[str, Any]]):
        self.script = list(script)
        self.calls: list[dict[str, Any]] = []

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any):
        raise NotImplementedError

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None,
                     **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        self.calls.append({"system": system_prompt, "messages": json.loads(json.dumps(messages, default=str)),
                           "tools": [t["name"] for t in tool_specs or []]})
        step = self.script.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        if "tool" in step:
            use = {"name": step["tool"], "toolUseId": f"t{len(self.calls)}"}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(step["input"])}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": step["text"]}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


@pytest.fixture
def indexed(monkeypatch: pytest.MonkeyPatch) -> threading.Semaphore:
    """Released after each run of the background indexer (watched before the app starts)."""
    return watch_indexer(monkeypatch)


@pytest.fixture
def memory(tmp_path: Path, minilm, indexed) -> Iterator[MemoryClient]:
    app = create_app(tmp_path, start_worker=True, ports={"embedder": minilm}, enabled_agents=[AGENT])
    client = MemoryClient("http://agentmem.local", transport=InProcessTransport(app))
    yield client
    client.close()


def wait_for_lesson(memory: MemoryClient, indexed: threading.Semaphore, text: str) -> list[Any]:
    return list(after_indexing(indexed, lambda: memory.retrieve(AGENT, text).lessons))


def all_text(call: dict[str, Any]) -> str:
    texts = [b.get("text", "") for m in call["messages"] for b in m["content"]]
    return "\n".join([call["system"] or "", *texts])


def test_a_lesson_given_as_feedback_on_one_run_is_in_the_messages_of_the_next_similar_run(memory, indexed):
    model = ScriptedModel([{"text": "FLAG: 'Trail magic' (cliche)"}, {"text": "No flags."}])
    plugin = AgentMemPlugin(memory, AGENT)
    agent = Agent(model=model, system_prompt=SYSTEM, plugins=[plugin], callback_handler=None)

    first = agent(AUDIT)
    run_id = plugin.run_id
    assert run_id and agent.state.get(RUN_ID_STATE_KEY) == run_id
    assert memory.get_run(AGENT, run_id).output == str(first).strip()
    assert "Lessons from past runs" not in all_text(model.calls[0])

    plugin.feedback("down", COMMENT)
    wait_for_lesson(memory, indexed, SIMILAR)
    agent(SIMILAR)
    second = model.calls[1]
    assert second["system"].startswith("## Lessons from past runs") and COMMENT in second["system"]
    assert second["system"].endswith(SYSTEM)
    # Only the model's input carried the memory: the agent's own history holds no copy of it.
    assert COMMENT not in json.dumps(agent.messages)
    assert memory.get_run(AGENT, plugin.run_id).injected_memory_ids


def test_the_feedback_tool_rates_the_previous_answer_and_the_next_run_gets_the_lesson(memory, indexed):
    model = ScriptedModel([
        {"text": "FLAG: 'Trail magic' (cliche)"},
        {"tool": "agentmem_feedback", "input": {"rating": "down", "comment": COMMENT}},
        {"text": "Noted, I will not flag it again."},
        {"text": "No flags."},
    ])
    plugin = AgentMemPlugin(memory, AGENT)
    agent = Agent(model=model, plugins=[plugin], callback_handler=None)

    agent(AUDIT)
    audited = plugin.run_id
    agent("Wrong: " + COMMENT)
    assert "agentmem_feedback" in model.calls[1]["tools"]
    feedback = memory.get_run(AGENT, audited).feedback
    assert [(f.rating, f.comment) for f in feedback] == [("down", COMMENT)]

    wait_for_lesson(memory, indexed, SIMILAR)
    Agent(model=model, plugins=[AgentMemPlugin(memory, AGENT)], callback_handler=None)(SIMILAR)
    assert COMMENT in model.calls[-1]["system"]


def test_with_a_user_and_thread_the_exchange_is_kept_and_comes_back_as_history_for_a_new_agent(memory):
    model = ScriptedModel([{"text": "Hello Ana, noted."}, {"text": "You live in Lisbon."}])
    first = AgentMemPlugin(memory, AGENT, user_id="u-42", thread_id="t-1")
    Agent(model=model, plugins=[first], callback_handler=None)("I live in Lisbon.")
    def plain(text: str) -> str:  # turns are stored masked (names, places); the user's unmask restores them
        return memory.unmask("u-42", "t-1", text)

    turns = [(t.role, plain(t.content)) for t in memory.iter_turns("u-42", "t-1")]
    assert turns == [("user", "I live in Lisbon."), ("assistant", "Hello Ana, noted.")]

    fresh = Agent(model=model, plugins=[AgentMemPlugin(memory, AGENT, user_id="u-42", thread_id="t-1")],
                  callback_handler=None)
    fresh("Where do I live?")
    call = model.calls[1]
    assert call["messages"][0]["role"] == "user"
    roles = [m["role"] for m in call["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    assert "I live in Lisbon." in plain(all_text(call)) and "Where do I live?" in all_text(call)


def test_feedback_before_any_run_says_there_is_nothing_to_rate(memory):
    plugin = AgentMemPlugin(memory, AGENT)
    with pytest.raises(ValueError, match="no run"):
        plugin.feedback("up")


def test_on_a_thread_the_model_receives_each_previous_exchange_once_on_the_third_invocation(memory):
    model = ScriptedModel([{"text": "First answer."}, {"text": "Second answer."}, {"text": "Third answer."}])
    plugin = AgentMemPlugin(memory, AGENT, user_id="u-7", thread_id="t-3")
    agent = Agent(model=model, system_prompt=SYSTEM, plugins=[plugin], callback_handler=None)

    agent("Audit the first intro about hiking boots.")
    agent("Audit the second intro about rain jackets.")
    agent("Audit the third intro about tents.")

    third = model.calls[2]
    texts = [b.get("text", "") for m in third["messages"] for b in m["content"]]
    for said in ("Audit the first intro about hiking boots.", "First answer.",
                 "Audit the second intro about rain jackets.", "Second answer.",
                 "Audit the third intro about tents."):
        assert sum(text.count(said) for text in texts) == 1, (said, texts)
    roles = [m["role"] for m in third["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    # agentmem still holds the thread: a new agent on it gets both exchanges from agentmem's history.
    assert len(list(memory.iter_turns("u-7", "t-3"))) == 6
