"""`MemoryClient`: the whole HTTP contract (API.md) from Python, against AWS or `agentmem serve`.

The API's operations are client/operations.py and one request's signing, retries and decoding
client/exchange.py, both without I/O and shared with `AsyncMemoryClient`; this client runs them
with blocking I/O (client/transport.py) and `time.sleep` between retries.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Callable, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

from agentmem.client import operations as ops
from agentmem.client.errors import ApiError
from agentmem.client.exchange import ApiCall, RequestPolicy, Send
from agentmem.client.models import Fact, Memory, RunSummary, ThreadSummary, Turn, UserSummary, VerdictFilter
from agentmem.client.signing import region_from_url
from agentmem.client.transport import ConnectFailed, ExchangeFailed, HttpTransport

P = ParamSpec("P")
T = TypeVar("T")


def blocking(op: Callable[P, ops.Op[T]]) -> Callable[Concatenate[MemoryClient, P], T]:
    """A client method that runs the operation `op` with blocking I/O (its signature and docstring kept)."""

    def method(self: MemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.run(op(*args, **kwargs))

    functools.update_wrapper(method, op)  # help() and inspect.signature show the operation's parameters
    method.__qualname__ = f"MemoryClient.{op.__name__}"
    return method


# CloudFormation's answers to credentials that are there but not valid (expired, unknown, mis-signed).
_CREDENTIAL_ERROR_CODES = frozenset({
    "ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId", "UnrecognizedClientException",
    "SignatureDoesNotMatch", "InvalidSignatureException", "AuthFailure",
})


class ClientOptions:
    """What both clients take: where the API is, how to authenticate, how often to retry."""

    policy: RequestPolicy

    @classmethod
    def _stack_url(cls, stack_name: str, region: str | None, profile: str | None) -> tuple[str, dict[str, Any]]:
        import boto3
        from botocore.exceptions import (
            ClientError,
            NoCredentialsError,
            NoRegionError,
            PartialCredentialsError,
            ProfileNotFound,
        )

        from agentmem.client.errors import MemoryClientError, MissingCredentials, MissingRegion

        try:
            session = boto3.Session(profile_name=profile, region_name=region)
            stacks = session.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"]
        except NoRegionError:
            raise MissingRegion(
                f"no AWS region to find stack {stack_name!r} in: give a region (region=, --region) or set "
                "AWS_DEFAULT_REGION"
            ) from None
        except (NoCredentialsError, PartialCredentialsError, ProfileNotFound) as exc:
            raise MissingCredentials(f"no AWS credentials to read stack {stack_name!r}: {exc}") from None
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in _CREDENTIAL_ERROR_CODES:
                raise MissingCredentials(f"AWS refused the credentials reading stack {stack_name!r}: {code}") from None
            raise MemoryClientError(f"cannot read stack {stack_name!r}: {exc}") from None
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
        url = outputs.get("ApiUrl")
        if url is None:
            # A CfnOutput declared inside a construct gets its path and a hash around the id.
            candidates = [v for k, v in outputs.items() if "ApiUrl" in k]
            if len(candidates) != 1:
                raise ValueError(f"stack {stack_name!r} has no ApiUrl output (outputs: {sorted(outputs)})")
            url = candidates[0]
        credentials = session.get_credentials()
        return url, {
            "region": region_from_url(url) or session.region_name,
            "credentials": credentials if credentials is not None else "auto",
        }

    @property
    def url(self) -> str:
        return self.policy.url

    @property
    def retries(self) -> int:
        return self.policy.retries


class MemoryClient(ClientOptions):
    """A client for agentmem's HTTP API.

    `url` is the API's base: `https://{id}.execute-api.{region}.amazonaws.com/{stage}` or the local
    server's `http://127.0.0.1:8765`. Requests to an `execute-api` host are signed with SigV4 using
    botocore's credentials chain; `credentials="auto"` signs for any host (a custom domain), and a
    botocore `Credentials` object signs with those. `token` sends `Authorization: Bearer` instead,
    for `agentmem serve` with `AGENTMEM_API_TOKEN` set.

    `timeout` is seconds, or `(connect, read)`. `retries` bounds how often a request is sent again
    after a throttle, a 502/503/504 or a connection failure (exponential backoff with full jitter);
    only requests that are safe to repeat are retried after an answer that may hide a completed write.
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
        sleep: Callable[[float], None] = time.sleep,
    ):
        # `sleep` is how the client waits before a retry (a test passes one that records the waits).
        self._sleep = sleep
        self.policy = RequestPolicy(url, region=region, credentials=credentials, token=token, retries=retries,
                                    backoff=backoff, max_backoff=max_backoff, session=session)
        connect_timeout, read_timeout = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        # `transport` replaces HTTP (the CLI talks to a local data folder in-process this way).
        self._transport = transport or HttpTransport(connect_timeout, read_timeout, ssl_context)

    @classmethod
    def for_stack(
        cls, stack_name: str, region: str | None = None, *, profile: str | None = None, **kwargs: Any
    ) -> MemoryClient:
        """A client for a deployed tenant stack: the URL is the stack's `ApiUrl` output; requests are
        signed with the caller's AWS credentials (the same ones that read the stack)."""
        url, auth = cls._stack_url(stack_name, region, profile)
        return cls(url, **auth, **kwargs)

    # -- running operations ------------------------------------------------------------------------

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def run(self, op: ops.Op[T]) -> T:
        """Run an operation of client/operations.py: each call it yields is sent, its answer sent back."""
        try:
            call = next(op)
            while True:
                try:
                    answer = self._send(call)
                except ApiError as exc:
                    call = op.throw(exc)
                else:
                    call = op.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result

    def _send(self, call: ApiCall) -> Any:
        steps = self.policy.exchange(call)
        try:
            step = next(steps)
            while True:
                if not isinstance(step, Send):
                    self._sleep(step.seconds)
                    step = steps.send(None)
                    continue
                try:
                    answer = self._transport.send(step.method, step.url, step.headers, step.body)
                except (ConnectFailed, ExchangeFailed) as exc:
                    step = steps.throw(exc)
                else:
                    step = steps.send(answer)
        except StopIteration as done:
            return done.value

    request = blocking(ops.request)

    # -- feedback-learning memory (agents) ---------------------------------------------------------

    retrieve = blocking(ops.retrieve)
    record_run = blocking(ops.record_run)
    set_output = blocking(ops.set_output)
    get_run = blocking(ops.get_run)
    feedback = blocking(ops.feedback)
    list_runs = blocking(ops.list_runs)
    list_memories = blocking(ops.list_memories)
    set_importance = blocking(ops.set_importance)
    delete_memory = blocking(ops.delete_memory)
    erase_agent_personal_data = blocking(ops.erase_agent_personal_data)

    def iter_runs(
        self, agent_id: str, *, feedback: VerdictFilter = "any", page_size: int = 100
    ) -> Iterator[RunSummary]:
        """Every run of the agent under the `feedback` filter, newest first, fetching pages as it goes."""
        return self._pages(ops.list_runs, agent_id, feedback=feedback, limit=page_size)

    def iter_memories(self, agent_id: str, *, page_size: int = 100) -> Iterator[Memory]:
        """Every lesson of the agent, newest first, fetching pages as it goes."""
        return self._pages(ops.list_memories, agent_id, limit=page_size)

    # -- conversations and users -------------------------------------------------------------------

    append_turns = blocking(ops.append_turns)
    list_turns = blocking(ops.list_turns)
    delete_turns = blocking(ops.delete_turns)
    delete_thread = blocking(ops.delete_thread)
    unmask = blocking(ops.unmask)
    list_users = blocking(ops.list_users)
    list_threads = blocking(ops.list_threads)
    search_user = blocking(ops.search_user)
    get_profile = blocking(ops.get_profile)
    put_profile = blocking(ops.put_profile)
    profile_versions = blocking(ops.profile_versions)
    restore_profile = blocking(ops.restore_profile)
    list_facts = blocking(ops.list_facts)
    update_fact = blocking(ops.update_fact)
    delete_fact = blocking(ops.delete_fact)
    erase_user = blocking(ops.erase_user)

    def iter_turns(self, user_id: str, thread_id: str, *, page_size: int = 100) -> Iterator[Turn]:
        """Every turn of the thread, oldest first, fetching pages as it goes."""
        return self._pages(ops.list_turns, user_id, thread_id, limit=page_size)

    def iter_users(self, *, prefix: str | None = None, page_size: int = 100) -> Iterator[UserSummary]:
        """Every user of the tenant (whose id starts with `prefix`), by id, fetching pages as it goes."""
        return self._pages(ops.list_users, prefix=prefix, limit=page_size)

    def iter_threads(self, user_id: str, *, page_size: int = 100) -> Iterator[ThreadSummary]:
        """Every thread of the user, newest activity first, fetching pages as it goes."""
        return self._pages(ops.list_threads, user_id, limit=page_size)

    # -- items (key-addressed values of a user or an agent; LangGraph's store) ------------------------

    put_item = blocking(ops.put_item)
    get_item = blocking(ops.get_item)
    delete_item = blocking(ops.delete_item)
    search_items = blocking(ops.search_items)
    item_namespaces = blocking(ops.item_namespaces)

    # -- service -----------------------------------------------------------------------------------

    health = blocking(ops.health)
    openapi = blocking(ops.openapi)

    def _pages(self, list_page: ops.PageOp, *args: Any, **kwargs: Any) -> Iterator[Any]:
        cursor: str | None = None
        while True:
            page = self.run(list_page(*args, cursor=cursor, **kwargs))
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor


__all__ = ["ApiError", "Fact", "HttpTransport", "MemoryClient"]
