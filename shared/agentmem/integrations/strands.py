"""agentmem for Strands Agents (the `strands` extra): memory before each invocation, the output after it.

`AgentMemPlugin` is a Strands `Plugin`, the SDK's extension point that carries hooks, tools and model
middleware in one object (`Agent(plugins=[...])`):

- before each invocation (`BeforeInvocationEvent`) it retrieves the agent's memory for the user's
  input: the run is recorded and its id kept (`plugin.run_id`, and `agent.state["agentmem_run_id"]`);
- for that invocation's model calls (`InvokeModelStage.Input` middleware) the memory is put in front:
  the system messages ("Lessons from past runs") before the agent's own system prompt, the user's
  context and history before the conversation. Only the model's input for the call changes, so the
  agent's durable history never fills with copies of the memory. agentmem's history of the thread
  leaves out the exchanges this plugin recorded that the agent still holds in its own conversation,
  so the model sees each exchange once;
- after it (`AfterInvocationEvent`) the output is recorded on the run and, with a user and thread,
  the exchange is appended to the user's transcript (profile and facts are consolidated from it);
- the `agentmem_feedback` tool lets the agent record the user's verdict on its previous answer, and
  `plugin.feedback(rating, comment)` is the editor's way to rate the latest run.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal

from strands import tool
from strands.hooks import AfterInvocationEvent, BeforeInvocationEvent
from strands.middleware.stages import InvokeModelStage
from strands.plugins import Plugin

from agentmem.client import MemoryClient, RetrieveResult

if TYPE_CHECKING:
    from strands import Agent
    from strands.middleware.stages import InvokeModelContext

log = logging.getLogger(__name__)
RUN_ID_STATE_KEY = "agentmem_run_id"


class AgentMemPlugin(Plugin):
    """Gives a Strands agent agentmem's memory: `Agent(model=..., plugins=[AgentMemPlugin(memory, "my-agent")])`."""

    name = "agentmem"

    def __init__(
        self,
        client: MemoryClient,
        agent_id: str,
        *,
        user_id: str | None = None,
        thread_id: str | None = None,
        token_budget: int | None = None,
        record_turns: bool = True,
    ) -> None:
        self.client = client
        self.agent_id = agent_id
        self.user_id = user_id
        self.thread_id = thread_id
        self.token_budget = token_budget
        self.record_turns = record_turns
        self.memory: RetrieveResult | None = None
        self.run_id: str | None = None
        self.previous_run_id: str | None = None
        self._input: str | None = None
        # Exchanges this plugin appended to the thread; they are the thread's newest turns.
        self._recorded_exchanges = 0
        super().__init__()

    def init_agent(self, agent: Agent) -> None:
        agent.add_hook(self.retrieve_before_invocation)
        agent.add_hook(self.record_after_invocation)
        agent.add_middleware(InvokeModelStage.Input, self._with_memory)

    # -- the invocation -----------------------------------------------------------------------------

    def retrieve_before_invocation(self, event: BeforeInvocationEvent) -> None:
        text = _last_user_text(event.messages if event.messages is not None else event.agent.messages)
        self.previous_run_id, self.memory, self._input = self.run_id, None, text
        if not text:
            return
        self.memory = self.client.retrieve(
            self.agent_id, text, user_id=self.user_id, thread_id=self.thread_id, token_budget=self.token_budget
        )
        self.run_id = self.memory.run_id
        event.agent.state.set(RUN_ID_STATE_KEY, self.run_id)

    def record_after_invocation(self, event: AfterInvocationEvent) -> None:
        if self.memory is None or event.result is None:
            return
        output = str(event.result).strip()
        self.client.set_output(self.agent_id, self.memory.run_id, output)
        if self.record_turns and self.user_id and self.thread_id and self._input and output:
            self.client.append_turns(self.user_id, self.thread_id, [("user", self._input), ("assistant", output)])
            self._recorded_exchanges += 1

    async def _with_memory(self, context: InvokeModelContext) -> InvokeModelContext:
        if self.memory is None or not self.memory.messages:
            return context
        lessons = "\n\n".join(m.content for m in self.memory.messages if m.role == "system")
        before = [m for m in self.memory.messages if m.role != "system"]
        conversation = list(context.messages)
        # `messages` ends with the thread's history. Its newest exchanges are the ones this plugin recorded;
        # those Strands still holds (one user text message opens each invocation) would reach the model twice.
        held = min(self._recorded_exchanges, max(_user_text_messages(conversation) - 1, 0))
        duplicated = min(2 * held, len(self.memory.history))
        if duplicated:
            before = before[: len(before) - duplicated]
        system = _prepend_system(lessons, context.system_prompt) if lessons else context.system_prompt
        messages = _prepend_messages([(m.role, m.content) for m in before], conversation)
        return context.replace(system_prompt=system, messages=messages)

    # -- feedback ---------------------------------------------------------------------------------

    def feedback(self, rating: Literal["up", "down"], comment: str | None = None, *, run_id: str | None = None) -> Any:
        """An editor's verdict on `run_id` (default: the latest invocation's run); it becomes a lesson."""
        target = run_id or self.run_id
        if target is None:
            raise ValueError("no run to give feedback on: the agent has not been invoked with memory yet")
        return self.client.feedback(self.agent_id, target, rating, comment)

    @tool
    def agentmem_feedback(self, rating: Literal["up", "down"], comment: str) -> str:
        """Record the user's verdict on your previous answer, when the user says it was right or wrong.

        Use "down" with the user's reason when they correct you or reject the answer, "up" when they
        confirm it was good. The verdict becomes a lesson you get in later, similar tasks.

        Args:
            rating: "up" (the previous answer was right) or "down" (it was wrong).
            comment: Why, in the user's words: what was wrong and what to do instead.
        """
        if self.previous_run_id is None:
            return "There is no previous answer to rate in this conversation."
        receipt = self.client.feedback(self.agent_id, self.previous_run_id, rating, comment)
        return f"Feedback recorded ({receipt.status}); it will be a lesson for similar tasks."


def _last_user_text(messages: Any) -> str:
    for message in reversed(list(messages or [])):
        if message.get("role") == "user":
            texts = [block["text"] for block in message.get("content", []) if isinstance(block.get("text"), str)]
            if texts:
                return "\n".join(texts)
    return ""


def _user_text_messages(messages: list[Any]) -> int:
    """User messages with text (an invocation's input), not the tool results Strands sends as user messages."""
    return sum(
        1 for m in messages
        if m.get("role") == "user" and any(isinstance(b.get("text"), str) for b in m.get("content", []))
    )


def _prepend_system(lessons: str, system_prompt: Any) -> Any:
    if system_prompt is None or system_prompt == "":
        return lessons
    if isinstance(system_prompt, str):
        return f"{lessons}\n\n{system_prompt}"
    return [{"text": lessons}, *system_prompt]


def _prepend_messages(before: list[tuple[str, str]], conversation: list[Any]) -> list[Any]:
    """`before` (memory's user and assistant messages) in front of the conversation, roles alternating and the
    first message the user's (as Bedrock's Converse wants): neighbours of one role are merged."""
    merged: list[Any] = []
    for role, text in before:
        if not merged and role == "assistant":
            role, text = "user", f"Earlier in this conversation the assistant said:\n{text}"
        if merged and merged[-1]["role"] == role:
            merged[-1] = {"role": role, "content": [*merged[-1]["content"], {"text": text}]}
        else:
            merged.append({"role": role, "content": [{"text": text}]})
    if merged and conversation and merged[-1]["role"] == conversation[0]["role"]:
        first = conversation[0]
        merged[-1] = {**first, "content": [*merged[-1]["content"], *first["content"]]}
        conversation = conversation[1:]
    return merged + conversation
