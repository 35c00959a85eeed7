"""AsyncMemoryClient over real sockets, and the user memory calls through both clients.

The async client runs the same operations and request policy as MemoryClient, so the retry and
signing tests here check that its I/O feeds that policy what happened (a refused connection, a
503, a 502 after a POST); the user memory scenario runs once through each client against the
local server (`agentmem serve`'s HTTP server on a loopback port).
"""

from __future__ import annotations

import asyncio
import inspect
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.client import AsyncMemoryClient, MemoryClient, NotFound, ServerError, TransportError, ValidationError
from agentmem.local.server import create_app, make_http_server
from botocore.credentials import Credentials

from tests.integration.test_client_local import HEALTH, Answer, Received, ScriptedServer, error_body

TOKEN = "local-test-token"
USER = "user-7"


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def start(script: list[Answer] | Callable[[Received], Answer]) -> ScriptedServer:
        servers.append(ScriptedServer(script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def fast_async(url: str, **kwargs: Any) -> AsyncMemoryClient:
    return AsyncMemoryClient(url, backoff=0.01, max_backoff=0.05, **kwargs)


async def closing(client: AsyncMemoryClient, call: Callable[[AsyncMemoryClient], Awaitable[Any]]) -> Any:
    async with client:
        return await call(client)


# -- the request policy, fed by httpx ---------------------------------------------------------------


def test_async_503_twice_then_200_is_retried_until_it_succeeds(scripted):
    server = scripted([Answer(503, error_body("backend_unavailable")), Answer(503), Answer(200, HEALTH)])

    health = asyncio.run(closing(fast_async(server.url, retries=3), lambda c: c.health()))

    assert health.status == "ok" and len(server.requests) == 3


def test_async_a_post_that_may_have_written_is_not_repeated_after_a_502(scripted):
    server = scripted(lambda _: Answer(502, error_body("bad_gateway")))

    with pytest.raises(ServerError):
        asyncio.run(closing(fast_async(server.url, retries=3), lambda c: c.record_run("auditor", "in", "out")))

    assert len(server.requests) == 1


def test_async_feedback_is_retried_with_one_generated_idempotency_key(scripted):
    receipt = {"feedbackId": "fb", "memoryId": "m", "status": "accepted"}
    server = scripted([Answer(503), Answer(202, receipt)])

    answer = asyncio.run(closing(fast_async(server.url), lambda c: c.feedback("auditor", "run-1", "up")))

    keys = [r.headers["idempotency-key"] for r in server.requests]
    assert answer.idempotency_key == keys[0] == keys[1] and keys[0].startswith("fb-")


def test_async_a_refused_connection_is_retried_then_reported():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(TransportError, match="could not connect"):
        asyncio.run(closing(fast_async(f"http://127.0.0.1:{port}", retries=2), lambda c: c.health()))


def test_async_errors_are_the_same_typed_exceptions(scripted):
    details = [{"field": "query", "message": "String should have at least 1 character"}]
    server = scripted([Answer(400, error_body("validation_error", "1 invalid field(s)", details)),
                       Answer(404, error_body("not_found", "fact f1 of user u1 not found"))])

    with pytest.raises(ValidationError) as invalid:
        asyncio.run(closing(fast_async(server.url), lambda c: c.search_user("u1", "")))
    with pytest.raises(NotFound, match="fact f1"):
        asyncio.run(closing(fast_async(server.url), lambda c: c.update_fact("u1", "f1", "x")))

    assert invalid.value.details == details


def test_both_clients_sign_the_same_request_the_same_way(scripted):
    server = scripted(lambda _: Answer(200, {"items": [], "nextCursor": None}))
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")

    MemoryClient(server.url, credentials=credentials, region="eu-west-1").list_users(limit=5, prefix="u-")
    asyncio.run(closing(AsyncMemoryClient(server.url, credentials=credentials, region="eu-west-1"),
                        lambda c: c.list_users(limit=5, prefix="u-")))

    blocking, awaited = server.requests
    for sent in (blocking, awaited):
        assert sent.headers["authorization"].startswith(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") and "/eu-west-1/execute-api/aws4_request" in (
            sent.headers["authorization"])
    assert (blocking.path, blocking.query) == (awaited.path, awaited.query) == ("/v1/users",
                                                                               {"limit": ["5"], "prefix": ["u-"]})
    signed = [s.headers["authorization"].split("SignedHeaders=")[1].split(",")[0] for s in (blocking, awaited)]
    assert signed[0] == signed[1]


def test_the_async_client_has_every_method_of_the_blocking_one_with_the_same_parameters():
    public = {name for name in dir(MemoryClient) if not name.startswith("_") and callable(getattr(MemoryClient, name))}

    for name in public - {"close", "for_stack", "run"}:
        blocking, awaited = getattr(MemoryClient, name), getattr(AsyncMemoryClient, name)
        assert inspect.signature(blocking).parameters.keys() == inspect.signature(awaited).parameters.keys(), name


# -- user memory through both clients, against the local server ----------------------------------------


@pytest.fixture
def served_url(tmp_path: Path, minilm) -> Iterator[tuple[str, Any]]:
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, enabled_agents=["auditor"],
                     api_token=TOKEN)
    server = make_http_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", app
    finally:
        server.shutdown()
        server.server_close()
        app.close()


Call = Callable[..., Awaitable[Any]]


async def user_memory_scenario(call: Call, deliver: Callable[[], Any]) -> None:
    """The new calls, in the order a user of them would make them (the same for both clients)."""
    await call("append_turns", USER, "t1", [("user", "I know Python and I love hiking in the Alps.")])
    await call("append_turns", USER, "t2", [("user", "My favourite food is ramen.")])
    await call("append_turns", "other-user", "t1", [("user", "hello")])
    deliver()

    users = await call("list_users", limit=1)
    everyone = await call("collect", "iter_users", page_size=1)
    threads = await call("list_threads", USER)
    assert [u.user_id for u in users.items] == ["other-user"] and users.next_cursor
    assert [u.user_id for u in everyone] == ["other-user", USER]
    assert [t.thread_id for t in threads.items] == ["t2", "t1"] and threads.items[0].turn_count == 1

    found = await call("search_user", USER, "what food does the user like", limit=2, kinds=["turns"])
    assert found.turns[0].content == "My favourite food is ramen." and found.facts == [] and found.degraded == []

    facts = await call("list_facts", USER)
    python = next(f for f in facts if "Python" in f.text)
    updated = await call("update_fact", USER, python.fact_id, "User knows Rust")
    assert updated.fact_id == python.fact_id and updated.text == "User knows Rust"
    assert (await call("search_user", USER, "Rust programming", kinds=["facts"], limit=1)).facts[0].text == (
        "User knows Rust")

    await call("erase_user", USER)
    assert [u.user_id for u in (await call("list_users")).items] == ["other-user"]


def test_user_memory_through_the_blocking_client(served_url):
    url, app = served_url
    client = MemoryClient(url, token=TOKEN, retries=0)

    async def call(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "collect":
            return list(getattr(client, args[0])(**kwargs))
        return getattr(client, name)(*args, **kwargs)

    try:
        asyncio.run(user_memory_scenario(call, app.worker.drain))
    finally:
        client.close()


def test_user_memory_through_the_async_client(served_url):
    url, app = served_url

    async def scenario() -> None:
        async with AsyncMemoryClient(url, token=TOKEN, retries=0) as client:

            async def call(name: str, *args: Any, **kwargs: Any) -> Any:
                if name == "collect":
                    return [item async for item in getattr(client, args[0])(**kwargs)]
                return await getattr(client, name)(*args, **kwargs)

            await user_memory_scenario(call, app.worker.drain)

    asyncio.run(scenario())
