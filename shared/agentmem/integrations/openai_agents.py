"""agentmem for the OpenAI Agents SDK (the `openai-agents` extra): a `Session` kept in agentmem.

`AgentMemSession(client, user_id, thread_id)` is the SDK's session protocol (`get_items`, `add_items`,
`pop_item`, `clear_session`) on one of the user's threads: `Runner.run(agent, text, session=session)`.

- Items as given: every item `add_items` receives (messages with their structured content, tool calls
  and their outputs, reasoning items, whatever the SDK hands over) is stored whole, as one of the
  user's agentmem items in the namespace `("_sessions", thread_id)`, masked where it holds text (each
  string, personal data replaced by the user's tokens), and comes back from `get_items` as it was
  given, in the order given. The user and assistant messages' text is also appended to the thread's
  transcript, so recall, the profile and the facts learn from sessions as from any turns.
- One rule for reading: the session reads for its owner, the user. With `unmask=True` (the default)
  `get_items` and `pop_item` both return the items unmasked (the user's own words, as they were given:
  a masking false positive such as a name in "Golden Gate Bridge" never reaches the model or the
  user changed); with `unmask=False` both return them masked (tokens such as {{PII_EMAIL_3f9a1c2b_1}}).
  What is stored is masked either way.
- `limit` (or `session_settings`, a `SessionSettings` or a dict such as `{"limit": 10}`) keeps the newest
  items, as the SDK's sessions do (0: none; a negative limit: all). With `token_budget`, `get_items`
  returns the newest whole items that fit, oldest first: a message costs the tiktoken count of its text
  (measured by the service when it was stored), any other item the count of its JSON.
- `pop_item` deletes the newest item (and its transcript turn) and returns it; `clear_session` deletes
  the thread's items and its transcript (`DELETE /v1/users/{userId}/threads/{threadId}`). Both also
  take the turns out of recall; what the user's profile and facts already learnt from them stays.
- Limits: an item is at most 64,000 bytes of JSON (the items API's limit); a JSON number that is
  personal data comes back as a string.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Mapping
from typing import Any, Literal

import anyio.to_thread

from agentmem.client import MemoryClient, NotFound, StoredItem
from agentmem.tokens import get_token_counter

try:  # the protocol's base class; the session also works duck-typed without the SDK installed
    from agents.memory.session import SessionABC
    from agents.memory.session_settings import SessionSettings, coerce_session_settings
except ImportError:  # pragma: no cover - the extra is installed wherever this module is used
    SessionABC = object  # type: ignore[assignment,misc]
    SessionSettings = None  # type: ignore[assignment,misc]
    coerce_session_settings = None  # type: ignore[assignment]

SESSIONS_LABEL = "_sessions"
PAGE = 1000  # the items search's largest page
# Joins the strings of one unmask call: a control character no item text is expected to hold.
UNMASK_SEPARATOR = "\n\x1e\n"
MAX_UNMASK_CHARS = 90_000  # below the unmask route's 100,000


class AgentMemSession(SessionABC):
    def __init__(
        self,
        client: MemoryClient,
        user_id: str,
        thread_id: str,
        *,
        token_budget: int | None = None,
        session_settings: Any = None,
        unmask: bool = True,
    ) -> None:
        self.client = client
        self.user_id = user_id
        self.session_id = thread_id
        self.token_budget = token_budget
        self.unmask = unmask
        if coerce_session_settings is not None:
            # As the SDK's own sessions: a dict is checked and made a SessionSettings, none is the default.
            self.session_settings = coerce_session_settings(
                session_settings if session_settings is not None else SessionSettings()
            )
        else:  # pragma: no cover
            self.session_settings = session_settings
        self._owner: tuple[Literal["users"], str] = ("users", user_id)
        # A thread id may hold "." (ids do), a namespace label may not; "%" is in no id.
        self._namespace = (SESSIONS_LABEL, thread_id.replace(".", "%2E"))
        self._clock_lock = threading.Lock()
        self._last_key = 0

    # -- the protocol ---------------------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items as they were given, oldest first: the newest `limit`, or those fitting the budget."""
        if limit is None:
            limit = _limit_of(self.session_settings)
        return await anyio.to_thread.run_sync(self._get_items, limit)

    async def add_items(self, items: list[Any]) -> None:
        if items:
            await anyio.to_thread.run_sync(self._add_items, [_as_json(item) for item in items])

    async def pop_item(self) -> Any:
        """Delete the newest item and return it (unmasked for the user unless `unmask=False`); None if empty."""
        return await anyio.to_thread.run_sync(self._pop)

    async def clear_session(self) -> None:
        """Delete the session's items and the thread: its turns, their recall entries and idempotency records."""
        await anyio.to_thread.run_sync(self._clear)

    # -- storage --------------------------------------------------------------------------------------

    def _add_items(self, items: list[dict[str, Any]]) -> None:
        texts = [_message_text(item) for item in items]
        said = [(i, text) for i, text in enumerate(texts) if text is not None]
        turns = self.client.append_turns(
            self.user_id, self.session_id, [(str(items[i]["role"]), text) for i, text in said]
        ) if said else []
        turn_of = {i: turn for (i, _), turn in zip(said, turns, strict=True)}
        counter = get_token_counter()
        for i, item in enumerate(items):
            turn = turn_of.get(i)
            tokens = turn.tokens if turn is not None and turn.tokens is not None else counter.count(json.dumps(item))
            value = {"item": item, "turn": None if turn is None else turn.seq, "tokens": tokens}
            self.client.put_item(self._owner, self._namespace, self._next_key(), value, index=False)

    def _stored(self) -> list[StoredItem]:
        found: list[StoredItem] = []
        while True:
            page = self.client.search_items(
                self._owner, self._namespace, limit=PAGE, offset=len(found), refresh_ttl=False
            )
            found += page
            if len(page) < PAGE:
                break
        # Keys are the order items were added in (a listing is by update time, which one batch shares).
        return sorted(found, key=lambda stored: stored.key)

    def _get_items(self, limit: int | None) -> list[Any]:
        stored = self._stored()
        if limit is not None and limit >= 0:
            stored = stored[max(len(stored) - limit, 0) :] if limit > 0 else []
        if self.token_budget is not None:
            stored = _packed(stored, self.token_budget)
        return self._readable([entry.value["item"] for entry in stored])

    def _pop(self) -> Any:
        stored = self._stored()
        if not stored:
            return None
        newest = stored[-1]
        self.client.delete_item(self._owner, self._namespace, newest.key)
        seq = newest.value.get("turn")
        if isinstance(seq, int):
            # NotFound: the thread went meanwhile (cleared by another session).
            with contextlib.suppress(NotFound):
                self.client.delete_turns(self.user_id, self.session_id, seq)
        return self._readable([newest.value["item"]])[0]

    def _clear(self) -> None:
        for entry in self._stored():
            self.client.delete_item(self._owner, self._namespace, entry.key)
        self.client.delete_thread(self.user_id, self.session_id)

    def _next_key(self) -> str:
        """A key after every key this process made, in time order across processes (nanoseconds)."""
        with self._clock_lock:
            self._last_key = max(time.time_ns(), self._last_key + 1)
            return f"{self._last_key:020d}"

    # -- reading for the owner ------------------------------------------------------------------------

    def _readable(self, items: list[Any]) -> list[Any]:
        """The items as the owner reads them: unmasked (every token of the user restored), or as stored."""
        if not self.unmask:
            return items
        masked = sorted({s for item in items for s in _strings(item) if "{{" in s})
        plain = dict(zip(masked, self._unmask_all(masked), strict=True))
        return [_replace_strings(item, lambda s: plain.get(s, s)) for item in items]

    def _unmask_all(self, texts: list[str]) -> list[str]:
        """`texts` unmasked in as few calls as fit the route's limit (joined by a separator no text holds)."""
        out: list[str] = []
        batch: list[str] = []

        def flush() -> None:
            if not batch:
                return
            joined = self.client.unmask(self.user_id, self.session_id, UNMASK_SEPARATOR.join(batch))
            parts = joined.split(UNMASK_SEPARATOR)
            if len(parts) != len(batch):  # an original held the separator: one call each instead
                parts = [self.client.unmask(self.user_id, self.session_id, text) for text in batch]
            out.extend(parts)
            batch.clear()

        for text in texts:
            if batch and sum(map(len, batch)) + len(text) > MAX_UNMASK_CHARS:
                flush()
            batch.append(text)
        flush()
        return out


def _limit_of(settings: Any) -> int | None:
    if settings is None:
        return None
    limit = settings.get("limit") if isinstance(settings, Mapping) else getattr(settings, "limit", None)
    return None if limit is None else int(limit)


def _as_json(item: Any) -> dict[str, Any]:
    """The item as JSON, as the SDK would store it (its own sessions keep `json.dumps` of the item)."""
    if hasattr(item, "model_dump"):
        item = item.model_dump(exclude_unset=True, mode="json")
    value: dict[str, Any] = json.loads(json.dumps(item))
    return value


def _message_text(item: dict[str, Any]) -> str | None:
    """A user or assistant message's text, for the transcript; None for any other item."""
    if item.get("type", "message") != "message" or item.get("role") not in {"user", "assistant"}:
        return None
    content = item.get("content")
    if isinstance(content, str):
        text = content
    else:
        text = "".join(
            str(part.get("text", "")) for part in content or []
            if isinstance(part, dict) and part.get("type") in {"input_text", "output_text", "text", None}
        )
    return text if text.strip() else None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _replace_strings(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(k): _replace_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_strings(v, change) for v in value]
    return value


def _packed(stored: list[StoredItem], budget: int) -> list[StoredItem]:
    kept: list[StoredItem] = []
    used = 0
    for entry in reversed(stored):
        used += int(entry.value.get("tokens") or 0)
        if used > budget:
            break
        kept.append(entry)
    return kept[::-1]
