"""The API Gateway resolver every HTTP function uses: validation on, the contract's errors, size limits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import Router

from agentmem import __version__
from agentmem.api.errors import register_error_handlers
from agentmem.domain.ids import ID_REGEX

# API Gateway itself stops at 10 MB; nothing agentmem accepts is near this.
MAX_BODY_BYTES = 512 * 1024
JSON_TYPE = "application/json"

# Path parameters keep the contract's camelCase names: powertools matches them to arguments by name.
PathId = Annotated[str, Path(pattern=ID_REGEX, min_length=1, max_length=128)]


class AgentMemResolver(APIGatewayRestResolver):
    """The REST resolver: oversize bodies refused before any parsing, and every body read as JSON."""

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        body = event.get("body") or ""
        if len(body.encode("utf-8", "surrogatepass")) > MAX_BODY_BYTES:
            return _too_large()
        return super().resolve(_as_json_request(event) if body else event, context)


def _as_json_request(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event with its body declared as JSON, whatever Content-Type the client sent.

    The API speaks only JSON; powertools would parse a body sent as `curl -d` (form-encoded by
    default) as a form, and answer with errors about the whole JSON text as one field name.
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
}
SUCCESS_DESCRIPTIONS = {201: "Created", 202: "Accepted"}
ERRORS: dict[str, str] = {
    "400": "validation_error: every invalid field at once, in details",
    "403": "memory_disabled (the agent is not in enabledAgents) or forbidden",
    "404": "not_found",
    "409": "conflict: a version (If-Match) mismatch, or an Idempotency-Key reused with another body",
    "413": "too_large: the body exceeds 512 KiB",
    "503": "backend_unavailable: a backend failed; nothing was written, retry later",
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
            success = SUCCESS_STATUS.get((method, path), 200)
            if success != 200 and "200" in responses:
                answer = responses.pop("200")
                if success == 204:
                    responses["204"] = {"description": "No content"}
                else:
                    responses[str(success)] = {**answer, "description": SUCCESS_DESCRIPTIONS[success]}
            for status, text in ERRORS.items():
                responses.setdefault(status, {"description": text, "content": error_ref})
    return json.dumps(document)


def json_response(status: int, body: object) -> Response:
    """A JSON answer with an explicit status (201, 202...)."""
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=json.dumps(body))


def no_content() -> Response:
    return Response(status_code=204, content_type=content_types.APPLICATION_JSON, body="")


def _too_large() -> dict[str, Any]:
    body = {
        "error": {"code": "too_large", "message": f"the body exceeds {MAX_BODY_BYTES} bytes", "details": []}
    }
    return {
        "statusCode": 413,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }
