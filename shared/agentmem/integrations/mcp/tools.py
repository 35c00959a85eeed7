"""agentmem's operations as MCP tools: one argument model each, built from the HTTP API's request models.

A tool's `inputSchema` is the JSON schema of its argument model, and its arguments are validated by
that model (unknown arguments are refused), so the MCP tools and the HTTP routes accept exactly the
same values. What a tool acts for (the agent, the user) is never an argument: it comes from the
server's `Identity` (see server.py). The thread is an argument with the identity's thread as default,
since one user talks in many threads.

Each tool runs one request through `MemoryClient.request`, so it answers with the contract's JSON
and fails with the contract's error (turned into a tool error that the model can read and correct).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from agentmem.api.models import (
    FeedbackRequest,
    Identifier,
    MemoryPatchRequest,
    RetrieveRequest,
    RunCreateRequest,
    RunOutputRequest,
    RunsListQuery,
)
from functions.conversations.handler import AppendTurnsRequest, UnmaskRequest
from functions.conversations.profile_routes import FactEditRequest, ProfileEditRequest
from functions.conversations.user_routes import UserSearchRequest

Scope = Literal["agent", "user"]


@dataclass(frozen=True)
class Identity:
    """Whom the tools act for: fixed by the server's configuration or the caller's endpoint, never by the model."""

    agent_id: str | None = None
    user_id: str | None = None
    thread_id: str | None = None


class IdentityMissing(Exception):
    """A tool needs an agent or a user that this server (or this endpoint) was not given."""


class _Arguments(BaseModel):
    # Unknown arguments are refused: a model that passes `userId` learns it cannot choose the user.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _field(annotation: Any, info: Any) -> tuple[Any, FieldInfo]:
    # `info: Any`: pydantic's mypy plugin types `Field(None, ...)` as its default's type.
    return annotation, info


def arguments_model(
    name: str,
    body: type[BaseModel] | None = None,
    *,
    exclude: tuple[str, ...] = (),
    extra: Mapping[str, tuple[Any, FieldInfo]] | None = None,
) -> type[BaseModel]:
    """A tool's argument model: `extra` (path and query parameters) then the fields of the request `body`."""
    fields: dict[str, Any] = dict(extra or {})
    if body is not None:
        for field_name, info in body.model_fields.items():
            if field_name not in exclude:
                fields[field_name] = _field(info.annotation, info)
    return create_model(name, __base__=_Arguments, **fields)


def _thread_field() -> tuple[Any, FieldInfo]:
    return _field(
        Identifier | None,
        Field(None, alias="threadId", description="The conversation thread; default: the server's configured thread."),
    )


def _id_field(alias: str, description: str) -> tuple[Any, FieldInfo]:
    return _field(Identifier, Field(alias=alias, description=description))


_PAGE = {
    "limit": _field(int | None, Field(None, ge=1, le=100, description="Page size (1-100).")),
    "cursor": _field(
        str | None, Field(None, max_length=2048, description="`nextCursor` of the previous page, to read on.")
    ),
}


Call = Callable[[Any, "Identity", dict[str, Any]], Any]
"""A tool's call: (MemoryClient, whom it acts for, validated arguments by alias) -> the JSON answer."""


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: its name, words for the model, argument model, and the request it makes."""

    name: str
    title: str
    description: str
    arguments: type[BaseModel]
    scope: Scope
    call: Call
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


def _seg(value: Any) -> str:
    return quote(str(value), safe="")


def _agent(identity: Identity) -> str:
    return _seg(_agent_id(identity))


def _agent_id(identity: Identity) -> str:
    if not identity.agent_id:
        raise IdentityMissing(
            "this MCP server acts for no agent: start it with `agentmem mcp --agent AGENT` "
            "(over HTTP, add ?agentId=AGENT to the endpoint URL)"
        )
    return identity.agent_id


def _user(identity: Identity) -> str:
    if not identity.user_id:
        raise IdentityMissing(
            "this MCP server acts for no user: start it with `agentmem mcp --user USER` "
            "(over HTTP, add ?userId=USER to the endpoint URL)"
        )
    return _seg(identity.user_id)


def _thread(identity: Identity, args: dict[str, Any]) -> str:
    thread = args.pop("threadId", None) or identity.thread_id
    if not thread:
        raise IdentityMissing("no thread: pass threadId, or start the server with `--thread THREAD`")
    return _seg(thread)


def _body(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v is not None}


# -- the calls ------------------------------------------------------------------------------------


def _retrieve(client: Any, who: Identity, args: dict[str, Any]) -> Any:
    thread = args.pop("threadId", None) or who.thread_id
    body = _body(args)
    if who.user_id:
        body["userId"] = who.user_id
        if thread:
            body["threadId"] = thread
    return client.request("POST", f"/v1/agents/{_agent(who)}/retrieve", json_body=body, retry_safe=True)


def _record_run(client: Any, who: Identity, args: dict[str, Any]) -> Any:
    body = _body(args)
    if who.user_id:
        body["userId"] = who.user_id
    return client.request("POST", f"/v1/agents/{_agent(who)}/runs", json_body=body)


def _feedback(client: Any, who: Identity, args: dict[str, Any]) -> Any:
    run_id = args.pop("runId")
    # MemoryClient.feedback sends an Idempotency-Key, so a retried call makes one lesson.
    receipt = client.feedback(_agent_id(who), run_id, args["rating"], args.get("comment"))
    return receipt.model_dump(mode="json", by_alias=True, exclude_none=True)


def _route(method: str, path: str, *, owner: Scope = "agent", send: Literal["query", "body"] | None = None,
           receipt: str | None = None) -> Call:
    """A tool call that is one request to `path` below the agent's (or user's) URL.

    `{name}` in `path` takes the argument of that alias (as a path segment); the other arguments go as
    the query or the body (`send`). With `receipt`, the answer is the path's ids and that status (for a
    204), else the route's own JSON.
    """
    names = re.findall(r"{(\w+)}", path)

    def call(client: Any, who: Identity, args: dict[str, Any]) -> Any:
        base = f"/v1/agents/{_agent(who)}" if owner == "agent" else f"/v1/users/{_user(who)}"
        ids = {name: args.pop(name) for name in names}
        rest = _body(args)
        answer = client.request(
            method, f"{base}/{path.format(**{k: _seg(v) for k, v in ids.items()})}",
            query=rest if send == "query" else None, json_body=rest if send == "body" else None,
        )
        return {**ids, "status": receipt} if receipt else answer

    return call


def _append_turns(client: Any, who: Identity, args: dict[str, Any]) -> Any:
    user, thread = _user(who), _thread(who, args)
    turns = [{"role": t["role"], "content": t["content"]} for t in args["turns"]]
    return client.request("POST", f"/v1/users/{user}/threads/{thread}/turns", json_body={"turns": turns})


def _edit_profile(client: Any, who: Identity, args: dict[str, Any]) -> Any:
    user = _user(who)
    answer = client.request(
        "PUT",
        f"/v1/users/{user}/profile",
        json_body={"markdown": args["markdown"]},
        headers={"If-Match": str(args["version"])},
        retry_safe=False,
    )
    return answer if answer is not None else client.request("GET", f"/v1/users/{user}/profile")


def _list_facts(client: Any, who: Identity, args: dict[str, Any]) -> Any:
    query = _body(args)
    if query.pop("includeSuperseded", False):
        query["includeSuperseded"] = "true"
    return client.request("GET", f"/v1/users/{_user(who)}/facts", query=query)


def _unmask(client: Any, who: Identity, args: dict[str, Any]) -> Any:
    user, thread = _user(who), _thread(who, args)
    return client.request(
        "POST", f"/v1/users/{user}/threads/{thread}/unmask", json_body={"text": args["text"]}, retry_safe=True
    )


_RUN_ID = _id_field("runId", "The run's id, as `retrieve_memory` or `record_run` returned it.")
_MEMORY_ID = _id_field("memoryId", "The lesson's `memoryId`, as `list_lessons` returned it.")

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="retrieve_memory",
        title="Retrieve memory for a run",
        description=(
            "Call before working on a task. Returns the memory for the run you are about to make: `lessons` "
            "(editors' feedback on similar past runs), the user's `profile`, `facts`, compacted `history` of "
            "the thread, and `messages`: the same, ready to put in front of your own prompt (a system message "
            "headed 'Lessons from past runs', then the user's context, then the history), within `tokenBudget` "
            "tiktoken tokens. Also records the run: keep the returned `runId` to record your output "
            "(`set_run_output`) and to receive feedback (`give_feedback`). An agent whose memory is not "
            "enabled gets `memory: \"disabled\"` and no lessons."
        ),
        arguments=arguments_model("RetrieveArguments", RetrieveRequest, exclude=("user_id",)),
        scope="agent",
        call=_retrieve,
    ),
    ToolSpec(
        name="record_run",
        title="Record a run",
        description=(
            "Record a run made without `retrieve_memory`: its input and output. Returns `runId`, for feedback. "
            "Personal data in both is masked before it is stored."
        ),
        arguments=arguments_model("RecordRunArguments", RunCreateRequest, exclude=("user_id",)),
        scope="agent",
        call=_record_run,
    ),
    ToolSpec(
        name="set_run_output",
        title="Record a run's output",
        description="Record the output you produced for a run that `retrieve_memory` started (by its `runId`).",
        arguments=arguments_model("SetRunOutputArguments", RunOutputRequest, extra={"run_id": _RUN_ID}),
        scope="agent",
        call=_route("PUT", "runs/{runId}/output", send="body", receipt="recorded"),
        idempotent=True,
    ),
    ToolSpec(
        name="give_feedback",
        title="Give feedback on a run",
        description=(
            "An editor's verdict on a run: `rating` \"up\" or \"down\", and a `comment` saying why. The verdict "
            "becomes a lesson (a digest of the comment, then the output, then the input) that the agent's next "
            "similar runs get under 'Lessons from past runs'. Indexing is asynchronous (locally within a second)."
        ),
        arguments=arguments_model("FeedbackArguments", FeedbackRequest, extra={"run_id": _RUN_ID}),
        scope="agent",
        call=_feedback,
    ),
    ToolSpec(
        name="list_runs",
        title="List runs",
        description=(
            "The agent's runs, newest first: the editors' review queue. `feedback` \"none\" lists the runs "
            "awaiting a verdict (give one with `give_feedback`), \"up\" or \"down\" those whose newest feedback "
            "has that rating, \"any\" every run. Each item has `runId`, the masked `input` and `output` (cut to "
            "a snippet), `userId`, the injected lessons and the feedback given. Page with `cursor`."
        ),
        arguments=arguments_model("ListRunsArguments", RunsListQuery),
        scope="agent",
        call=_route("GET", "runs", send="query"),
        read_only=True,
    ),
    ToolSpec(
        name="list_lessons",
        title="List lessons",
        description=(
            "The agent's lessons, newest first (the Memory Learning Wall's data): `memoryId`, rating, comment, "
            "digest, importance. Page with `cursor`."
        ),
        arguments=arguments_model("ListLessonsArguments", extra=_PAGE),
        scope="agent",
        call=_route("GET", "memories", send="query"),
        read_only=True,
    ),
    ToolSpec(
        name="mark_lesson",
        title="Mark a lesson's importance",
        description=(
            "Mark a lesson important (its score x1.5), unimportant (x0.3), neutral (x1.0), or give a multiplier "
            "in [0, 2]. Eligibility is decided on similarity alone; importance changes the ranking."
        ),
        arguments=arguments_model("MarkLessonArguments", MemoryPatchRequest, extra={"memory_id": _MEMORY_ID}),
        scope="agent",
        call=_route("PATCH", "memories/{memoryId}", send="body"),
        idempotent=True,
    ),
    ToolSpec(
        name="delete_lesson",
        title="Delete a lesson",
        description="Delete a lesson: it is never retrieved again.",
        arguments=arguments_model("DeleteLessonArguments", extra={"memory_id": _MEMORY_ID}),
        scope="agent",
        call=_route("DELETE", "memories/{memoryId}", receipt="deleted"),
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        name="append_turns",
        title="Append conversation turns",
        description=(
            "Append turns (`role` \"user\" or \"assistant\", `content`) to the user's thread. Personal data is "
            "replaced by tokens such as {{PII_EMAIL_3f9a1c2b_1}} before anything is stored; the user's profile "
            "and facts are consolidated from the turns afterwards. Returns the stored, masked turns."
        ),
        arguments=arguments_model("AppendTurnsArguments", AppendTurnsRequest, extra={"thread_id": _thread_field()}),
        scope="user",
        call=_append_turns,
    ),
    ToolSpec(
        name="get_profile",
        title="Read the user's profile",
        description=(
            "The user's Markdown profile (`markdown`), its `version` (0: none yet; pass it to `edit_profile`), "
            "`updatedAt` and `turnCount`."
        ),
        arguments=arguments_model("GetProfileArguments"),
        scope="user",
        call=_route("GET", "profile", owner="user"),
        read_only=True,
    ),
    ToolSpec(
        name="edit_profile",
        title="Edit the user's profile",
        description=(
            "Replace the user's profile with `markdown` (the user's own edit), only if its current version is "
            "`version` (from `get_profile`); a stale version is a conflict: read the profile again and redo "
            "the edit on it. Returns the new profile."
        ),
        arguments=arguments_model(
            "EditProfileArguments",
            ProfileEditRequest,
            extra={
                "version": _field(
                    Annotated[int, Field(ge=0)],
                    Field(description="The profile's current `version`, as `get_profile` returned it."),
                )
            },
        ),
        scope="user",
        call=_edit_profile,
    ),
    ToolSpec(
        name="list_facts",
        title="List the user's facts",
        description=(
            "The facts remembered about the user, newest first (`factId`, `text`); superseded ones too with "
            "`includeSuperseded`, with their validity period."
        ),
        arguments=arguments_model(
            "ListFactsArguments",
            extra={
                **_PAGE,
                "include_superseded": _field(
                    bool, Field(False, alias="includeSuperseded", description="Also facts later replaced.")
                ),
            },
        ),
        scope="user",
        call=_list_facts,
        read_only=True,
    ),
    ToolSpec(
        name="update_fact",
        title="Correct a fact",
        description=(
            "Correct one of the user's facts (by `factId` from `list_facts` or `search_memory`) to read `text`. "
            "Personal data in it is masked like a turn's; the fact keeps its id and is found by its new meaning."
        ),
        arguments=arguments_model(
            "UpdateFactArguments", FactEditRequest, extra={"fact_id": _id_field("factId", "The fact's `factId`.")}
        ),
        scope="user",
        call=_route("PATCH", "facts/{factId}", owner="user", send="body"),
        idempotent=True,
    ),
    ToolSpec(
        name="search_memory",
        title="Search the user's memory",
        description=(
            "Find what is remembered about the user by meaning, without starting a run: `facts`, past `turns` "
            "(from every thread) and stored `items` most similar to `query`, at most `limit` of each, best first. "
            "`kinds` narrows it to some of the three. Texts are masked (personal data as tokens; `unmask` them "
            "for the user)."
        ),
        arguments=arguments_model("SearchMemoryArguments", UserSearchRequest),
        scope="user",
        call=_route("POST", "search", owner="user", send="body"),
        read_only=True,
    ),
    ToolSpec(
        name="list_threads",
        title="List the user's threads",
        description=(
            "The user's conversation threads, newest activity first: `threadId`, `turnCount`, `lastActivityAt`. "
            "Page with `cursor`."
        ),
        arguments=arguments_model("ListThreadsArguments", extra=_PAGE),
        scope="user",
        call=_route("GET", "threads", owner="user", send="query"),
        read_only=True,
    ),
    ToolSpec(
        name="delete_fact",
        title="Delete a fact",
        description="Delete one of the user's facts (by `factId` from `list_facts`): it is never recalled again.",
        arguments=arguments_model(
            "DeleteFactArguments", extra={"fact_id": _id_field("factId", "The fact's `factId`.")}
        ),
        scope="user",
        call=_route("DELETE", "facts/{factId}", owner="user", receipt="deleted"),
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        name="unmask",
        title="Unmask text for the user",
        description=(
            "Restore the user's personal data in `text`: every token such as {{PII_EMAIL_3f9a1c2b_1}} of this "
            "user (from any of their threads) becomes the original value; tokens of other users stay as they "
            "are. Use it only on text shown to this user."
        ),
        arguments=arguments_model("UnmaskArguments", UnmaskRequest, extra={"thread_id": _thread_field()}),
        scope="user",
        call=_unmask,
        read_only=True,
    ),
)
