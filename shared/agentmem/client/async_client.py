"""`AsyncMemoryClient`: `MemoryClient`'s methods as coroutines, on httpx.

Both clients run the same operations (client/operations.py) through the same request policy
(client/exchange.py: signing, retries, errors); only the I/O differs: here `httpx.AsyncClient`
(kept-alive connections per origin) and `asyncio.sleep` between retries. SigV4 signing is the
same botocore call; its first use resolves the credentials chain, which may read files once.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from agentmem.client import operations as ops
from agentmem.client.client import ClientOptions
from agentmem.client.errors import ApiError
from agentmem.client.exchange import ApiCall, RequestPolicy, Send
from agentmem.client.models import Memory, RunSummary, ThreadSummary, Turn, UserSummary, VerdictFilter
from agentmem.client.transport import ConnectFailed, ExchangeFailed

P = ParamSpec("P")
T = TypeVar("T")


def awaiting(op: Callable[P, ops.Op[T]]) -> Callable[Concatenate[AsyncMemoryClient, P], Coroutine[Any, Any, T]]:
    """A client coroutine method that runs the operation `op` with httpx (its signature and docstring kept)."""

    async def method(self: AsyncMemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.run(op(*args, **kwargs))

    functools.update_wrapper(method, op)
    method.__qualname__ = f"AsyncMemoryClient.{op.__name__}"
    return method


class HttpxTransport:
    """Sends one request with `httpx.AsyncClient`; failures sorted as the retry policy needs them."""

    def __init__(
        self, connect_timeout: float, read_timeout: float, ssl_context: ssl.SSLContext | None = None,
        client: httpx.AsyncClient | None = None,
    ):
        self._client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout), verify=ssl_context or True,
        )

    async def send(
        self, method: str, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        try:
            response = await self._client.request(method, url, headers=headers, content=body or None)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as exc:
            raise ConnectFailed(f"{type(exc).__name__}: {exc}") from exc
        except httpx.TransportError as exc:  # read/write timeouts, dropped connections: maybe sent
            raise ExchangeFailed(f"{type(exc).__name__}: {exc}") from exc
        return response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.content

    async def close(self) -> None:
        await self._client.aclose()


class AsyncMemoryClient(ClientOptions):
    """`MemoryClient` for asyncio: the same constructor, the same methods, each a coroutine.

    `async with AsyncMemoryClient(url) as memory: result = await memory.retrieve(agent_id, input)`.
    The `iter_*` methods are async iterators (`async for run in memory.iter_runs(agent_id)`).
    `transport` may be any object with `async send(method, url, headers, body)` and `async close()`.
    """

    def __init__(
        self,
        url: str,
        *,
        region: str | None = None,
        credentials: Any = None,
        token: str | None = None,
        timeout: float | tuple[float, float] = 10,
        retries: int = 3,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        ssl_context: ssl.SSLContext | None = None,
        session: Any = None,
        transport: Any = None,
    ):
        self.policy = RequestPolicy(url, region=region, credentials=credentials, token=token, retries=retries,
                                    backoff=backoff, max_backoff=max_backoff, session=session)
        connect_timeout, read_timeout = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        self._transport = transport or HttpxTransport(connect_timeout, read_timeout, ssl_context)

    @classmethod
    def for_stack(
        cls, stack_name: str, region: str | None = None, *, profile: str | None = None, **kwargs: Any
    ) -> AsyncMemoryClient:
        """A client for a deployed tenant stack (its `ApiUrl` output), signing with the caller's credentials."""
        url, auth = cls._stack_url(stack_name, region, profile)
        return cls(url, **auth, **kwargs)

    # -- running operations ------------------------------------------------------------------------

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def run(self, op: ops.Op[T]) -> T:
        """Run an operation of client/operations.py: each call it yields is sent, its answer sent back."""
        try:
            call = next(op)
            while True:
                try:
                    answer = await self._send(call)
                except ApiError as exc:
                    call = op.throw(exc)
                else:
                    call = op.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result

    async def _send(self, call: ApiCall) -> Any:
        steps = self.policy.exchange(call)
        try:
            step = next(steps)
            while True:
                if not isinstance(step, Send):
                    await asyncio.sleep(step.seconds)
                    step = steps.send(None)
                    continue
                try:
                    answer = await self._transport.send(step.method, step.url, step.headers, step.body)
                except (ConnectFailed, ExchangeFailed) as exc:
                    step = steps.throw(exc)
                else:
                    step = steps.send(answer)
        except StopIteration as done:
            return done.value

    request = awaiting(ops.request)

    # -- feedback-learning memory (agents) ---------------------------------------------------------

    retrieve = awaiting(ops.retrieve)
    record_run = awaiting(ops.record_run)
    set_output = awaiting(ops.set_output)
    get_run = awaiting(ops.get_run)
    feedback = awaiting(ops.feedback)
    list_runs = awaiting(ops.list_runs)
    list_memories = awaiting(ops.list_memories)
    set_importance = awaiting(ops.set_importance)
    delete_memory = awaiting(ops.delete_memory)
    erase_agent_personal_data = awaiting(ops.erase_agent_personal_data)

    def iter_runs(
        self, agent_id: str, *, feedback: VerdictFilter = "any", page_size: int = 100
    ) -> AsyncIterator[RunSummary]:
        """Every run of the agent under the `feedback` filter, newest first, fetching pages as it goes."""
        return self._pages(ops.list_runs, agent_id, feedback=feedback, limit=page_size)

    def iter_memories(self, agent_id: str, *, page_size: int = 100) -> AsyncIterator[Memory]:
        """Every lesson of the agent, newest first, fetching pages as it goes."""
        return self._pages(ops.list_memories, agent_id, limit=page_size)

    # -- conversations and users -------------------------------------------------------------------

    append_turns = awaiting(ops.append_turns)
    list_turns = awaiting(ops.list_turns)
    delete_turns = awaiting(ops.delete_turns)
    delete_thread = awaiting(ops.delete_thread)
    unmask = awaiting(ops.unmask)
    list_users = awaiting(ops.list_users)
    list_threads = awaiting(ops.list_threads)
    search_user = awaiting(ops.search_user)
    get_profile = awaiting(ops.get_profile)
    put_profile = awaiting(ops.put_profile)
    profile_versions = awaiting(ops.profile_versions)
    restore_profile = awaiting(ops.restore_profile)
    list_facts = awaiting(ops.list_facts)
    update_fact = awaiting(ops.update_fact)
    delete_fact = awaiting(ops.delete_fact)
    erase_user = awaiting(ops.erase_user)

    def iter_turns(self, user_id: str, thread_id: str, *, page_size: int = 100) -> AsyncIterator[Turn]:
        """Every turn of the thread, oldest first, fetching pages as it goes."""
        return self._pages(ops.list_turns, user_id, thread_id, limit=page_size)

    def iter_users(self, *, prefix: str | None = None, page_size: int = 100) -> AsyncIterator[UserSummary]:
        """Every user of the tenant (whose id starts with `prefix`), by id, fetching pages as it goes."""
        return self._pages(ops.list_users, prefix=prefix, limit=page_size)

    def iter_threads(self, user_id: str, *, page_size: int = 100) -> AsyncIterator[ThreadSummary]:
        """Every thread of the user, newest activity first, fetching pages as it goes."""
        return self._pages(ops.list_threads, user_id, limit=page_size)

    # -- items (key-addressed values of a user or an agent; LangGraph's store) ------------------------

    put_item = awaiting(ops.put_item)
    get_item = awaiting(ops.get_item)
    delete_item = awaiting(ops.delete_item)
    search_items = awaiting(ops.search_items)
    item_namespaces = awaiting(ops.item_namespaces)

    # -- service -----------------------------------------------------------------------------------

    health = awaiting(ops.health)
    openapi = awaiting(ops.openapi)

    async def _pages(self, list_page: ops.PageOp, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        cursor: str | None = None
        while True:
            page = await self.run(list_page(*args, cursor=cursor, **kwargs))
            for item in page.items:
                yield item
            if not page.next_cursor:
                return
            cursor = page.next_cursor
