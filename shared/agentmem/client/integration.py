"""Wrap an agent call with memory: retrieve before, record the output after, keep the run id for feedback."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentmem.client.client import MemoryClient
from agentmem.client.errors import ServerError, Throttled, TransportError
from agentmem.client.models import RetrieveResult

log = logging.getLogger(__name__)
ChatMessage = dict[str, str]
# What `fail_open` tolerates: the memory service being unreachable or overloaded, not a wrong request.
_UNAVAILABLE = (TransportError, ServerError, Throttled)


class AgentRun(tuple[str, str | None]):
    """`(output, run_id)` from `with_memory`, unpacked as such; `.memory` is what was put in front of the prompt."""

    memory: RetrieveResult | None

    def __new__(cls, output: str, run_id: str | None, memory: RetrieveResult | None = None) -> AgentRun:
        run = super().__new__(cls, (output, run_id))
        run.memory = memory
        return run

    @property
    def output(self) -> str:
        return self[0]

    @property
    def run_id(self) -> str | None:
        return self[1]


def with_memory(
    client: MemoryClient,
    agent_id: str,
    input: str,
    call_agent: Callable[[list[ChatMessage]], str],
    *,
    system: str | None = None,
    user_id: str | None = None,
    thread_id: str | None = None,
    token_budget: int | None = None,
    top_k: int | None = None,
    fail_open: bool = False,
) -> AgentRun:
    """Run an agent with its memory.

    `call_agent` gets chat messages: the memory's messages first (lessons, profile, facts, history),
    then `system` (the agent's own system prompt) when given, then `input` as the user's message;
    it returns the agent's output. The output is recorded on the run, whose id is returned for an
    editor's feedback later.

    With `fail_open`, an unreachable or failing memory service does not stop the agent: it runs
    without memory, and `run_id` is None when no run could be recorded.
    """
    memory: RetrieveResult | None
    try:
        memory = client.retrieve(
            agent_id, input, user_id=user_id, thread_id=thread_id, token_budget=token_budget, top_k=top_k
        )
    except _UNAVAILABLE:
        if not fail_open:
            raise
        log.warning("memory unavailable for agent %s; running without it", agent_id, exc_info=True)
        memory = None
    messages = memory.chat_messages if memory is not None else []
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": input})
    output = call_agent(messages)
    if memory is not None:
        try:
            client.set_output(agent_id, memory.run_id, output)
        except _UNAVAILABLE:
            if not fail_open:
                raise
            # The run stays usable for feedback; its lesson is then built from the comment and the input.
            log.warning("could not record the output of run %s", memory.run_id, exc_info=True)
    return AgentRun(output, memory.run_id if memory is not None else None, memory)


def converse_request(messages: Sequence[ChatMessage]) -> dict[str, Any]:
    """Chat messages as Bedrock Converse's `system` and `messages` arguments.

    Converse takes system prompts apart, wants the conversation to start with the user and the
    roles to alternate, and rejects blank text blocks: system messages become `system` blocks in
    order, consecutive messages of one role are merged, and a history that opens with the
    assistant keeps those words as context in `system`.
    """
    system: list[dict[str, str]] = []
    conversation: list[dict[str, Any]] = []
    for message in messages:
        role, text = message["role"], message["content"]
        if not text.strip():
            continue
        if role == "system":
            system.append({"text": text})
        elif not conversation and role == "assistant":
            system.append({"text": f"Earlier in this conversation the assistant said:\n{text}"})
        elif conversation and conversation[-1]["role"] == role:
            conversation[-1]["content"].append({"text": text})
        else:
            conversation.append({"role": role, "content": [{"text": text}]})
    return {"messages": conversation, **({"system": system} if system else {})}


def converse_text(response: Mapping[str, Any]) -> str:
    """The text of a Bedrock Converse answer."""
    blocks = response["output"]["message"]["content"]
    return "".join(block.get("text", "") for block in blocks)
