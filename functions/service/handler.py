"""Health, and the OpenAPI document of the whole API (every function's routes)."""

from __future__ import annotations

from typing import Any

from agentmem import __version__
from agentmem.api.observability import inject_lambda_context, tracer
from agentmem.api.resolver import make_resolver, openapi_json
from agentmem.config import get_settings
from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.router import Router
from aws_lambda_powertools.utilities.typing import LambdaContext

router = Router()


@router.get("/v1/health", summary="Liveness, backend and version")
def health() -> dict[str, Any]:
    return {"status": "ok", "backend": get_settings().backend, "version": __version__}


@router.get("/v1/openapi.json", summary="This document")
def openapi() -> Response[Any]:
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=_document())


def _document() -> str:
    # Built from every function's router, so the document covers the whole API, not just this function.
    from functions import api_routers

    return openapi_json(make_resolver(*api_routers(), router))


app = make_resolver(router)


@inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
