"""MemoryClient over real sockets: retries and typed errors against a scripted loopback server, and the
whole contract end to end against the local app (`agentmem serve`'s server, same handlers as AWS)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import botocore.session
import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.client import (
    ApiError,
    Conflict,
    Forbidden,
    MemoryClient,
    MemoryDisabled,
    NotFound,
    ServerError,
    Throttled,
    TooLarge,
    TransportError,
    UnexpectedResponse,
    ValidationError,
    converse_request,
    converse_text,
    with_memory,
)
from agentmem.local.server import create_app, make_http_server
from botocore.stub import Stubber
from botocore.validate import ParamValidator

AUDIT = "Audit this outdoor gear article for brand voice: our trail magic moments make every hike special."
SIMILAR = "Audit this hiking article for brand voice: trail magic moments keep every hike special."
COMMENT = "'Trail magic' is our brand's own idiom, used on purpose. Do not flag it."
HEALTH = {"status": "ok", "backend": "aws", "version": "0.1.0"}


# -- a scripted loopback server ------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    body: Any = None  # JSON-encoded unless bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    # Close the connection after answering without saying so, as a server dropping an idle keep-alive does.
    drop_connection: bool = False


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    """Answers requests in order from a script (or by a function of the request) and records them."""

    def __init__(self, script: list[Answer] | Callable[[Received], Answer]):
        self.requests: list[Received] = []
        self.connections = 0
        outer = self
        pending = list(script) if isinstance(script, list) else None

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                outer.connections += 1
                super().setup()

            def _serve(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                split = urlsplit(self.path)
                received = Received(
                    self.command,
                    split.path,
                    parse_qs(split.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None,
                )
                outer.requests.append(received)
                answer = pending.pop(0) if pending is not None else script(received)  # type: ignore[operator]
                time.sleep(answer.delay)
                payload = (
                    answer.body
                    if isinstance(answer.body, bytes)
                    else (b"" if answer.body is None else json.dumps(answer.body).encode())
                )
                self.send_response(answer.status)
                if payload:
                    self.send_header("Content-Type", "application/json")
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                if answer.drop_connection:
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that timed out and left is part of some tests

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def start(script: list[Answer] | Callable[[Received], Answer]) -> ScriptedServer:
        servers.append(ScriptedServer(script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def fast_client(url: str, **kwargs: Any) -> MemoryClient:
    return MemoryClient(url, backoff=0.01, max_backoff=0.05, **kwargs)


def error_body(code: str, message: str = "m", details: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or []}}


# -- retries -------------------------------------------------------------------------------------


def test_503_twice_then_200_is_retried_until_it_succeeds(scripted):
    server = scripted([Answer(503, error_body("backend_unavailable")), Answer(503), Answer(200, HEALTH)])
    assert fast_client(server.url, retries=3).health().status == "ok"
    assert len(server.requests) == 3


def test_retries_are_bounded_and_the_last_answer_is_raised(scripted):
    server = scripted(lambda _: Answer(503, error_body("backend_unavailable", "store down")))
    with pytest.raises(ServerError) as caught:
        fast_client(server.url, retries=2).health()
    assert len(server.requests) == 3
    assert (caught.value.status, caught.value.code, caught.value.message) == (503, "backend_unavailable", "store down")


def test_a_409_with_retry_after_for_a_key_in_progress_is_retried_and_gets_the_first_answer(scripted):
    receipt = {"feedbackId": "fb", "memoryId": "m", "status": "accepted"}
    server = scripted([
        Answer(409, error_body("conflict", "still being processed"), {"Retry-After": "1"}),
        Answer(202, receipt),
    ])
    slept: list[float] = []
    answer = MemoryClient(server.url, backoff=0.01, max_backoff=2.0, retries=3, sleep=slept.append).feedback(
        "auditor", "run-1", "up", idempotency_key="k-1")
    assert answer.feedback_id == "fb" and len(server.requests) == 2
    assert server.requests[0].headers["idempotency-key"] == server.requests[1].headers["idempotency-key"] == "k-1"
    assert slept == [1.0]  # waited what Retry-After said


def test_a_409_without_retry_after_is_final(scripted):
    reused = error_body("conflict", "this Idempotency-Key was used with a different body")
    server = scripted(lambda _: Answer(409, reused))
    with pytest.raises(Conflict):
        fast_client(server.url, retries=3).feedback("auditor", "run-1", "up", idempotency_key="k-1")
    assert len(server.requests) == 1


def test_retries_zero_sends_once(scripted):
    server = scripted(lambda _: Answer(503))
    with pytest.raises(ServerError):
        fast_client(server.url, retries=0).health()
    assert len(server.requests) == 1


def test_a_post_that_may_have_written_is_not_repeated_after_a_502(scripted):
    server = scripted([Answer(502, {"message": "Internal server error"}), Answer(201, {"runId": "run_2"})])
    with pytest.raises(ServerError) as caught:
        fast_client(server.url).record_run("auditor", "in", "out")
    assert caught.value.status == 502 and caught.value.message == "Internal server error"
    assert len(server.requests) == 1


def test_a_throttled_post_is_retried_because_it_was_never_carried_out(scripted):
    server = scripted(
        [Answer(429, {"message": "Too Many Requests"}, {"Retry-After": "0"}), Answer(201, {"runId": "r"})]
    )
    assert fast_client(server.url).record_run("auditor", "in", "out") == "r"
    assert len(server.requests) == 2
    server = scripted(lambda _: Answer(429, {"message": "Too Many Requests"}))
    with pytest.raises(Throttled):
        fast_client(server.url, retries=1).record_run("auditor", "in", "out")


def test_feedback_is_retried_with_one_generated_idempotency_key(scripted):
    receipt = {"feedbackId": "fb_1", "memoryId": "mem_1", "status": "accepted"}
    server = scripted([Answer(504), Answer(502), Answer(202, receipt)])
    answer = fast_client(server.url).feedback("auditor", "run_1", "down", "too formal")
    keys = {r.headers["idempotency-key"] for r in server.requests}
    assert len(server.requests) == 3 and keys == {answer.idempotency_key}
    assert answer.memory_id == "mem_1" and answer.status == "accepted"
    assert server.requests[0].body == {"rating": "down", "comment": "too formal"}


def test_feedback_sends_the_callers_idempotency_key_and_a_new_one_per_call(scripted):
    receipt = {"feedbackId": "fb_1", "status": "accepted"}
    server = scripted(lambda _: Answer(202, receipt))
    client = fast_client(server.url)
    assert client.feedback("a", "r", "up", idempotency_key="review-7").idempotency_key == "review-7"
    client.feedback("a", "r", "up")
    client.feedback("a", "r", "up")
    keys = [r.headers["idempotency-key"] for r in server.requests]
    assert keys[0] == "review-7" and len(set(keys)) == 3


def test_a_read_timeout_is_retried_for_a_get_but_not_for_a_post(scripted):
    server = scripted([Answer(200, HEALTH, delay=0.6), Answer(200, HEALTH)])
    assert fast_client(server.url, timeout=(1.0, 0.2)).health().status == "ok"
    assert len(server.requests) == 2

    server = scripted([Answer(201, {"runId": "r"}, delay=0.6), Answer(201, {"runId": "r2"})])
    slept: list[float] = []
    with pytest.raises(TransportError, match="no answer"):
        fast_client(server.url, timeout=(1.0, 0.2), sleep=slept.append).record_run("auditor", "in", "out")
    assert slept == [] and len(server.requests) == 1  # given up at the read timeout, no backoff, no second send


def test_a_refused_connection_is_retried_then_reported(scripted):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    slept: list[float] = []
    with pytest.raises(TransportError, match="could not connect"):
        fast_client(f"http://127.0.0.1:{port}", retries=2, sleep=slept.append).health()
    assert len(slept) == 2 and all(0 <= s <= 0.05 for s in slept)  # two retries, each within max_backoff


def test_connections_are_kept_alive_and_reopened_when_the_server_dropped_one(scripted):
    server = scripted(
        [
            Answer(200, HEALTH),
            Answer(200, HEALTH),
            Answer(200, HEALTH, drop_connection=True),
            Answer(201, {"runId": "run_after_reconnect"}),
        ]
    )
    client = fast_client(server.url, retries=0)
    for _ in range(3):
        client.health()
    assert server.connections == 1
    # Not retry-safe and retries=0, yet it goes through: a dropped idle connection never reached the server.
    assert client.record_run("auditor", "in", "out") == "run_after_reconnect"
    assert server.connections == 2 and len(server.requests) == 4


# -- typed errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "error_type", "code"),
    [
        (
            400,
            error_body(
                "validation_error",
                "2 invalid field(s)",
                [
                    {"field": "input", "message": "Field required"},
                    {"field": "topK", "message": "<= 10"},
                ],
            ),
            ValidationError,
            "validation_error",
        ),
        (403, error_body("memory_disabled", "agent x is not enabled"), MemoryDisabled, "memory_disabled"),
        (403, {"message": "Missing Authentication Token"}, Forbidden, "forbidden"),
        (404, error_body("not_found", "run not found"), NotFound, "not_found"),
        (409, error_body("conflict", "version 3 is not current"), Conflict, "conflict"),
        (413, error_body("too_large", "too big"), TooLarge, "too_large"),
        (405, error_body("method_not_allowed", "use GET"), ApiError, "method_not_allowed"),
        (500, b"Internal Server Error", ServerError, "internal_error"),
    ],
)
def test_error_answers_become_typed_exceptions_carrying_the_body(scripted, status, body, error_type, code):
    server = scripted(lambda _: Answer(status, body, {"x-amzn-RequestId": "req-42"}))
    with pytest.raises(ApiError) as caught:
        fast_client(server.url, retries=0).get_run("auditor", "run_1")
    error = caught.value
    assert type(error) is error_type and error.status == status and error.code == code
    assert error.request_id == "req-42"
    if isinstance(body, dict) and "error" in body:
        assert error.body == body and error.message == body["error"]["message"]
        assert error.details == body["error"]["details"]
    if error_type is ValidationError:
        assert error.fields == {"input": "Field required", "topK": "<= 10"}
    if error_type is MemoryDisabled:
        assert isinstance(error, Forbidden)
    if body == b"Internal Server Error":
        assert error.message == "Internal Server Error"


def test_a_success_that_is_not_the_contracts_json_is_an_unexpected_response(scripted):
    server = scripted([Answer(200, b"<html>proxy login</html>"), Answer(200, {"runId": "r"}), Answer(201, {})])
    client = fast_client(server.url, retries=0)
    with pytest.raises(UnexpectedResponse):
        client.health()
    with pytest.raises(UnexpectedResponse, match="Run"):
        client.get_run("auditor", "r")
    with pytest.raises(UnexpectedResponse, match="runId"):
        client.record_run("auditor", "in", "out")


# -- users' routes against synthetic answers (hand-written in the contract's shapes) ----------------

TURN_1 = {
    "seq": 1,
    "role": "user",
    "content": "I am {{PII_NAME_3f9a1c2b_1}}",
    "tokens": 8,
    "createdAt": "2026-01-02T03:04:05.000Z",
}
PROFILE_V3 = {
    "userId": "u:1",
    "markdown": "## Identity\n- Works at Acme",
    "version": 3,
    "updatedAt": "2026-01-02T03:04:05.000Z",
    "turnCount": 12,
    "source": "consolidation",
    "restoredFrom": None,
}
RECORDED: dict[tuple[str, str], Answer] = {
    ("POST", "/v1/users/u%3A1/threads/t-1/turns"): Answer(201, {"userId": "u:1", "threadId": "t-1", "turns": [TURN_1]}),
    ("GET", "/v1/users/u%3A1/threads/t-1/turns"): Answer(200, {"items": [TURN_1], "nextCursor": None}),
    ("POST", "/v1/users/u%3A1/threads/t-1/unmask"): Answer(200, {"text": "I am Ana"}),
    ("GET", "/v1/users/u%3A1/profile"): Answer(200, PROFILE_V3),
    ("PUT", "/v1/users/u%3A1/profile"): Answer(200, {**PROFILE_V3, "version": 4, "markdown": "## Identity\n- Ana"}),
    ("POST", "/v1/users/u%3A1/profile/versions/2/restore"): Answer(
        200, {**PROFILE_V3, "version": 5, "source": "restore", "restoredFrom": 2}
    ),
    ("GET", "/v1/users/u%3A1/facts"): Answer(
        200,
        {
            "items": [
                {
                    "factId": "fact_1",
                    "text": "User works at Acme",
                    "subject": "employer",
                    "status": "active",
                    "threadId": "t-1",
                    "sourceSeqs": [1],
                    "validFrom": "2026-01-01T00:00:00.000Z",
                    "validTo": None,
                },
            ],
            "nextCursor": None,
        },
    ),
    ("DELETE", "/v1/users/u%3A1/facts/fact_1"): Answer(204),
    ("DELETE", "/v1/users/u%3A1"): Answer(204),
}


def recorded_answer(request: Received) -> Answer:
    if request.path == "/v1/users/u%3A1/profile/versions":
        # Two pages, to show the client follows nextCursor.
        if request.query.get("cursor") == ["p2"]:
            return Answer(200, {"items": [{"version": 1, "source": "consolidation"}], "nextCursor": None})
        return Answer(200, {"items": [{"version": 3, "source": "user"}, {"version": 2}], "nextCursor": "p2"})
    return RECORDED.get((request.method, request.path), Answer(404, error_body("not_found")))


def test_user_routes_send_the_contracts_requests_and_read_its_answers(scripted):
    server = scripted(recorded_answer)
    client = fast_client(server.url, retries=0)

    [turn] = client.append_turns("u:1", "t-1", [("user", "I am Ana")])
    assert (turn.seq, turn.role, turn.content, turn.tokens) == (1, "user", TURN_1["content"], 8)
    assert server.requests[-1].body == {"turns": [{"role": "user", "content": "I am Ana"}]}
    page = client.list_turns("u:1", "t-1", limit=10, cursor="c1")
    assert [t.seq for t in page.items] == [1] and page.next_cursor is None
    assert server.requests[-1].query == {"limit": ["10"], "cursor": ["c1"]}
    assert client.unmask("u:1", "t-1", TURN_1["content"]) == "I am Ana"
    assert server.requests[-1].body == {"text": TURN_1["content"]}

    profile = client.get_profile("u:1")
    assert (profile.version, profile.turn_count, profile.updated_at.year) == (3, 12, 2026)
    edited = client.put_profile("u:1", "## Identity\n- Ana", if_match=profile.version)
    assert edited.version == 4
    assert server.requests[-1].headers["if-match"] == "3"
    assert server.requests[-1].body == {"markdown": "## Identity\n- Ana"}
    versions = client.profile_versions("u:1")
    assert [v.version for v in versions] == [3, 2, 1] and versions[0].source == "user"
    restored = client.restore_profile("u:1", 2)
    assert (restored.version, restored.source, restored.restored_from) == (5, "restore", 2)
    assert "if-match" not in server.requests[-1].headers

    [fact] = client.list_facts("u:1")
    assert (fact.fact_id, fact.text, fact.subject, fact.source_seqs) == (
        "fact_1",
        "User works at Acme",
        "employer",
        [1],
    )
    assert server.requests[-1].query == {}
    client.list_facts("u:1", include_superseded=True)
    assert server.requests[-1].query == {"includeSuperseded": ["true"]}
    assert client.delete_fact("u:1", "fact_1") is None
    assert client.erase_user("u:1") is None
    assert [(r.method, r.path) for r in server.requests][-2:] == [
        ("DELETE", "/v1/users/u%3A1/facts/fact_1"),
        ("DELETE", "/v1/users/u%3A1"),
    ]


def test_a_profile_edit_on_a_stale_version_raises_conflict_and_is_not_repeated(scripted):
    server = scripted(lambda _: Answer(409, error_body("conflict", "the profile is at version 4")))
    with pytest.raises(Conflict, match="version 4"):
        fast_client(server.url).put_profile("u1", "## Identity", if_match=3)
    assert len(server.requests) == 1


# -- end to end against the local app -------------------------------------------------------------

TOKEN = "local-test-token"


@dataclass
class Served:
    app: Any
    client: MemoryClient
    url: str


@pytest.fixture
def served(tmp_path: Path, minilm) -> Iterator[Served]:
    yield from _served(tmp_path, {"embedder": minilm})


@pytest.fixture
def served_with_structured_rules(tmp_path: Path, minilm) -> Iterator[Served]:
    """Served with the structured rules as its PII detector (no name detector)."""
    yield from _served(tmp_path, {"embedder": minilm, "pii_detector": RegexPiiDetector()})


def _served(tmp_path: Path, ports: dict[str, Any]) -> Iterator[Served]:
    app = create_app(tmp_path, start_worker=False, ports=ports, enabled_agents=["auditor", "writer"], api_token=TOKEN)
    server = make_http_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    client = MemoryClient(url, token=TOKEN, retries=0)
    try:
        yield Served(app, client, url)
    finally:
        client.close()
        server.shutdown()
        server.server_close()
        app.close()


def teach(served: Served, text: str = AUDIT, comment: str = COMMENT, rating: str = "down") -> str:
    """One run with an editor's verdict; the memory id of the lesson it becomes."""
    run = served.client.retrieve("auditor", text)
    served.client.set_output("auditor", run.run_id, "FLAG: 'trail magic' (cliché)")
    receipt = served.client.feedback("auditor", run.run_id, rating, comment)  # type: ignore[arg-type]
    assert receipt.status == "accepted" and receipt.memory_id
    return receipt.memory_id


def test_the_feedback_loop_end_to_end_through_the_client(served):
    client = served.client
    first = client.retrieve("auditor", AUDIT)
    assert first.memory == "enabled" and first.lessons == [] and first.messages == []
    client.set_output("auditor", first.run_id, "FLAG: 'trail magic' (cliché)")
    receipt = client.feedback("auditor", first.run_id, "down", COMMENT)
    assert served.app.worker.drain() >= 1

    second = client.retrieve("auditor", SIMILAR, token_budget=500)
    assert [lesson.memory_id for lesson in second.lessons] == [receipt.memory_id]
    assert second.lessons[0].rating == "down" and COMMENT in second.lessons[0].text
    assert "Lessons from past runs" in second.system_prompt and COMMENT in second.system_prompt
    assert 0 < second.tokens <= 500
    run = client.get_run("auditor", first.run_id)
    assert run.output == "FLAG: 'trail magic' (cliché)"
    assert [(f.memory_id, f.rating, f.comment) for f in run.feedback] == [(receipt.memory_id, "down", COMMENT)]
    assert client.get_run("auditor", second.run_id).injected_memory_ids == [receipt.memory_id]


def test_record_run_then_feedback_without_retrieve(served):
    run_id = served.client.record_run("writer", "Write a tagline", "Adventure awaits!")
    run = served.client.get_run("writer", run_id)
    assert (run.input, run.output, run.injected_memory_ids) == ("Write a tagline", "Adventure awaits!", [])
    assert served.client.feedback("writer", run_id, "up", "Short and on brand.").status == "accepted"


def test_one_idempotency_key_gives_one_memory_and_another_body_with_it_is_a_conflict(served):
    client = served.client
    run = client.retrieve("auditor", AUDIT)
    first = client.feedback("auditor", run.run_id, "down", COMMENT, idempotency_key="review-1")
    again = client.feedback("auditor", run.run_id, "down", COMMENT, idempotency_key="review-1")
    assert (again.feedback_id, again.memory_id) == (first.feedback_id, first.memory_id)
    assert [m.memory_id for m in client.iter_memories("auditor")] == [first.memory_id]
    with pytest.raises(Conflict):
        client.feedback("auditor", run.run_id, "up", idempotency_key="review-1")


def test_memories_page_newest_first_and_can_be_marked_and_deleted(served):
    client = served.client
    ids = [teach(served, comment=f"Lesson {i}: keep 'trail magic'.") for i in range(3)]
    served.app.worker.drain()

    page = client.list_memories("auditor", limit=2)
    assert [m.memory_id for m in page.items] == ids[::-1][:2] and page.next_cursor
    assert [m.memory_id for m in client.iter_memories("auditor", page_size=2)] == ids[::-1]
    assert all(m.agent_id == "auditor" and m.rating == "down" and m.digest for m in page.items)

    assert client.set_importance("auditor", ids[0], "important").importance == 1.5
    assert client.set_importance("auditor", ids[0], 0.5).importance == 0.5
    lessons = client.retrieve("auditor", SIMILAR, top_k=3).lessons
    marked = next(lesson for lesson in lessons if lesson.memory_id == ids[0])
    assert marked.score == pytest.approx(marked.similarity * 0.5, abs=1e-5)

    client.delete_memory("auditor", ids[0])
    assert ids[0] not in [lesson.memory_id for lesson in client.retrieve("auditor", SIMILAR, top_k=3).lessons]
    assert [m.memory_id for m in client.iter_memories("auditor")] == ids[:0:-1]
    with pytest.raises(NotFound):
        client.delete_memory("auditor", ids[0])


def test_the_contracts_errors_arrive_typed_from_the_real_server(served):
    client = served.client
    with pytest.raises(ValidationError) as caught:
        client.retrieve("auditor", "x", user_id="-x", token_budget=5, top_k=11)
    assert set(caught.value.fields) == {"userId", "tokenBudget", "topK"}
    with pytest.raises(ValidationError) as caught:
        client.set_importance("auditor", "mem-1", 2.5)
    assert caught.value.fields and all(f.startswith("importance") for f in caught.value.fields)
    disabled = client.retrieve("stranger", AUDIT)
    assert disabled.memory == "disabled" and disabled.lessons == []
    with pytest.raises(MemoryDisabled):
        client.feedback("stranger", disabled.run_id, "down")
    with pytest.raises(NotFound):
        client.feedback("auditor", "run-unknown", "down")
    with pytest.raises(NotFound):
        client.get_run("auditor", "run-unknown")
    with pytest.raises(TooLarge):
        client.retrieve("auditor", "x" * 600_000)
    with pytest.raises(Forbidden) as caught:
        MemoryClient(served.url, token="wrong", retries=0).health()
    assert caught.value.code == "forbidden"
    with pytest.raises(Forbidden):
        MemoryClient(served.url, retries=0).health()


def test_health_and_the_openapi_document(served):
    from functions.catalog import FUNCTIONS

    assert served.client.health().model_dump() == {"status": "ok", "backend": "local", "version": "0.1.0"}
    doc = served.client.openapi()
    assert doc["openapi"].startswith("3.")
    routes = {(m, t) for spec in FUNCTIONS if spec.name != "conversations" for m, t in spec.routes}
    for method, template in routes:
        assert method.lower() in doc["paths"][template], (method, template)


def test_with_memory_puts_lessons_in_front_records_the_output_and_returns_the_run(served):
    client = served.client
    seen: list[list[dict[str, str]]] = []

    def auditor(messages: list[dict[str, str]]) -> str:
        seen.append(messages)
        return "FLAG: 'trail magic' (cliché)"

    output, run_id = with_memory(client, "auditor", AUDIT, auditor, system="You audit brand voice.")
    assert seen[0] == [{"role": "system", "content": "You audit brand voice."}, {"role": "user", "content": AUDIT}]
    assert client.get_run("auditor", run_id).output == output
    receipt = client.feedback("auditor", run_id, "down", COMMENT)
    served.app.worker.drain()

    second = with_memory(client, "auditor", SIMILAR, auditor, system="You audit brand voice.")
    lessons, examples, own, user = seen[1]
    assert lessons["role"] == "system" and "Lessons from past runs" in lessons["content"]
    assert COMMENT in lessons["content"]
    # The run the lesson was given on is shown as data, in the user-role context block.
    assert examples["role"] == "user" and examples["content"].startswith("<user-memory>")
    assert own == {"role": "system", "content": "You audit brand voice."} and user == {
        "role": "user",
        "content": SIMILAR,
    }
    assert second.run_id != run_id and [x.memory_id for x in second.memory.lessons] == [receipt.memory_id]
    assert client.get_run("auditor", second.run_id).injected_memory_ids == [receipt.memory_id]


def test_with_memory_fails_open_when_asked_and_not_otherwise():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = MemoryClient(f"http://127.0.0.1:{port}", retries=0)
    calls: list[list[dict[str, str]]] = []

    def agent(messages: list[dict[str, str]]) -> str:
        calls.append(messages)
        return "done"

    with pytest.raises(TransportError):
        with_memory(down, "auditor", "hello", agent)
    assert calls == []
    ran = with_memory(down, "auditor", "hello", agent, fail_open=True)
    assert ran == ("done", None) and ran.memory is None
    assert calls == [[{"role": "user", "content": "hello"}]]


def test_converse_request_splits_system_and_keeps_roles_alternating():
    messages = [
        {"role": "system", "content": "## Lessons from past runs\n- keep 'trail magic'"},
        {"role": "assistant", "content": "Hello again."},
        {"role": "user", "content": "Earlier question"},
        {"role": "assistant", "content": "Earlier answer"},
        {"role": "system", "content": "You audit brand voice."},
        {"role": "user", "content": "   "},
        {"role": "user", "content": "Audit this."},
    ]
    request = converse_request(messages)
    assert [block["text"] for block in request["system"]] == [
        "## Lessons from past runs\n- keep 'trail magic'",
        "Earlier in this conversation the assistant said:\nHello again.",
        "You audit brand voice.",
    ]
    assert request["messages"] == [
        {"role": "user", "content": [{"text": "Earlier question"}]},
        {"role": "assistant", "content": [{"text": "Earlier answer"}]},
        {"role": "user", "content": [{"text": "Audit this."}]},
    ]
    # The arguments fit bedrock-runtime's Converse input as botocore's service model describes it.
    converse_input = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse")
    report = ParamValidator().validate({"modelId": "m", **request}, converse_input.input_shape)
    assert not report.has_errors(), report.generate_report()
    assert converse_request([{"role": "user", "content": "Hi"}]) == {
        "messages": [{"role": "user", "content": [{"text": "Hi"}]}]
    }


def test_turns_are_masked_unmasked_for_their_user_only_and_erased(served):
    client = served.client
    stored = client.append_turns(
        "ana",
        "t1",
        [
            ("user", "I'm Ana, write to ana.lopez@example.com"),
            {"role": "assistant", "content": "Noted, Ana."},
        ],
    )
    assert [t.seq for t in stored] == [1, 2]
    assert "ana.lopez@example.com" not in stored[0].content and "{{PII_EMAIL_" in stored[0].content
    assert [t.content for t in client.iter_turns("ana", "t1", page_size=1)] == [t.content for t in stored]
    assert client.unmask("ana", "t1", stored[0].content) == "I'm Ana, write to ana.lopez@example.com"
    client.append_turns("bob", "t1", [("user", "hello")])
    assert "ana.lopez@example.com" not in client.unmask("bob", "t1", stored[0].content)

    memory = client.retrieve("auditor", "What is my email?", user_id="ana", thread_id="t1")
    assert [m.content for m in memory.history] == [t.content for t in stored]

    client.erase_user("ana")
    with pytest.raises(NotFound):
        client.list_turns("ana", "t1")
    with pytest.raises(ValidationError) as caught:
        client.append_turns("ana", "t1", [("system", "")])
    assert caught.value.fields


def test_profiles_and_facts_end_to_end_edit_restore_delete_and_erase(served_with_structured_rules):
    # The employer is followed through consolidation and edits, so names are left to the structured
    # rules here: the local name detector would mask "Acme" (tests/unit/test_presidio_pii.py).
    served = served_with_structured_rules
    client = served.client
    assert client.get_profile("ana").version == 0
    client.append_turns("ana", "t1", [("user", "My name is Ana. I work at Acme. I live in Lisbon.")])
    served.app.worker.drain()  # consolidation runs on TurnsAppended

    learnt = client.get_profile("ana")
    assert learnt.version == 1 and learnt.source == "consolidation" and "Acme" in (learnt.markdown or "")
    facts = {f.text: f for f in client.list_facts("ana")}
    assert "User works at Acme" in facts and facts["User works at Acme"].source_seqs == [1]

    edited = client.put_profile("ana", (learnt.markdown or "").replace("Acme", "Globex"), if_match=learnt.version)
    assert (edited.version, edited.source) == (2, "user") and "Globex" in (edited.markdown or "")
    with pytest.raises(Conflict):
        client.put_profile("ana", learnt.markdown or "", if_match=learnt.version)
    assert [v.version for v in client.profile_versions("ana")] == [2, 1]
    restored = client.restore_profile("ana", 1)
    assert (restored.version, restored.restored_from) == (3, 1) and "Acme" in (restored.markdown or "")

    client.delete_fact("ana", facts["User works at Acme"].fact_id)
    assert "User works at Acme" not in {f.text for f in client.list_facts("ana")}
    client.erase_user("ana")
    assert client.list_facts("ana") == [] and client.get_profile("ana").version == 0


def test_the_bedrock_converse_example_of_the_docs_runs_with_memory(served):
    # Bedrock itself is botocore's Stubber (which checks requests and answers against the service model);
    # what is under test is with_memory and converse_request around it, against the real local app.
    bedrock = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    sent: list[dict[str, Any]] = []
    bedrock.meta.events.register(
        "provide-client-params.bedrock-runtime.Converse", lambda params, **_: sent.append(params)
    )
    stubber = Stubber(bedrock)
    for text in ("FLAG: 'trail magic' (cliché)", "No issues."):
        stubber.add_response(
            "converse",
            {
                "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
                "metrics": {"latencyMs": 100},
            },
        )

    def call_claude(messages: list[dict[str, str]]) -> str:
        response = bedrock.converse(
            modelId="anthropic.claude-3-5-haiku-20241022-v1:0",
            inferenceConfig={"maxTokens": 1024},
            **converse_request(messages),
        )
        return converse_text(response)

    client = served.client
    with stubber:
        output, run_id = with_memory(client, "auditor", AUDIT, call_claude, system="You audit brand voice.")
        client.feedback("auditor", run_id, "down", COMMENT)
        served.app.worker.drain()
        second = with_memory(client, "auditor", SIMILAR, call_claude, system="You audit brand voice.")

    assert output == "FLAG: 'trail magic' (cliché)" and second.output == "No issues."
    assert sent[0]["system"] == [{"text": "You audit brand voice."}]
    assert sent[0]["messages"] == [{"role": "user", "content": [{"text": AUDIT}]}]
    lessons, own = sent[1]["system"]
    assert "Lessons from past runs" in lessons["text"] and COMMENT in lessons["text"]
    assert own == {"text": "You audit brand voice."}
    assert client.get_run("auditor", second.run_id).output == "No issues."
