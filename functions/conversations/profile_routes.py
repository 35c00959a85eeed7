"""The profile and facts routes of a user, served by the `conversations` function.

The profile is read and written whole: GET gives the Markdown document and
its version (also as the ETag); PUT replaces the body when `If-Match` names
the version the caller read, else 409. Every change is a version that can be
listed and restored.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from agentmem.api.resolver import PERCENT_DECODED, PathId, no_content
from agentmem.domain.errors import InvalidInput
from agentmem.domain.facts import MAX_FACT_CHARS, Fact
from agentmem.domain.timestamps import iso_utc
from agentmem.service.facts import FactService
from agentmem.service.profiles import ProfileService, ProfileView
from agentmem.wiring import get_services
from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Path, Query
from aws_lambda_powertools.event_handler.router import Router
from pydantic import BaseModel, ConfigDict, Field

MAX_PROFILE_CHARS = 200_000
_ETAG = re.compile(r'^\s*(?:W/)?"?(\d{1,12})"?\s*$')
# What the OpenAPI document says of If-Match (HTTP strips the whitespace around a header value).
ETAG_PATTERN = r'^(?:W/)?"?\d{1,12}"?$'

router = Router()


class ProfileEditRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    markdown: str = Field(
        min_length=1, max_length=MAX_PROFILE_CHARS,
        description="The profile document (frontmatter is ignored: the service keeps it) or its body alone, "
        "with the six sections of the schema in order.",
    )


class FactEditRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        min_length=1, max_length=MAX_FACT_CHARS, pattern=r"\S",
        description="The fact as it should read: one line (whitespace is collapsed); personal data in it is "
        "masked like a turn's",
    )


def profiles() -> ProfileService:
    return get_services().profiles


def facts() -> FactService:
    return get_services().facts


def profile_json(view: ProfileView) -> dict[str, Any]:
    return {
        "userId": view.user_id,
        "markdown": view.document,
        "version": view.version,
        "updatedAt": iso_utc(view.updated_at) if view.updated_at is not None else None,
        "turnCount": view.turn_count,
        "source": view.source,
        "restoredFrom": view.restored_from,
    }


def fact_json(fact: Fact) -> dict[str, Any]:
    return {
        "factId": fact.fact_id,
        "text": fact.text,
        "subject": fact.subject,
        "status": fact.status,
        "threadId": fact.thread_id,
        "sourceSeqs": fact.source_seqs,
        "validFrom": iso_utc(fact.valid_from),
        "validTo": iso_utc(fact.valid_to) if fact.valid_to is not None else None,
        "supersededBy": fact.superseded_by,
        "createdAt": iso_utc(fact.created_at),
    }


def profile_response(view: ProfileView) -> Response[Any]:
    return Response(
        status_code=200, content_type=content_types.APPLICATION_JSON, body=json.dumps(profile_json(view)),
        headers={"ETag": f'"{view.version}"'},
    )


def parse_if_match(value: str | None, *, required: bool) -> int | None:
    """The version an If-Match header names (`3`, `"3"` or `W/"3"`); InvalidInput when missing or not one."""
    if value is None:
        if not required:
            return None
        raise InvalidInput("If-Match is required", [{
            "field": "If-Match", "message": "required: the version you read (GET /v1/users/{userId}/profile)"
        }])
    found = _ETAG.match(value)
    if not found:
        raise InvalidInput("invalid If-Match", [{"field": "If-Match", "message": "a profile version, e.g. \"3\""}])
    return int(found.group(1))


# The pattern is in the OpenAPI document too: a client (or a fuzzer) can tell a version from anything else.
IfMatch = Annotated[str | None, Header(alias="If-Match", max_length=64, pattern=ETAG_PATTERN)]


@router.get("/v1/users/<userId>/profile", summary="The user's profile (version 0: none yet); ETag is the version")
def get_profile(userId: PathId) -> Response[Any]:
    return profile_response(profiles().view(userId))


@router.put(
    "/v1/users/<userId>/profile",
    summary="The user's own edit; If-Match: <version> required, 409 when the profile changed since",
)
def put_profile(
    userId: PathId, request: Annotated[ProfileEditRequest, Body()], if_match: IfMatch = None
) -> Response[Any]:
    version = parse_if_match(if_match, required=True)
    assert version is not None
    return profile_response(profiles().edit(userId, request.markdown, version))


@router.get("/v1/users/<userId>/profile/versions", summary="Every version of the profile, newest first")
def list_profile_versions(
    userId: PathId,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> dict[str, Any]:
    page = profiles().versions(userId, limit, cursor)
    return {"items": [profile_json(v) for v in page.items], "nextCursor": page.next_cursor}


@router.post(
    "/v1/users/<userId>/profile/versions/<version>/restore",
    summary="Make an old version current again (as a new version); optional If-Match",
)
def restore_profile_version(
    userId: PathId, version: Annotated[int, Field(ge=1, le=10**12), PERCENT_DECODED, Path()], if_match: IfMatch = None
) -> Response[Any]:
    return profile_response(profiles().restore(userId, version, parse_if_match(if_match, required=False)))


@router.get("/v1/users/<userId>/facts", summary="The user's facts, newest first (superseded ones on request)")
def list_facts(
    userId: PathId,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
    include_superseded: Annotated[bool, Query(alias="includeSuperseded")] = False,
) -> dict[str, Any]:
    page = facts().list_facts(userId, limit, cursor, include_superseded)
    return {"items": [fact_json(f) for f in page.items], "nextCursor": page.next_cursor}


@router.patch(
    "/v1/users/<userId>/facts/<factId>",
    summary="Correct a fact's text (masked like a turn, found by its new meaning); 200 with the fact",
    description="The fact keeps its id, subject, sources and validity. A superseded fact's text can be "
    "corrected too; it stays superseded and is never recalled. 404 for a fact the user does not have.",
)
def update_fact(userId: PathId, factId: PathId, request: Annotated[FactEditRequest, Body()]) -> dict[str, Any]:
    return fact_json(facts().update_text(userId, factId, request.text))


@router.delete("/v1/users/<userId>/facts/<factId>", summary="Delete a fact; it is never recalled again")
def delete_fact(userId: PathId, factId: PathId) -> Response[Any]:
    facts().delete(userId, factId)
    return no_content()
