"""`MemoryClient`: the whole HTTP contract (API.md) from Python, against AWS or `agentmem serve`.

The API's operations live here; sending a request is client/transport.py, and when to send
it again is client/retries.py.
"""

from __future__ import annotations

import json
import logging
import ssl
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit

import pydantic

from agentmem import __version__
from agentmem.client.errors import (
    ApiError,
    NotFound,
    TransportError,
    UnexpectedResponse,
    error_from_response,
)
from agentmem.client.models import (
    Fact,
    FeedbackReceipt,
    Health,
    Importance,
    ItemOwnerKind,
    Memory,
    MemoryPage,
    Profile,
    ProfileVersion,
    Rating,
    RetrieveResult,
    Run,
    RunPage,
    RunSummary,
    StoredItem,
    Turn,
    TurnPage,
    VerdictFilter,
    items_of,
)
from agentmem.client.retries import retry_delay, safe_to_repeat, should_retry
from agentmem.client.signing import SigV4Signer, host_header, is_execute_api_url, region_from_url
from agentmem.client.transport import ConnectFailed, ExchangeFailed, HttpTransport

log = logging.getLogger(__name__)
_Model = TypeVar("_Model", bound=pydantic.BaseModel)

def _segment(value: str | int) -> str:
    # Every path segment percent-encoded (`@` is %40, `:` is %3A); the server matches ids after decoding.
    return quote(str(value), safe="")


class MemoryClient:
    """A client for agentmem's HTTP API.

    `url` is the API's base: `https://{id}.execute-api.{region}.amazonaws.com/{stage}` or the local
    server's `http://127.0.0.1:8765`. Requests to an `execute-api` host are signed with SigV4 using
    botocore's credentials chain; `credentials="auto"` signs for any host (a custom domain), and a
    botocore `Credentials` object signs with those. `token` sends `Authorization: Bearer` instead,
    for `agentmem serve` with `AGENTMEM_API_TOKEN` set.

    `timeout` is seconds, or `(connect, read)`. `retries` bounds how often a request is sent again
    after a throttle, a 502/503/504 or a connection failure (exponential backoff with full jitter);
    only requests that are safe to repeat are retried after an answer that may hide a completed write.
    `sleep` is how the client waits before a retry (a test passes one that records the waits).
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
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        if retries < 0:
            raise ValueError("retries must be >= 0")
        base = url.rstrip("/")
        # The contract's paths start with /v1, so a base pasted with it is accepted too.
        self.url = base[: -len("/v1")] if base.endswith("/v1") else base
        connect_timeout, read_timeout = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        # `transport` replaces HTTP (the CLI talks to a local data folder in-process this way).
        self._transport = transport or HttpTransport(connect_timeout, read_timeout, ssl_context)
        self._token = token
        self._signer: SigV4Signer | None = None
        sign = credentials is not None or is_execute_api_url(url)
        if sign and token:
            raise ValueError("pass either token (local server) or credentials (SigV4), not both")
        if sign:
            explicit = None if credentials in (None, "auto") else credentials
            self._signer = SigV4Signer(region or region_from_url(url), explicit, session=session)
        self._user_agent = f"agentmem-client/{__version__}"

    @classmethod
    def for_stack(
        cls, stack_name: str, region: str | None = None, *, profile: str | None = None, **kwargs: Any
    ) -> MemoryClient:
        """A client for a deployed tenant stack: the URL is the stack's `ApiUrl` output; requests are
        signed with the caller's AWS credentials (the same ones that read the stack)."""
        import boto3

        session = boto3.Session(profile_name=profile, region_name=region)
        stacks = session.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
        url = outputs.get("ApiUrl")
        if url is None:
            # A CfnOutput declared inside a construct gets its path and a hash around the id.
            candidates = [v for k, v in outputs.items() if "ApiUrl" in k]
            if len(candidates) != 1:
                raise ValueError(f"stack {stack_name!r} has no ApiUrl output (outputs: {sorted(outputs)})")
            url = candidates[0]
        credentials = session.get_credentials()
        return cls(
            url,
            region=region_from_url(url) or session.region_name,
            credentials=credentials if credentials is not None else "auto",
            **kwargs,
        )

    # -- transport -------------------------------------------------------------------------------

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        retry_safe: bool | None = None,
    ) -> Any:
        """Send a request to `path` (starting with /v1) and return the decoded JSON answer (None for 204).

        Raises the `ApiError` subclass of the error code, or `TransportError` when no answer came.
        `retry_safe` says whether sending the request twice does no harm; by default idempotent
        methods and requests with an `Idempotency-Key` are.
        """
        method = method.upper()
        body = b"" if json_body is None else json.dumps(json_body, ensure_ascii=False).encode("utf-8")
        params = {k: v for k, v in (query or {}).items() if v is not None}
        # Encoded the way SigV4 canonicalises a query (RFC 3986 unreserved characters kept), so the URL
        # sent is the URL signed.
        url = self.url + path + (f"?{urlencode(params, quote_via=quote)}" if params else "")
        extra = dict(headers or {})
        if retry_safe is None:
            retry_safe = safe_to_repeat(method, extra)
        attempt = 0
        while True:
            sent = self._headers(method, url, extra, body)
            try:
                status, answer_headers, data = self._transport.send(method, url, sent, body)
            except ConnectFailed as exc:
                if attempt < self.retries:
                    attempt = self._pause(attempt, method, path, str(exc))
                    continue
                raise TransportError(f"{method} {path}: could not connect to {self.url}: {exc}") from exc
            except ExchangeFailed as exc:
                if retry_safe and attempt < self.retries:
                    attempt = self._pause(attempt, method, path, str(exc))
                    continue
                raise TransportError(f"{method} {path}: no answer from {self.url}: {exc}") from exc
            if should_retry(status, answer_headers, retry_safe) and attempt < self.retries:
                attempt = self._pause(attempt, method, path, f"HTTP {status}", answer_headers.get("retry-after"))
                continue
            request_id = answer_headers.get("x-amzn-requestid") or answer_headers.get("x-amz-apigw-id")
            if status >= 400:
                raise error_from_response(status, data, request_id)
            if status == 204 or not data:
                return None
            try:
                return json.loads(data)
            except ValueError as exc:
                raise UnexpectedResponse(f"{method} {path}: HTTP {status} with a body that is not JSON") from exc

    def _headers(self, method: str, url: str, extra: Mapping[str, str], body: bytes) -> dict[str, str]:
        headers = {"Host": host_header(url), "Accept": "application/json", "User-Agent": self._user_agent}
        if body:
            headers["Content-Type"] = "application/json"
        headers.update(extra)
        if self._signer is not None:
            # Signed afresh on every attempt: X-Amz-Date must be recent, and refreshed credentials are used.
            return self._signer.sign(method, url, headers, body)
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def _pause(self, attempt: int, method: str, path: str, why: str, retry_after: str | None = None) -> int:
        delay = retry_delay(attempt, self.backoff, self.max_backoff, retry_after)
        log.info("%s %s: %s; retry %d of %d in %.2fs", method, path, why, attempt + 1, self.retries, delay)
        self._sleep(delay)
        return attempt + 1

    # -- feedback-learning memory (agents) ---------------------------------------------------------

    def retrieve(
        self,
        agent_id: str,
        input: str,
        *,
        user_id: str | None = None,
        thread_id: str | None = None,
        token_budget: int | None = None,
        top_k: int | None = None,
        recall_k: int | None = None,
    ) -> RetrieveResult:
        """Memory for the run `agent_id` is about to make; the run is recorded and its id returned."""
        body = _without_none(
            {
                "input": input, "userId": user_id, "threadId": thread_id, "tokenBudget": token_budget,
                "topK": top_k, "recallK": recall_k,
            }
        )
        # Safe to repeat: a lost answer only leaves a run that never gets an output.
        answer = self.request("POST", f"/v1/agents/{_segment(agent_id)}/retrieve", json_body=body, retry_safe=True)
        return _parse(RetrieveResult, answer)

    def record_run(self, agent_id: str, input: str, output: str, *, user_id: str | None = None) -> str:
        """Record a run made without `retrieve`; its run id."""
        body = _without_none({"input": input, "output": output, "userId": user_id})
        answer = self.request("POST", f"/v1/agents/{_segment(agent_id)}/runs", json_body=body)
        return _field(answer, "runId")

    def set_output(self, agent_id: str, run_id: str, output: str) -> None:
        self.request(
            "PUT", f"/v1/agents/{_segment(agent_id)}/runs/{_segment(run_id)}/output", json_body={"output": output}
        )

    def get_run(self, agent_id: str, run_id: str) -> Run:
        return _parse(Run, self.request("GET", f"/v1/agents/{_segment(agent_id)}/runs/{_segment(run_id)}"))

    def feedback(
        self,
        agent_id: str,
        run_id: str,
        rating: Rating,
        comment: str | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> FeedbackReceipt:
        """An editor's verdict on a run. A key is generated when none is given, so retries make one memory."""
        key = idempotency_key or f"fb-{uuid.uuid4().hex}"
        answer = self.request(
            "POST",
            f"/v1/agents/{_segment(agent_id)}/runs/{_segment(run_id)}/feedback",
            json_body=_without_none({"rating": rating, "comment": comment}),
            headers={"Idempotency-Key": key},
        )
        receipt = _parse(FeedbackReceipt, answer)
        receipt.idempotency_key = key
        return receipt

    def list_runs(
        self,
        agent_id: str,
        *,
        feedback: VerdictFilter = "any",
        limit: int | None = None,
        cursor: str | None = None,
    ) -> RunPage:
        """One page of the agent's runs, newest first; `feedback="none"` is the queue awaiting a verdict."""
        answer = self.request(
            "GET",
            f"/v1/agents/{_segment(agent_id)}/runs",
            query={"feedback": feedback, "limit": limit, "cursor": cursor},
        )
        return _parse(RunPage, answer)

    def iter_runs(
        self, agent_id: str, *, feedback: VerdictFilter = "any", page_size: int = 100
    ) -> Iterator[RunSummary]:
        """Every run of the agent under the `feedback` filter, newest first, fetching pages as it goes."""
        cursor: str | None = None
        while True:
            page = self.list_runs(agent_id, feedback=feedback, limit=page_size, cursor=cursor)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def list_memories(self, agent_id: str, *, limit: int | None = None, cursor: str | None = None) -> MemoryPage:
        """One page of the agent's lessons, newest first."""
        answer = self.request(
            "GET", f"/v1/agents/{_segment(agent_id)}/memories", query={"limit": limit, "cursor": cursor}
        )
        return _parse(MemoryPage, answer)

    def iter_memories(self, agent_id: str, *, page_size: int = 100) -> Iterator[Memory]:
        """Every lesson of the agent, newest first, fetching pages as it goes."""
        cursor: str | None = None
        while True:
            page = self.list_memories(agent_id, limit=page_size, cursor=cursor)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def set_importance(self, agent_id: str, memory_id: str, importance: Importance) -> Memory:
        """Mark a lesson important (x1.5), unimportant (x0.3), neutral (x1.0), or give a multiplier in [0, 2]."""
        answer = self.request(
            "PATCH",
            f"/v1/agents/{_segment(agent_id)}/memories/{_segment(memory_id)}",
            json_body={"importance": importance},
        )
        return _parse(Memory, answer)

    def delete_memory(self, agent_id: str, memory_id: str) -> None:
        self.request("DELETE", f"/v1/agents/{_segment(agent_id)}/memories/{_segment(memory_id)}")

    # -- conversations and users -------------------------------------------------------------------

    def append_turns(
        self, user_id: str, thread_id: str, turns: Sequence[Mapping[str, str] | tuple[str, str]]
    ) -> list[Turn]:
        """Append turns (`{"role", "content"}` or `(role, content)`); the stored, masked turns."""
        body = {"turns": [_turn_json(t) for t in turns]}
        answer = self.request("POST", f"{_thread_path(user_id, thread_id)}/turns", json_body=body)
        return [_parse(Turn, t) for t in _items(answer, "turns")]

    def list_turns(
        self, user_id: str, thread_id: str, *, limit: int | None = None, cursor: str | None = None
    ) -> TurnPage:
        """One page of a thread's masked turns, oldest first."""
        answer = self.request(
            "GET", f"{_thread_path(user_id, thread_id)}/turns", query={"limit": limit, "cursor": cursor}
        )
        return _parse(TurnPage, answer)

    def iter_turns(self, user_id: str, thread_id: str, *, page_size: int = 100) -> Iterator[Turn]:
        cursor: str | None = None
        while True:
            page = self.list_turns(user_id, thread_id, limit=page_size, cursor=cursor)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def delete_turns(self, user_id: str, thread_id: str, from_seq: int) -> list[Turn]:
        """Delete the thread's turns with `seq >= from_seq`; the turns deleted (masked), oldest first."""
        answer = self.request("DELETE", f"{_thread_path(user_id, thread_id)}/turns", query={"fromSeq": from_seq})
        return [_parse(Turn, t) for t in _items(answer, "turns")]

    def delete_thread(self, user_id: str, thread_id: str) -> None:
        """Delete the whole thread: its turns, their recall entries and idempotency records."""
        self.request("DELETE", _thread_path(user_id, thread_id))

    def unmask(self, user_id: str, thread_id: str, text: str) -> str:
        """`text` with every PII token of this user restored."""
        answer = self.request(
            "POST", f"{_thread_path(user_id, thread_id)}/unmask", json_body={"text": text}, retry_safe=True
        )
        return _field(answer, "text")

    def get_profile(self, user_id: str) -> Profile:
        return _parse(Profile, self.request("GET", f"/v1/users/{_segment(user_id)}/profile"))

    def put_profile(self, user_id: str, markdown: str, *, if_match: int | str) -> Profile:
        """The user's own edit of their profile, made only if the current version is `if_match` (else Conflict)."""
        answer = self.request(
            "PUT",
            f"/v1/users/{_segment(user_id)}/profile",
            json_body={"markdown": markdown},
            headers={"If-Match": str(if_match)},
            # A repeat after a lost answer would meet the new version and report a false conflict.
            retry_safe=False,
        )
        return _parse(Profile, answer) if answer is not None else self.get_profile(user_id)

    def profile_versions(self, user_id: str) -> list[ProfileVersion]:
        """Every version of the user's profile, as the server orders them (newest first)."""
        return [
            _parse(ProfileVersion, v)
            for v in self._collect(f"/v1/users/{_segment(user_id)}/profile/versions", "versions")
        ]

    def restore_profile(self, user_id: str, version: int, *, if_match: int | str | None = None) -> Profile:
        """Make an earlier version current again, as a new version (only over `if_match` when given)."""
        answer = self.request(
            "POST",
            f"/v1/users/{_segment(user_id)}/profile/versions/{_segment(version)}/restore",
            headers={"If-Match": str(if_match)} if if_match is not None else None,
        )
        return _parse(Profile, answer) if answer is not None else self.get_profile(user_id)

    def list_facts(self, user_id: str, *, include_superseded: bool = False) -> list[Fact]:
        """The user's facts, newest first; superseded ones too when asked (with their validity period)."""
        query = {"includeSuperseded": "true"} if include_superseded else {}
        path = f"/v1/users/{_segment(user_id)}/facts"
        return [_parse(Fact, f) for f in self._collect(path, "facts", query)]

    def delete_fact(self, user_id: str, fact_id: str) -> None:
        self.request("DELETE", f"/v1/users/{_segment(user_id)}/facts/{_segment(fact_id)}")

    def erase_user(self, user_id: str) -> None:
        """Erase the user: transcripts, profile, facts, runs and vault; their data keys are destroyed."""
        self.request("DELETE", f"/v1/users/{_segment(user_id)}")

    def erase_agent_personal_data(self, agent_id: str) -> None:
        """Destroy the vault of the agent's runs made without a userId: their tokens stay tokens for good."""
        self.request("DELETE", f"/v1/agents/{_segment(agent_id)}/personal-data")

    # -- items (key-addressed values of a user or an agent; LangGraph's store) ------------------------

    def put_item(
        self,
        owner: tuple[ItemOwnerKind, str],
        namespace: Sequence[str],
        key: str,
        value: Mapping[str, Any],
        *,
        index: bool | Sequence[str] = True,
        ttl: float | None = None,
    ) -> StoredItem:
        """Store `value` under `key`; `index` embeds its text for search (all of it, none, or these fields);
        `ttl`: minutes it lives after it is written or last read (None: for ever)."""
        body = _without_none({"namespace": list(namespace), "key": key, "value": dict(value),
                              "index": index if isinstance(index, bool) else list(index), "ttl": ttl})
        return _parse(StoredItem, self.request("PUT", _items_path(owner), json_body=body))

    def get_item(
        self, owner: tuple[ItemOwnerKind, str], namespace: Sequence[str], key: str, *, refresh_ttl: bool = True
    ) -> StoredItem | None:
        """The item, or None when there is none (or it expired); `refresh_ttl` restarts its TTL."""
        query = {"namespace": ".".join(namespace), "key": key, "refreshTtl": "true" if refresh_ttl else "false"}
        try:
            answer = self.request("GET", _items_path(owner), query=query)
        except NotFound:
            return None
        return _parse(StoredItem, answer)

    def delete_item(self, owner: tuple[ItemOwnerKind, str], namespace: Sequence[str], key: str) -> None:
        self.request("DELETE", _items_path(owner), query={"namespace": ".".join(namespace), "key": key})

    def search_items(
        self,
        owner: tuple[ItemOwnerKind, str],
        namespace_prefix: Sequence[str] = (),
        *,
        query: str | None = None,
        filter: Mapping[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool = True,
    ) -> list[StoredItem]:
        """Items under `namespace_prefix`: most similar to `query` first, else most recently updated first."""
        body = _without_none({"namespacePrefix": list(namespace_prefix), "query": query,
                              "filter": dict(filter) if filter else None, "limit": limit, "offset": offset,
                              "refreshTtl": refresh_ttl})
        answer = self.request("POST", _items_path(owner) + "/search", json_body=body, retry_safe=True)
        return [_parse(StoredItem, item) for item in _items(answer, "items")]

    def item_namespaces(self, owner: tuple[ItemOwnerKind, str]) -> list[tuple[str, ...]]:
        """The namespaces (below the owner) that hold at least one item, sorted."""
        answer = self.request("GET", _items_path(owner) + "/namespaces")
        return [tuple(ns) for ns in _items(answer, "namespaces")]

    # -- service -----------------------------------------------------------------------------------

    def health(self) -> Health:
        return _parse(Health, self.request("GET", "/v1/health"))

    def openapi(self) -> dict[str, Any]:
        answer = self.request("GET", "/v1/openapi.json")
        if not isinstance(answer, dict):
            raise UnexpectedResponse("the OpenAPI document is not a JSON object")
        return answer

    def _collect(self, path: str, name: str, query: Mapping[str, Any] | None = None) -> list[Any]:
        """Every item of a listing, following `nextCursor` when the server pages it."""
        items: list[Any] = []
        cursor: str | None = None
        while True:
            answer = self.request("GET", path, query={**(query or {}), "cursor": cursor})
            items += _items(answer, name)
            cursor = answer.get("nextCursor") if isinstance(answer, dict) else None
            if not cursor:
                return items


def _parse(model: type[_Model], answer: Any) -> _Model:
    """`answer` as `model`; an answer without the contract's fields is the server's fault, said so."""
    try:
        return model.model_validate(answer)
    except pydantic.ValidationError as exc:
        raise UnexpectedResponse(f"the answer is not a {model.__name__}: {exc}") from exc


def _items(answer: Any, name: str) -> list[Any]:
    try:
        return items_of(answer, name)
    except ValueError as exc:
        raise UnexpectedResponse(f"the answer holds no list of {name}") from exc


def _field(answer: Any, name: str) -> str:
    if not isinstance(answer, dict) or not isinstance(answer.get(name), str):
        raise UnexpectedResponse(f"the answer has no {name!r}")
    return str(answer[name])


def _without_none(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def _items_path(owner: tuple[ItemOwnerKind, str]) -> str:
    kind, owner_id = owner
    if kind not in ("users", "agents"):
        raise ValueError(f"an item owner is ('users', id) or ('agents', id), not {kind!r}")
    return f"/v1/{kind}/{_segment(owner_id)}/items"


def _thread_path(user_id: str, thread_id: str) -> str:
    return f"/v1/users/{_segment(user_id)}/threads/{_segment(thread_id)}"


def _turn_json(turn: Mapping[str, str] | tuple[str, str]) -> dict[str, str]:
    if isinstance(turn, tuple):
        role, content = turn
        return {"role": role, "content": content}
    return {"role": turn["role"], "content": turn["content"]}


__all__ = ["ApiError", "HttpTransport", "MemoryClient"]
