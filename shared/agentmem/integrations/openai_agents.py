"""agentmem for the OpenAI Agents SDK (the `openai-agents` extra): a `Session` kept in agentmem's transcripts.

`AgentMemSession(client, user_id, thread_id)` is the SDK's session protocol (`get_items`, `add_items`,
`pop_item`, `clear_session`) on one of the user's threads: `Runner.run(agent, text, session=session)`.

- What is stored is what agentmem transcripts hold: the conversation's user and assistant messages
  (their text). Tool calls, tool outputs and reasoning items of a turn are not kept, in pairs, so a
  history never holds a tool output without its call. Personal data is masked before storage, so
  `get_items` gives the masked turns (tokens such as {{PII_EMAIL_3f9a1c2b_1}}), and the user's profile
  and facts are consolidated from the turns as from any other.
- Packing: with `token_budget`, `get_items` returns the newest turns whose tiktoken counts (measured by
  the service when they were stored) fit the budget, oldest first.
- Transcripts are append-only (no turn is edited in place), but the user may delete their turns:
  `pop_item` deletes the thread's newest turn (`DELETE .../turns?fromSeq=N`) and returns it unmasked
  for this user (the user's own words, as they were said); `clear_session` deletes the whole thread
  (`DELETE /v1/users/{userId}/threads/{threadId}`). Both also take the turns out of recall; what the
  user's profile and facts already learnt from them stays (see the routes' OpenAPI description).
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread

from agentmem.client import MemoryClient, NotFound, Turn

try:  # the protocol's base class; the session also works duck-typed without the SDK installed
    from agents.memory.session import SessionABC
except ImportError:  # pragma: no cover - the extra is installed wherever this module is used
    SessionABC = object  # type: ignore[assignment,misc]


class AgentMemSession(SessionABC):
    def __init__(
        self,
        client: MemoryClient,
        user_id: str,
        thread_id: str,
        *,
        token_budget: int | None = None,
        session_settings: Any = None,
    ) -> None:
        self.client = client
        self.user_id = user_id
        self.session_id = thread_id
        self.token_budget = token_budget
        self.session_settings = session_settings

    # -- the protocol ---------------------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        if limit is None and self.session_settings is not None:
            limit = getattr(self.session_settings, "limit", None)
        turns = await anyio.to_thread.run_sync(self._turns)
        if limit is not None:
            turns = turns[-limit:] if limit > 0 else []
        if self.token_budget is not None:
            turns = _packed(turns, self.token_budget)
        return [{"role": t.role, "content": t.content} for t in turns]

    async def add_items(self, items: list[Any]) -> None:
        turns = [turn for item in items if (turn := _as_turn(item)) is not None]
        if turns:
            await anyio.to_thread.run_sync(self.client.append_turns, self.user_id, self.session_id, turns)

    async def pop_item(self) -> Any:
        """Delete the newest turn and return it as a message item, unmasked for this user (None if empty)."""
        return await anyio.to_thread.run_sync(self._pop)

    async def clear_session(self) -> None:
        """Delete the thread: its turns, their recall entries and idempotency records."""
        await anyio.to_thread.run_sync(self.client.delete_thread, self.user_id, self.session_id)

    def _pop(self) -> dict[str, str] | None:
        turns = self._turns()
        if not turns or turns[-1].seq is None:
            return None
        removed = self.client.delete_turns(self.user_id, self.session_id, turns[-1].seq)
        if not removed:  # another session popped it first
            return None
        newest = removed[-1]
        return {"role": newest.role, "content": self.client.unmask(self.user_id, self.session_id, newest.content)}

    def _turns(self) -> list[Turn]:
        try:
            return list(self.client.iter_turns(self.user_id, self.session_id))
        except NotFound:  # a thread exists from its first turn on
            return []


def _as_turn(item: Any) -> tuple[str, str] | None:
    """A message item's (role, text); None for what a transcript does not hold (tool calls, reasoning...)."""
    if hasattr(item, "model_dump"):
        item = item.model_dump(exclude_none=True)
    if not isinstance(item, dict) or item.get("type", "message") != "message":
        return None
    role = item.get("role")
    if role not in {"user", "assistant"}:
        return None
    content = item.get("content")
    if isinstance(content, str):
        text = content
    else:
        text = "".join(
            part.get("text", "") for part in content or []
            if isinstance(part, dict) and part.get("type") in {"input_text", "output_text", "text", None}
        )
    return (role, text) if text.strip() else None


def _packed(turns: list[Turn], budget: int) -> list[Turn]:
    kept: list[Turn] = []
    used = 0
    for turn in reversed(turns):
        used += turn.tokens or 0
        if used > budget:
            break
        kept.append(turn)
    return kept[::-1]
