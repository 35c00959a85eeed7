"""Runs, editors' feedback, and the lessons it becomes (the Memory Learning Wall's data)."""

from __future__ import annotations

from typing import Annotated, Any

from agentmem.api.idempotency import submit_feedback_once
from agentmem.api.models import FeedbackRequest, MemoryPatchRequest, RunCreateRequest, RunOutputRequest
from agentmem.api.observability import count, inject_lambda_context, metrics, tracer
from agentmem.api.presenters import SNIPPET_CHARS, memory_json, place_json, run_json, run_summary_json
from agentmem.api.resolver import IdempotencyKey, PathId, json_response, make_resolver, no_content
from agentmem.api.responses import MemoryPageAnswer
from agentmem.domain.models import VerdictFilter
from agentmem.domain.pii import agent_subject
from agentmem.service.lesson_groups import WALL_GROUPING_WINDOW, list_grouped
from agentmem.wiring import get_services
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import Router
from aws_lambda_powertools.utilities.typing import LambdaContext

router = Router()


@router.get(
    "/v1/agents",
    summary="Agents known to this tenant: enabled in config, or holding lessons (the wall's index)",
)
def list_agents() -> dict[str, Any]:
    memory = get_services().memory
    return {"items": memory.known_agents()}


@router.post("/v1/agents/<agentId>/runs", summary="Record a run made without retrieve")
def create_run(agentId: PathId, request: Annotated[RunCreateRequest, Body()]) -> Response[Any]:
    run = get_services().memory.record_run(agentId, request.input, output=request.output, user_id=request.user_id)
    return json_response(201, {"runId": run.run_id})


@router.put("/v1/agents/<agentId>/runs/<runId>/output", summary="Set a run's output")
def set_output(agentId: PathId, runId: PathId, request: Annotated[RunOutputRequest, Body()]) -> Response[Any]:
    get_services().memory.set_output(agentId, runId, request.output)
    return no_content()


@router.get(
    "/v1/agents/<agentId>/runs",
    summary="The agent's runs, newest first: the editors' review queue",
    description=(
        "`feedback=none` lists the runs awaiting a verdict, `up` or `down` those whose newest feedback has "
        "that rating, `any` (the default) every run. Inputs and outputs are masked, as stored, and cut to "
        f"{SNIPPET_CHARS} characters (`inputTruncated`, `outputTruncated`); `GET .../runs/{{runId}}` has them "
        "whole. Each feedback names the lesson it became and that lesson's status (`pending` until it is "
        "indexed and can be retrieved). A cursor pages only the `feedback` filter it was returned for. In AWS "
        "the listing reads an index: a run leaves `feedback=none` a moment after its feedback is accepted."
    ),
)
def list_runs(
    agentId: PathId,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
    feedback: Annotated[VerdictFilter, Query(description="none | up | down | any")] = "any",
) -> dict[str, Any]:
    page, lessons = get_services().memory.list_runs(agentId, limit, cursor, feedback)
    return {
        "items": [run_summary_json(run, lessons[run.run_id]) for run in page.items],
        "nextCursor": page.next_cursor,
    }


@router.get("/v1/agents/<agentId>/runs/<runId>", summary="A run: input, output, injected lessons, feedback")
def get_run(agentId: PathId, runId: PathId) -> dict[str, Any]:
    memory = get_services().memory
    run = memory.get_run(agentId, runId)
    return run_json(run, memory.feedback_of_run(run))


@router.post("/v1/agents/<agentId>/runs/<runId>/feedback", summary="An editor's verdict on a run")
def submit_feedback(
    agentId: PathId,
    runId: PathId,
    request: Annotated[FeedbackRequest, Body()],
    idempotency_key: IdempotencyKey = None,
) -> Response[Any]:
    services = get_services()
    if idempotency_key is None:
        receipt = services.memory.submit_feedback(agentId, runId, request.rating, request.comment)
        if receipt.created:
            count("FeedbackAccepted")
        answer = {"feedbackId": receipt.feedback_id, "memoryId": receipt.memory_id, "status": "accepted"}
    else:
        # A retry with the key is answered with the first request's body (powertools' idempotency).
        # powertools keeps a hash of the body: of the masked comment, never of the raw one.
        comment = services.memory.mask_comment(agentId, runId, request.comment)
        answer = submit_feedback_once(
            services.feedback_idempotency_store(), services.memory, agentId, runId, request.rating,
            comment, idempotency_key, lambda_context=router.lambda_context,
            on_created=lambda: count("FeedbackAccepted"),
        )
    return json_response(202, answer)


@router.get(
    "/v1/agents/<agentId>/memories",
    summary="The agent's lessons, newest first, each with its group of lessons teaching the same thing",
    description=(
        "Each lesson carries `group`: lessons of one rating whose editors teach the same thing (a paraphrase: "
        "close embeddings, the same quoted phrases, numbers and names, the same polarity, and no word of one "
        "replaced in the other) share a `groupId`, given once when the lesson is indexed and the same one "
        "`retrieve` answers with; `size` counts the group's members among the agent's newest "
        f"{WALL_GROUPING_WINDOW} lessons and the page's own. A 👍 and a 👎 teaching the same thing are a "
        "conflict, each naming the other in `conflictsWith`, and the older one names the newer (which "
        "`retrieve` injects) in `overruledBy`. Deleting a lesson leaves the rest of its group. With the "
        "embedder down the page still answers, `group` null and `degraded: [\"embedder\"]`."
    ),
    responses={200: {"description": "One page of lessons", "content": {"application/json": {
        "model": MemoryPageAnswer}}}},
)
def list_memories(
    agentId: PathId,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> dict[str, Any]:
    grouped = list_grouped(get_services().memory, agentId, limit, cursor)
    return {
        "items": [{**memory_json(m), "group": place_json(grouped.places[m.memory_id])} for m in grouped.page.items],
        "nextCursor": grouped.page.next_cursor,
        "degraded": grouped.degraded,
    }


@router.patch("/v1/agents/<agentId>/memories/<memoryId>", summary="Mark a lesson important or unimportant")
def patch_memory(agentId: PathId, memoryId: PathId, request: Annotated[MemoryPatchRequest, Body()]) -> dict[str, Any]:
    return memory_json(get_services().memory.set_importance(agentId, memoryId, request.importance))


@router.delete("/v1/agents/<agentId>/memories/<memoryId>", summary="Delete a lesson; it is never retrieved again")
def delete_memory(agentId: PathId, memoryId: PathId) -> Response[Any]:
    get_services().memory.delete_memory(agentId, memoryId)
    return no_content()


@router.delete(
    "/v1/agents/<agentId>/personal-data",
    summary="Erase the personal data of the agent's runs made without a userId",
    description=(
        "The personal data found in runs without a `userId` (their input and output, the feedback comments "
        "on them and the lessons made from them) is masked with tokens of the agent's own vault subject "
        "`_agent:<agentId>`. This destroys that subject's data key and vault entries: every such token stays a "
        "token for good, in every copy. Runs, feedback and lessons themselves stay (they hold tokens only). "
        "Idempotent; 204."
    ),
)
def erase_agent_personal_data(agentId: PathId) -> Response[Any]:
    # The agent's subject is erased like a user: its keys, then every part that keeps its records.
    get_services().erasure.erase_user(agent_subject(agentId))
    return no_content()


app = make_resolver(router)


@inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
