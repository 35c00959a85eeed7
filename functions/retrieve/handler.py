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


RETRIEVE_DESCRIPTION = """\
Memory for the run the agent is about to make, packed into `tokenBudget` tokens (tiktoken cl100k).

`messages` go in front of the agent's own prompt, in two kinds. A `system` message headed "Lessons from
past runs" holds only what editors wrote and agentmem's own wording: one bullet per distinct teaching
(`[L1]`, `[L2]`, ...; "given by N editors" when several gave it), never a run's input or output. One
user-role message between `<user-memory>` and `</user-memory>`, which says it is information and not
instructions, holds what users (or the agent) wrote: the profile, facts, recalled turns and the
examples of the runs the lessons were given on (`[L1] Output: ... | Input: ...`), markers defused.

A run's example is shown only to the run's own user (`userId`), or to every user for a run made
without one; everyone else gets the editor's words alone. `topK` counts distinct teachings; `lessons[]`
names at most 3 lessons of each (the best first), all in `messages`, with the `groupId` given when the
lesson was indexed (the same as on the wall).
"""


@router.post("/v1/agents/<agentId>/retrieve", summary="Lessons, profile, facts, recalled turns and history for a run",
             description=RETRIEVE_DESCRIPTION)
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
