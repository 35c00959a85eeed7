"""The API Gateway resolver every HTTP function uses: validation on, the contract's errors, size limits.

It is also the one strict reading of a request body, for every route in both deployments (`agentmem
serve` turns each request into the proxy event a Lambda handler gets, and calls this resolver): only
`application/json` is read (with or without `charset=utf-8`; anything else is 415
`unsupported_media_type`), and the JSON must be one object with no key twice in any object, only finite
numbers a double can hold (`1e400` is refused, not stored as null), no NaN or Infinity, bounded nesting
and integers. A refused body is answered before any handler runs, so it writes nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Header, Path
from aws_lambda_powertools.event_handler.router import Router
from pydantic import BeforeValidator, StringConstraints

from agentmem import __version__
from agentmem.api.errors import register_error_handlers
from agentmem.api.limits import MAX_BODY_BYTES, MAX_BODY_TEXT, too_large_message
from agentmem.domain.ids import ID_REGEX

# No request body of the contract nests more than a few levels or holds a number near this size.
MAX_JSON_DEPTH = 32
MAX_INTEGER_DIGITS = 20
JSON_TYPE = "application/json"



def _percent_decoded(value: object) -> object:
    return unquote(value) if isinstance(value, str) else value


# powertools matches routes on the event's `path`, which API Gateway's REST proxy (and `agentmem serve`)
# leave percent-encoded, and hands each parameter over as matched: `a%40b`, where the id is `a@b`. Each
# path parameter's type decodes it first (pydantic's public BeforeValidator, which powertools keeps),
# so the contract's pattern checks the id itself: `a%2Fb` is `a/b`, a 400 on that field.
PERCENT_DECODED = BeforeValidator(_percent_decoded)
# Path parameters keep the contract's camelCase names: powertools matches them to arguments by name.
# The constraints sit on the decoded string (StringConstraints, inside the validator), so the OpenAPI
# document still shows the pattern.
PathId = Annotated[
    str, StringConstraints(pattern=ID_REGEX, min_length=1, max_length=128), PERCENT_DECODED, Path()
]
# The optional `Idempotency-Key` header of the routes that take one (feedback, turn appends).
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", pattern=ID_REGEX, max_length=128)]


class AgentMemResolver(APIGatewayRestResolver):
    """The REST resolver: oversize bodies refused before any parsing, every body read as one JSON object.

    Path parameters are decoded by their type (`PERCENT_DECODED`), before validation."""

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        body = event.get("body") or ""
        if len(body.encode("utf-8", "surrogatepass")) > MAX_BODY_BYTES:
            return _too_large()
        if body:
            media_problem = media_type_problem(_header(event, "content-type"))
            if media_problem is not None:
                return _unsupported_media_type(media_problem)
            problem = json_object_problem(body)
            if problem is not None:
                return _invalid_body(problem)
        return super().resolve(_as_json_request(event) if body else event, context)


def media_type_problem(content_type: str | None) -> str | None:
    """Why a body sent with this Content-Type is not read, or None for `application/json`.

    The media type is matched case-insensitively, as RFC 9110 has it; `charset` may be given, and
    must then be UTF-8 (RFC 8259: JSON exchanged between systems is UTF-8); no other parameter is taken.
    """
    if not content_type:
        return "a request body needs Content-Type: application/json"
    media, *parameters = (part.strip() for part in content_type.split(";"))
    if media.lower() != JSON_TYPE:
        return "only application/json bodies are read"
    for parameter in filter(None, parameters):
        name, _, value = parameter.partition("=")
        if name.strip().lower() != "charset" or value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return "application/json takes no parameter but charset=utf-8"
    return None


def json_object_problem(body: str) -> str | None:
    """Why `body` is not one JSON object agentmem can take, or None.

    Standard JSON only (no NaN or Infinity), no key twice in one object (which one would win is not
    said by JSON, and differs between parsers), only numbers a double holds, at most MAX_JSON_DEPTH
    levels of nesting and MAX_INTEGER_DIGITS digits per integer: a hostile body is a 400, never a 500.
    """
    try:
        parsed = json.loads(
            body, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant,
            object_pairs_hook=_unique_keys,
        )
    except RecursionError:
        return f"the body nests deeper than {MAX_JSON_DEPTH} levels"
    except _BodyRefused as exc:
        return str(exc)
    except ValueError:
        return "the body is not valid JSON"
    if not isinstance(parsed, dict):
        return f"the body must be a JSON object, not {_json_kind(parsed)}"
    if _depth(parsed) > MAX_JSON_DEPTH:
        return f"the body nests deeper than {MAX_JSON_DEPTH} levels"
    return None


class _BodyRefused(ValueError):
    pass


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _BodyRefused(f"an integer in the body has more than {MAX_INTEGER_DIGITS} digits")
    return int(text)


def _no_constant(name: str) -> Any:
    raise _BodyRefused(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BodyRefused("a number in the body is out of range (beyond what a double holds)")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        # The key itself is not repeated back: an object key may be personal data.
        raise _BodyRefused("an object in the body holds the same key twice")
    return found


def _header(event: Mapping[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if key.lower() == name and value is not None:
            return str(value)
    for key, values in (event.get("multiValueHeaders") or {}).items():
        if key.lower() == name and values:
            return str(values[0])
    return None


def _depth(value: Any) -> int:
    """Nesting depth, iteratively (a deep body must not exhaust the stack here either)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
    return deepest


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "null" if value is None else "a number"


def _as_json_request(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event with its Content-Type as powertools matches it: `application/json` exactly.

    Only reached once the body's own Content-Type was found to be application/json (any case, a
    charset); powertools compares the header as a plain string.
    """
    headers = {k: v for k, v in (event.get("headers") or {}).items() if k.lower() != "content-type"}
    multi = {k: v for k, v in (event.get("multiValueHeaders") or {}).items() if k.lower() != "content-type"}
    return {**event, "headers": {**headers, "Content-Type": JSON_TYPE},
            "multiValueHeaders": {**multi, "Content-Type": [JSON_TYPE]}}


def make_resolver(*routers: Router) -> APIGatewayRestResolver:
    """A REST resolver with request validation, the contract's error bodies and the given routes."""
    app = AgentMemResolver(enable_validation=True)
    register_error_handlers(app)
    for router in routers:
        app.include_router(router)
    return app


# Answers other than 200, as the contract gives them; every other operation answers 200.
SUCCESS_STATUS: dict[tuple[str, str], int] = {
    ("post", "/v1/agents/{agentId}/runs"): 201,
    ("put", "/v1/agents/{agentId}/runs/{runId}/output"): 204,
    ("post", "/v1/agents/{agentId}/runs/{runId}/feedback"): 202,
    ("delete", "/v1/agents/{agentId}/memories/{memoryId}"): 204,
    ("post", "/v1/users/{userId}/threads/{threadId}/turns"): 201,
    ("delete", "/v1/users/{userId}/facts/{factId}"): 204,
    ("delete", "/v1/users/{userId}"): 204,
    ("delete", "/v1/users/{userId}/threads/{threadId}"): 204,
    ("delete", "/v1/agents/{agentId}/personal-data"): 204,
    ("delete", "/v1/users/{userId}/items"): 204,
    ("delete", "/v1/agents/{agentId}/items"): 204,
}
# Operations that exist only to refuse: MCP's stateless endpoint opens no stream and has no session.
REFUSING_OPERATIONS: dict[tuple[str, str], str] = {
    ("get", "/mcp"): "method_not_allowed: the endpoint is stateless and opens no event stream (Allow: POST)",
    ("delete", "/mcp"): "method_not_allowed: the endpoint is stateless and has no session to end (Allow: POST)",
}
SUCCESS_DESCRIPTIONS = {201: "Created", 202: "Accepted"}
ERRORS: dict[str, str] = {
    "400": "validation_error: every invalid field at once, in details; a body that is not one JSON object, "
           "holds a key twice in one object or a number out of range (1e400), or control characters in an id, "
           "item key or namespace",
    "403": "memory_disabled (the agent is not in enabledAgents) or forbidden",
    "404": "not_found",
    "409": "conflict: a version (If-Match) mismatch, an Idempotency-Key reused with another body, or one still "
           "being processed (with Retry-After: send it again then for the first answer)",
    "413": f"too_large: the body exceeds {MAX_BODY_TEXT}",
    "415": "unsupported_media_type: a body sent as anything but application/json (charset=utf-8 allowed)",
    "503": "backend_unavailable: a backend failed; nothing was written, retry later",
}
# What the HTTP front refuses before any function runs (API Gateway in AWS, `agentmem serve` locally),
# in the same error body.
FRONT_ERRORS: dict[str, str] = {
    "408": "request_timeout: the body did not arrive in time (local server)",
    "414": "uri_too_long: the request target exceeds 8 KiB (local server)",
    "431": "headers_too_large: the request headers exceed 16 KiB (local server)",
}
ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {
        "type": "object",
        "required": ["code", "message", "details"],
        "properties": {
            "code": {"type": "string"},
            "message": {"type": "string"},
            "details": {"type": "array", "items": {
                "type": "object", "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            }},
        },
    }},
}


def openapi_json(app: APIGatewayRestResolver) -> str:
    """The OpenAPI 3 document of every route `app` knows, with the contract's statuses, errors and auth."""
    document = json.loads(app.get_openapi_json_schema(
        title="agentmem",
        version=__version__,
        description=(
            "Persistent, tenant-isolated memory for AI agents. In AWS every method uses AWS_IAM "
            "authorization (SigV4, service execute-api); the local server accepts an optional bearer token. "
            'Errors are {"error": {"code", "message", "details"}}; a 400 lists every invalid field. '
            "A client mistake is never a 5xx, and a failed request writes nothing."
        ),
    ))
    components = document.setdefault("components", {})
    components.setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    components.get("schemas", {}).pop("HTTPValidationError", None)
    components.get("schemas", {}).pop("ValidationError", None)
    components["securitySchemes"] = {
        "sigv4": {"type": "apiKey", "name": "Authorization", "in": "header",
                  "description": "AWS Signature Version 4, service execute-api (API Gateway with AWS_IAM)",
                  "x-amazon-apigateway-authtype": "awsSigv4"},
        "bearer": {"type": "http", "scheme": "bearer",
                   "description": "agentmem serve with AGENTMEM_API_TOKEN set (local only)"},
    }
    document["security"] = [{"sigv4": []}, {"bearer": []}]
    error_ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            refusal = REFUSING_OPERATIONS.get((method, path))
            if refusal is not None:
                responses.pop("200", None)
                responses["405"] = {"description": refusal, "content": error_ref}
            success = SUCCESS_STATUS.get((method, path), 200)
            if refusal is None and success != 200 and "200" in responses:
                answer = responses.pop("200")
                if success == 204:
                    responses["204"] = {"description": "No content"}
                else:
                    responses[str(success)] = {**answer, "description": SUCCESS_DESCRIPTIONS[success]}
            for status, text in {**ERRORS, **FRONT_ERRORS}.items():
                responses.setdefault(status, {"description": text, "content": error_ref})
    return json.dumps(document)


def json_response(status: int, body: object) -> Response:
    """A JSON answer with an explicit status (201, 202...)."""
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=json.dumps(body))


def no_content() -> Response:
    return Response(status_code=204, content_type=content_types.APPLICATION_JSON, body="")


def _invalid_body(message: str) -> dict[str, Any]:
    body = {"error": {"code": "validation_error", "message": message,
                      "details": [{"field": "body", "message": message}]}}
    return {
        "statusCode": 400,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def _unsupported_media_type(message: str) -> dict[str, Any]:
    body = {"error": {"code": "unsupported_media_type", "message": message,
                      "details": [{"field": "Content-Type", "message": message}]}}
    return {
        "statusCode": 415,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def _too_large() -> dict[str, Any]:
    body = {
        "error": {"code": "too_large", "message": too_large_message(), "details": []}
    }
    return {
        "statusCode": 413,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }
