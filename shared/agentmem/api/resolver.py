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

# Path parameters keep the contract's camelCase names: powertools matches them to arguments by name.
PathId = Annotated[str, Path(pattern=ID_REGEX, min_length=1, max_length=128)]


class AgentMemResolver(APIGatewayRestResolver):
    """The REST resolver, refusing oversize bodies before any parsing or validation."""

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        body = event.get("body") or ""
        if len(body.encode("utf-8", "surrogatepass")) > MAX_BODY_BYTES:
            return _too_large()
        return super().resolve(event, context)


def make_resolver(*routers: Router) -> APIGatewayRestResolver:
    """A REST resolver with request validation, the contract's error bodies and the given routes."""
    app = AgentMemResolver(enable_validation=True)
    register_error_handlers(app)
    for router in routers:
        app.include_router(router)
    return app


def openapi_json(app: APIGatewayRestResolver) -> str:
    """The OpenAPI 3 document of every route `app` knows."""
    return app.get_openapi_json_schema(
        title="agentmem",
        version=__version__,
        description=(
            "Persistent, tenant-isolated memory for AI agents. In AWS every method uses AWS_IAM "
            "authorization (SigV4, service execute-api); the local server accepts an optional bearer token. "
            'Errors are {"error": {"code", "message", "details"}}; a 400 lists every invalid field.'
        ),
    )


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
