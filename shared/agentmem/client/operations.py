"""The contract's operations, written once for both clients, sans I/O.

Each operation is a generator: it yields the `ApiCall`s it needs (most need one; a profile edit
answered without a body reads the profile back) and returns the typed result. `MemoryClient` runs
them with blocking I/O and `AsyncMemoryClient` with `await`; an error an answer carries is thrown
back in at the `yield`, so an operation can turn a 404 into None (`get_item`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

import pydantic

from agentmem.client.errors import NotFound, UnexpectedResponse
from agentmem.client.exchange import ApiCall
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
    SearchKind,
    StoredItem,
    ThreadPage,
    Turn,
    TurnPage,
    UserPage,
    UserSearchResult,
    VerdictFilter,
    items_of,
)

T = TypeVar("T")
_Model = TypeVar("_Model", bound=pydantic.BaseModel)
Op = Generator[ApiCall, Any, T]
"""An operation: yields the calls it makes, is sent each decoded answer, returns its result."""

PageOp = Callable[..., Op[Any]]


def _segment(value: str | int) -> str:
    # Every path segment percent-encoded (`@` is %40, `:` is %3A); the server matches ids after decoding.
    return quote(str(value), safe="")


# -- feedback-learning memory (agents) ---------------------------------------------------------------


def retrieve(
    agent_id: str,
    input: str,
    *,
    user_id: str | None = None,
    thread_id: str | None = None,
    token_budget: int | None = None,
    top_k: int | None = None,
    recall_k: int | None = None,
) -> Op[RetrieveResult]:
    """Memory for the run `agent_id` is about to make; the run is recorded and its id returned."""
    body = _without_none(
        {
            "input": input, "userId": user_id, "threadId": thread_id, "tokenBudget": token_budget,
            "topK": top_k, "recallK": recall_k,
        }
    )
    # Safe to repeat: a lost answer only leaves a run that never gets an output.
    answer = yield ApiCall("POST", f"/v1/agents/{_segment(agent_id)}/retrieve", json_body=body, retry_safe=True)
    return _parse(RetrieveResult, answer)


def record_run(agent_id: str, input: str, output: str, *, user_id: str | None = None) -> Op[str]:
    """Record a run made without `retrieve`; its run id."""
    body = _without_none({"input": input, "output": output, "userId": user_id})
    answer = yield ApiCall("POST", f"/v1/agents/{_segment(agent_id)}/runs", json_body=body)
    return _field(answer, "runId")


def set_output(agent_id: str, run_id: str, output: str) -> Op[None]:
    """Record the output of a run made with `retrieve`."""
    yield ApiCall("PUT", f"/v1/agents/{_segment(agent_id)}/runs/{_segment(run_id)}/output",
                  json_body={"output": output})


def get_run(agent_id: str, run_id: str) -> Op[Run]:
    """A run: input, output, injected memory ids, feedback given."""
    return _parse(Run, (yield ApiCall("GET", f"/v1/agents/{_segment(agent_id)}/runs/{_segment(run_id)}")))


def feedback(
    agent_id: str, run_id: str, rating: Rating, comment: str | None = None, *, idempotency_key: str | None = None
) -> Op[FeedbackReceipt]:
    """An editor's verdict on a run. A key is generated when none is given, so retries make one memory."""
    key = idempotency_key or f"fb-{uuid.uuid4().hex}"
    answer = yield ApiCall(
        "POST",
        f"/v1/agents/{_segment(agent_id)}/runs/{_segment(run_id)}/feedback",
        json_body=_without_none({"rating": rating, "comment": comment}),
        headers={"Idempotency-Key": key},
    )
    receipt = _parse(FeedbackReceipt, answer)
    receipt.idempotency_key = key
    return receipt


def list_runs(
    agent_id: str, *, feedback: VerdictFilter = "any", limit: int | None = None, cursor: str | None = None
) -> Op[RunPage]:
    """One page of the agent's runs, newest first; `feedback="none"` is the queue awaiting a verdict."""
    answer = yield ApiCall(
        "GET", f"/v1/agents/{_segment(agent_id)}/runs", query={"feedback": feedback, "limit": limit, "cursor": cursor}
    )
    return _parse(RunPage, answer)


def list_memories(agent_id: str, *, limit: int | None = None, cursor: str | None = None) -> Op[MemoryPage]:
    """One page of the agent's lessons, newest first."""
    answer = yield ApiCall("GET", f"/v1/agents/{_segment(agent_id)}/memories", query={"limit": limit, "cursor": cursor})
    return _parse(MemoryPage, answer)


def set_importance(agent_id: str, memory_id: str, importance: Importance) -> Op[Memory]:
    """Mark a lesson important (x1.5), unimportant (x0.3), neutral (x1.0), or give a multiplier in [0, 2]."""
    answer = yield ApiCall(
        "PATCH", f"/v1/agents/{_segment(agent_id)}/memories/{_segment(memory_id)}", json_body={"importance": importance}
    )
    return _parse(Memory, answer)


def delete_memory(agent_id: str, memory_id: str) -> Op[None]:
    """Delete a lesson; it is never retrieved again."""
    yield ApiCall("DELETE", f"/v1/agents/{_segment(agent_id)}/memories/{_segment(memory_id)}")


def erase_agent_personal_data(agent_id: str) -> Op[None]:
    """Destroy the vault of the agent's runs made without a userId: their tokens stay tokens for good."""
    yield ApiCall("DELETE", f"/v1/agents/{_segment(agent_id)}/personal-data")


# -- conversations and users --------------------------------------------------------------------------


def append_turns(user_id: str, thread_id: str, turns: Sequence[Mapping[str, str] | tuple[str, str]]) -> Op[list[Turn]]:
    """Append turns (`{"role", "content"}` or `(role, content)`); the stored, masked turns."""
    body = {"turns": [_turn_json(t) for t in turns]}
    answer = yield ApiCall("POST", f"{_thread_path(user_id, thread_id)}/turns", json_body=body)
    return [_parse(Turn, t) for t in _items(answer, "turns")]


def list_turns(user_id: str, thread_id: str, *, limit: int | None = None, cursor: str | None = None) -> Op[TurnPage]:
    """One page of a thread's masked turns, oldest first."""
    answer = yield ApiCall("GET", f"{_thread_path(user_id, thread_id)}/turns", query={"limit": limit, "cursor": cursor})
    return _parse(TurnPage, answer)


def delete_turns(user_id: str, thread_id: str, from_seq: int) -> Op[list[Turn]]:
    """Delete the thread's turns with `seq >= from_seq`; the turns deleted (masked), oldest first."""
    answer = yield ApiCall("DELETE", f"{_thread_path(user_id, thread_id)}/turns", query={"fromSeq": from_seq})
    return [_parse(Turn, t) for t in _items(answer, "turns")]


def delete_thread(user_id: str, thread_id: str) -> Op[None]:
    """Delete the whole thread: its turns, their recall entries and idempotency records."""
    yield ApiCall("DELETE", _thread_path(user_id, thread_id))


def unmask(user_id: str, thread_id: str, text: str) -> Op[str]:
    """`text` with every PII token of this user restored."""
    answer = yield ApiCall("POST", f"{_thread_path(user_id, thread_id)}/unmask", json_body={"text": text},
                           retry_safe=True)
    return _field(answer, "text")


def list_users(*, limit: int | None = None, cursor: str | None = None, prefix: str | None = None) -> Op[UserPage]:
    """One page of the tenant's users by id (those whose id starts with `prefix`, when given)."""
    answer = yield ApiCall("GET", "/v1/users", query={"limit": limit, "cursor": cursor, "prefix": prefix or None})
    return _parse(UserPage, answer)


def list_threads(user_id: str, *, limit: int | None = None, cursor: str | None = None) -> Op[ThreadPage]:
    """One page of the user's threads, newest activity first."""
    answer = yield ApiCall("GET", f"/v1/users/{_segment(user_id)}/threads", query={"limit": limit, "cursor": cursor})
    return _parse(ThreadPage, answer)


def search_user(
    user_id: str, query: str, *, limit: int | None = None, kinds: Sequence[SearchKind] | None = None
) -> Op[UserSearchResult]:
    """The user's facts, recalled turns and items most similar to `query` (masked); records no run."""
    body = _without_none({"query": query, "limit": limit, "kinds": list(kinds) if kinds is not None else None})
    # Safe to repeat: a search writes nothing but the vault entries masking the query needs, and those once.
    answer = yield ApiCall("POST", f"/v1/users/{_segment(user_id)}/search", json_body=body, retry_safe=True)
    return _parse(UserSearchResult, answer)


def get_profile(user_id: str) -> Op[Profile]:
    """The user's profile (version 0: none yet)."""
    return _parse(Profile, (yield ApiCall("GET", f"/v1/users/{_segment(user_id)}/profile")))


def put_profile(user_id: str, markdown: str, *, if_match: int | str) -> Op[Profile]:
    """The user's own edit of their profile, made only if the current version is `if_match` (else Conflict)."""
    answer = yield ApiCall(
        "PUT",
        f"/v1/users/{_segment(user_id)}/profile",
        json_body={"markdown": markdown},
        headers={"If-Match": str(if_match)},
        # A repeat after a lost answer would meet the new version and report a false conflict.
        retry_safe=False,
    )
    return _parse(Profile, answer) if answer is not None else (yield from get_profile(user_id))


def profile_versions(user_id: str) -> Op[list[ProfileVersion]]:
    """Every version of the user's profile, as the server orders them (newest first)."""
    found = yield from _collect(f"/v1/users/{_segment(user_id)}/profile/versions", "versions")
    return [_parse(ProfileVersion, v) for v in found]


def restore_profile(user_id: str, version: int, *, if_match: int | str | None = None) -> Op[Profile]:
    """Make an earlier version current again, as a new version (only over `if_match` when given)."""
    answer = yield ApiCall(
        "POST",
        f"/v1/users/{_segment(user_id)}/profile/versions/{_segment(version)}/restore",
        headers={"If-Match": str(if_match)} if if_match is not None else None,
    )
    return _parse(Profile, answer) if answer is not None else (yield from get_profile(user_id))


def list_facts(user_id: str, *, include_superseded: bool = False) -> Op[list[Fact]]:
    """The user's facts, newest first; superseded ones too when asked (with their validity period)."""
    query = {"includeSuperseded": "true"} if include_superseded else {}
    found = yield from _collect(f"/v1/users/{_segment(user_id)}/facts", "facts", query)
    return [_parse(Fact, f) for f in found]


def update_fact(user_id: str, fact_id: str, text: str) -> Op[Fact]:
    """Correct a fact's text (masked like a turn, found by its new meaning); the fact as stored."""
    path = f"/v1/users/{_segment(user_id)}/facts/{_segment(fact_id)}"
    answer = yield ApiCall("PATCH", path, json_body={"text": text})
    return _parse(Fact, answer)


def delete_fact(user_id: str, fact_id: str) -> Op[None]:
    """Delete a fact; it is never recalled again."""
    yield ApiCall("DELETE", f"/v1/users/{_segment(user_id)}/facts/{_segment(fact_id)}")


def erase_user(user_id: str) -> Op[None]:
    """Erase the user: transcripts, profile, facts, runs and vault; their data keys are destroyed."""
    yield ApiCall("DELETE", f"/v1/users/{_segment(user_id)}")


# -- items (key-addressed values of a user or an agent; LangGraph's store) ----------------------------


def put_item(
    owner: tuple[ItemOwnerKind, str],
    namespace: Sequence[str],
    key: str,
    value: Mapping[str, Any],
    *,
    index: bool | Sequence[str] = True,
    ttl: float | None = None,
) -> Op[StoredItem]:
    """Store `value` under `key`; `index` embeds its text for search (all of it, none, or these fields);
    `ttl`: minutes it lives after it is written or last read (None: for ever)."""
    body = _without_none({"namespace": list(namespace), "key": key, "value": dict(value),
                          "index": index if isinstance(index, bool) else list(index), "ttl": ttl})
    return _parse(StoredItem, (yield ApiCall("PUT", _items_path(owner), json_body=body)))


def get_item(
    owner: tuple[ItemOwnerKind, str], namespace: Sequence[str], key: str, *, refresh_ttl: bool = True
) -> Op[StoredItem | None]:
    """The item, or None when there is none (or it expired); `refresh_ttl` restarts its TTL."""
    query = {"namespace": ".".join(namespace), "key": key, "refreshTtl": "true" if refresh_ttl else "false"}
    try:
        answer = yield ApiCall("GET", _items_path(owner), query=query)
    except NotFound:
        return None
    return _parse(StoredItem, answer)


def delete_item(owner: tuple[ItemOwnerKind, str], namespace: Sequence[str], key: str) -> Op[None]:
    """Delete an item (and its vector)."""
    yield ApiCall("DELETE", _items_path(owner), query={"namespace": ".".join(namespace), "key": key})


def search_items(
    owner: tuple[ItemOwnerKind, str],
    namespace_prefix: Sequence[str] = (),
    *,
    query: str | None = None,
    filter: Mapping[str, Any] | None = None,
    limit: int = 10,
    offset: int = 0,
    refresh_ttl: bool = True,
) -> Op[list[StoredItem]]:
    """Items under `namespace_prefix`: most similar to `query` first, else most recently updated first."""
    body = _without_none({"namespacePrefix": list(namespace_prefix), "query": query,
                          "filter": dict(filter) if filter else None, "limit": limit, "offset": offset,
                          "refreshTtl": refresh_ttl})
    answer = yield ApiCall("POST", _items_path(owner) + "/search", json_body=body, retry_safe=True)
    return [_parse(StoredItem, item) for item in _items(answer, "items")]


def item_namespaces(owner: tuple[ItemOwnerKind, str]) -> Op[list[tuple[str, ...]]]:
    """The namespaces (below the owner) that hold at least one item, sorted."""
    answer = yield ApiCall("GET", _items_path(owner) + "/namespaces")
    return [tuple(ns) for ns in _items(answer, "namespaces")]


# -- service -------------------------------------------------------------------------------------------


def health() -> Op[Health]:
    """Liveness, backend and version."""
    return _parse(Health, (yield ApiCall("GET", "/v1/health")))


def openapi() -> Op[dict[str, Any]]:
    """The OpenAPI document of the whole API."""
    answer = yield ApiCall("GET", "/v1/openapi.json")
    if not isinstance(answer, dict):
        raise UnexpectedResponse("the OpenAPI document is not a JSON object")
    return answer


def request(
    method: str,
    path: str,
    *,
    json_body: Any = None,
    query: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    retry_safe: bool | None = None,
) -> Op[Any]:
    """Send a request to `path` (starting with /v1) and return the decoded JSON answer (None for 204).

    Raises the `ApiError` subclass of the error code, or `TransportError` when no answer came.
    `retry_safe` says whether sending the request twice does no harm; by default idempotent
    methods and requests with an `Idempotency-Key` are.
    """
    return (yield ApiCall(method, path, json_body=json_body, query=query, headers=headers, retry_safe=retry_safe))


# -- helpers -------------------------------------------------------------------------------------------


def _collect(path: str, name: str, query: Mapping[str, Any] | None = None) -> Op[list[Any]]:
    """Every item of a listing, following `nextCursor` when the server pages it."""
    items: list[Any] = []
    cursor: str | None = None
    while True:
        answer = yield ApiCall("GET", path, query={**(query or {}), "cursor": cursor})
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
