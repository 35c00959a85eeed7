"""Domain errors to HTTP: the contract's error body, in one place."""

from __future__ import annotations

import json
import re
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from agentmem.domain.errors import (
    AgentMemError,
    BackendUnavailable,
    Conflict,
    Forbidden,
    InvalidInput,
    MemoryDisabled,
    NotFound,
    StillInProgress,
    TooLarge,
)

STATUS_BY_ERROR: dict[type[AgentMemError], int] = {
    InvalidInput: 400,
    Forbidden: 403,
    MemoryDisabled: 403,
    NotFound: 404,
    Conflict: 409,
    TooLarge: 413,
    BackendUnavailable: 503,
}
# Where pydantic puts a parameter, and the name the client knows it by.
_LOCATION_PREFIXES = {"body", "path", "query", "header", "headers"}
# pydantic's names for union branches (`literal['a','b']`, `constrained-float`, `function-after[...]`).
_BRANCH_TAG = re.compile(r".*\[.*|(constrained|function|lax-or-strict|json-or-python|tagged-union|nullable)-.*")


def error_response(
    status: int, code: str, message: str, details: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body = {"error": {"code": code, "message": message, "details": details or []}}
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=json.dumps(body),
                    headers=headers)


def field_details(errors: list[Any]) -> list[dict[str, str]]:
    """Every pydantic error as `{"field", "message"}`, the field named as the client sent it.

    A union (`"important" | number`) fails once per branch; pydantic names the
    branches in the location (`literal[...]`, `constrained-float`). Those are
    dropped, and the branch messages of one field are joined into one entry.
    """
    merged: dict[str, list[str]] = {}
    for err in errors:
        loc = [str(p) for p in err.get("loc", ())]
        if len(loc) > 1 and loc[0] in {"header", "headers"}:
            # powertools reads headers lower-cased; the client knows them as `If-Match`, `Idempotency-Key`.
            loc = [loc[0], "-".join(part.capitalize() for part in loc[1].split("-")), *loc[2:]]
        if loc and loc[0] in _LOCATION_PREFIXES:
            loc = loc[1:]
        # The whole body was one parameter named after the handler's argument: drop that name.
        if len(loc) > 1 and loc[0] in {"request", "payload"}:
            loc = loc[1:]
        loc = [part for part in loc if not _BRANCH_TAG.fullmatch(part)]
        field = ".".join(loc) or "body"
        message = err.get("msg", "invalid")
        if err.get("type") == "json_invalid":
            field, message = "body", "the body is not valid JSON"
        messages = merged.setdefault(field, [])
        if message not in messages:
            messages.append(message)
    return [{"field": field, "message": "; or ".join(messages)} for field, messages in merged.items()]


def register_error_handlers(app: APIGatewayRestResolver) -> None:
    """Map every failure to the contract's error body; a client mistake is never a 5xx."""

    @app.exception_handler(RequestValidationError)
    def _validation(exc: RequestValidationError) -> Response:
        details = field_details(list(exc.errors()))
        return error_response(400, "validation_error", f"{len(details)} invalid field(s)", details)

    @app.exception_handler(AgentMemError)
    def _domain(exc: AgentMemError) -> Response:
        status = next((s for cls, s in STATUS_BY_ERROR.items() if isinstance(exc, cls)), 500)
        # The first request with the key is still running; a retry then gets its answer (MemoryClient waits).
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, StillInProgress) else None
        return error_response(status, exc.code, exc.message, exc.details, headers)

    @app.not_found
    def _not_found(_: Exception) -> Response:
        return error_response(404, "not_found", "no such route")
