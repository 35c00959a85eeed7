"""Memory for the run an agent is about to make."""

from __future__ import annotations

from typing import Annotated, Any

from agentmem.api.models import RetrieveRequest
from agentmem.api.observability import count, inject_lambda_context, logger, metrics, tracer
from agentmem.api.resolver import PathId, make_resolver
from agentmem.wiring import get_services
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import Router
from aws_lambda_powertools.utilities.typing import LambdaContext

router = Router()


@router.post("/v1/agents/<agentId>/retrieve", summary="Lessons, profile, facts, recalled turns and history for a run")
def retrieve(agentId: PathId, request: Annotated[RetrieveRequest, Body()]) -> dict[str, Any]:
    answer = get_services().retrieval.retrieve(
        agentId,
        request.input,
        user_id=request.user_id,
        thread_id=request.thread_id,
        token_budget=request.token_budget,
        top_k=request.top_k,
        recall_k=request.recall_k,
    )
    count("LessonsInjected", len(answer["lessons"]))
    if answer["degraded"]:
        logger.warning("retrieve degraded", extra={"degraded": answer["degraded"]})
    return answer


app = make_resolver(router)


@inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
