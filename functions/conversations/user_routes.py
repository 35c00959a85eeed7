"""The tenant's users, a user's threads, and searching a user's memory; served by the `conversations` function.

The listings are what an operator's or a user's own view pages through (the wall's Users tab);
the search is the user's look-up of their memory by meaning, which, unlike `retrieve`, records no run.
"""

from __future__ import annotations

from typing import Annotated, Any

from agentmem.api.resolver import PathId
from agentmem.domain.timestamps import iso_utc
from agentmem.service.conversations import ConversationService
from agentmem.service.user_search import SEARCH_KINDS, SearchKind, UserSearchService
from agentmem.wiring import get_services
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import Router
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from functions.conversations.item_routes import hit_json

MAX_QUERY_CHARS = 4000
MAX_SEARCH_LIMIT = 50

router = Router()


class UserSearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for, in plain words")
    limit: StrictInt = Field(default=10, ge=1, le=MAX_SEARCH_LIMIT, description="The most hits of each kind")
    kinds: list[SearchKind] = Field(
        default_factory=lambda: list(SEARCH_KINDS), min_length=1, max_length=len(SEARCH_KINDS),
        description="Which parts of the user's memory to search (default: all three)",
    )


def conversations() -> ConversationService:
    return get_services().conversations


def user_search() -> UserSearchService:
    return get_services().user_search


@router.get("/v1/users", summary="The tenant's users by id, paged (listed from their first turn until erased)")
def list_users(
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
    prefix: Annotated[
        str, Query(max_length=128, pattern=r"^[A-Za-z0-9._:@-]*$", description="Only user ids starting with this")
    ] = "",
) -> dict[str, Any]:
    page = conversations().list_users(limit, cursor, prefix)
    return {
        "items": [{"userId": u.user_id, "createdAt": iso_utc(u.created_at)} for u in page.items],
        "nextCursor": page.next_cursor,
    }


@router.get("/v1/users/<userId>/threads", summary="A user's threads that hold a turn, newest activity first, paged")
def list_threads(
    userId: PathId,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> dict[str, Any]:
    page = conversations().list_threads(userId, limit, cursor)
    # A thread's seqs run from 1 without gaps (only its tail can be deleted): the last seq is the count.
    return {
        "items": [
            {"threadId": t.thread_id, "turnCount": t.last_seq, "lastActivityAt": iso_utc(t.last_activity_at)}
            for t in page.items
        ],
        "nextCursor": page.next_cursor,
    }


@router.post(
    "/v1/users/<userId>/search",
    summary="The user's facts, recalled turns and items found by meaning (masked); no run is recorded",
    description="The query is masked with the user's tokens before it is embedded. Each kind holds at most "
    "`limit` hits, best first; a kind whose backend is down is empty and named in `degraded`.",
)
def search_user_memory(userId: PathId, request: Annotated[UserSearchRequest, Body()]) -> dict[str, Any]:
    found = user_search().search(userId, request.query, request.limit, tuple(dict.fromkeys(request.kinds)))
    return {
        "facts": found.facts,
        "turns": [{**t.as_json(), "createdAt": iso_utc(t.created_at)} for t in found.turns],
        "items": [hit_json(hit) for hit in found.items],
        "degraded": found.degraded,
    }
