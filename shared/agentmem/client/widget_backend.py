"""The host application's side of the feedback widget: its two calls, forwarded to the tenant's API.

A page on the host's own origin cannot call the tenant API itself (SigV4 needs AWS credentials, which
never go to a browser; the local server refuses cross-site callers). So the widget's `endpoint` names
the host's backend, which checks its own user first (is this person an editor of this agent?) and then
hands the call to `forward_widget_call` with a `MemoryClient` that signs for the tenant
(`MemoryClient.for_stack("AgentMem-acme")`). Only the widget's two calls pass:

- `POST /v1/agents/{agentId}/runs/{runId}/feedback` with its `Idempotency-Key` (required here, so a
  retried click can never make two lessons);
- `GET /v1/agents/{agentId}/runs/{runId}`, answered with the run's feedback only (what the widget
  reads to follow the lesson), not its input and output.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, unquote

from agentmem.client.client import MemoryClient
from agentmem.client.errors import ApiError, TransportError

_ID = r"[^/]{1,400}"  # percent-encoded segment; the API itself checks the id rules
RUN_PATH = re.compile(rf"^/v1/agents/(?P<agent>{_ID})/runs/(?P<run>{_ID})$")
FEEDBACK_PATH = re.compile(rf"^/v1/agents/(?P<agent>{_ID})/runs/(?P<run>{_ID})/feedback$")
MAX_BODY_BYTES = 16 * 1024
Answer = tuple[int, dict[str, Any]]


def _error(status: int, code: str, message: str) -> Answer:
    return status, {"error": {"code": code, "message": message, "details": []}}


def forward_widget_call(
    memory: MemoryClient, method: str, path: str, body: bytes = b"", idempotency_key: str | None = None
) -> Answer:
    """The status and JSON body to answer one widget call with, `path` being the part after the endpoint."""
    method = method.upper()
    feedback, run = FEEDBACK_PATH.match(path), RUN_PATH.match(path)
    match = feedback or run
    if match is None:
        return _error(404, "not_found", "the feedback widget calls only a run and its feedback")
    agent_id, run_id = unquote(match["agent"]), unquote(match["run"])
    api_path = f"/v1/agents/{quote(agent_id, safe='')}/runs/{quote(run_id, safe='')}"
    try:
        if feedback and method == "POST":
            if not idempotency_key:
                return _error(400, "validation_error", "send the widget's Idempotency-Key header")
            if len(body) > MAX_BODY_BYTES:
                return _error(413, "too_large", f"a feedback body is at most {MAX_BODY_BYTES} bytes")
            try:
                payload = json.loads(body or b"null")
            except ValueError:
                return _error(400, "validation_error", "the body is not JSON")
            answer = memory.request("POST", f"{api_path}/feedback", json_body=payload,
                                    headers={"Idempotency-Key": idempotency_key})
            return 202, answer
        if run and method == "GET":
            answer = memory.request("GET", api_path)
            return 200, {"runId": answer.get("runId"), "feedback": answer.get("feedback", [])}
    except ApiError as exc:
        return exc.status, {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    except TransportError:
        return _error(502, "bad_gateway", "the memory service did not answer")
    return _error(405, "method_not_allowed", "use POST for feedback and GET for the run")
