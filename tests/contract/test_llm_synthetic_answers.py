"""The model adapters against synthetic answers: Bedrock Converse (botocore Stubber) and an
OpenAI-compatible endpoint (a local HTTP server on 127.0.0.1 replaying chat-completions JSON).

The answers in tests/fixtures/llm/synthetic_*.json were written by hand in the shapes the services
document (Converse's response, OpenAI's chat completion), not recorded from a model: they check the
adapters' reading of those shapes, not what a model would say.

What is checked is what the adapters own: the request they build, the text they return,
retries on throttling, and a typed error for everything else.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
from agentmem.adapters.aws.bedrock_llm import BedrockConverseModel
from agentmem.adapters.llm.openai_llm import OpenAICompatibleModel
from agentmem.domain.facts import parse_extraction
from agentmem.domain.profile import interpret_rewrite
from agentmem.ports.llm import LlmOutOfFormat, LlmUnavailable
from botocore.stub import Stubber

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm"
MODEL_ID = "anthropic.claude-3-5-haiku-20241022-v1:0"
SYSTEM = "Task: rewrite-profile\nYou maintain a long-lived profile of one user."
MESSAGES = [{"role": "user", "content": "<current_profile>...</current_profile>"}]


def synthetic(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"synthetic_{name}").read_text())


# Bedrock Converse


@pytest.fixture
def bedrock(aws_credentials: None) -> Iterator[tuple[BedrockConverseModel, Stubber, list[float]]]:
    slept: list[float] = []
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    model = BedrockConverseModel(MODEL_ID, client, sleep=slept.append)
    with Stubber(client) as stubber:
        yield model, stubber, slept
        stubber.assert_no_pending_responses()


def converse_request(**overrides: Any) -> dict[str, Any]:
    return {
        "modelId": MODEL_ID,
        "system": [{"text": SYSTEM}],
        "messages": [{"role": "user", "content": [{"text": MESSAGES[0]["content"]}]}],
        "inferenceConfig": {"maxTokens": 2256, "temperature": 0.0},
        **overrides,
    }


def converse_response(text: str | None = None, stop: str = "end_turn") -> dict[str, Any]:
    response = synthetic("bedrock_converse_profile.json")
    response.pop("ResponseMetadata")
    if text is not None:
        response["output"]["message"]["content"] = [{"text": text}]
    response["stopReason"] = stop
    return response


def test_bedrock_sends_a_converse_request_and_returns_the_answer_text(bedrock):
    model, stubber, _ = bedrock
    stubber.add_response("converse", converse_response(), converse_request())

    answer = model.complete(SYSTEM, MESSAGES, max_tokens=2256)

    body = interpret_rewrite(answer)
    assert body is not None and "- Name: {{PII_PERSON_3f9a1c2b_1}}" in body


def test_bedrock_merges_consecutive_messages_of_one_role_as_converse_requires(bedrock):
    model, stubber, _ = bedrock
    messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    stubber.add_response(
        "converse", converse_response("NOOP"),
        converse_request(messages=[{"role": "user", "content": [{"text": "a"}, {"text": "b"}]}]),
    )
    assert model.complete(SYSTEM, messages, max_tokens=2256) == "NOOP"


def test_bedrock_retries_throttling_with_backoff_then_answers(bedrock):
    model, stubber, slept = bedrock
    stubber.add_client_error("converse", "ThrottlingException", "Too many requests", 429)
    stubber.add_client_error("converse", "ServiceUnavailableException", "Service unavailable", 503)
    stubber.add_response("converse", converse_response("NOOP"), converse_request())

    assert model.complete(SYSTEM, MESSAGES, max_tokens=2256) == "NOOP"
    assert len(slept) == 2 and slept[1] > 0


def test_bedrock_still_throttled_after_every_attempt_is_unavailable(bedrock):
    model, stubber, slept = bedrock
    for _ in range(model.max_attempts):
        stubber.add_client_error("converse", "ThrottlingException", "Too many requests", 429)
    with pytest.raises(LlmUnavailable) as caught:
        model.complete(SYSTEM, MESSAGES, max_tokens=2256)
    assert caught.value.part == "llm" and "ThrottlingException" in caught.value.message
    assert len(slept) == model.max_attempts - 1


def test_bedrock_stops_retrying_when_another_wait_would_pass_the_deadline(aws_credentials):
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    ticks = iter([0.0, 0.9])  # when the call starts, and when the first attempt has failed
    slept: list[float] = []
    model = BedrockConverseModel(MODEL_ID, client, deadline_seconds=1.0, sleep=slept.append,
                                 clock=lambda: next(ticks))
    with Stubber(client) as stubber:
        stubber.add_client_error("converse", "ThrottlingException", "Too many requests", 429)
        with pytest.raises(LlmUnavailable, match="after 1 attempts"):
            model.complete(SYSTEM, MESSAGES, max_tokens=2256)
    assert slept == []


def test_bedrock_does_not_retry_a_request_it_rejected(bedrock):
    model, stubber, slept = bedrock
    stubber.add_client_error("converse", "ValidationException", "The provided model identifier is invalid.", 400)
    with pytest.raises(LlmUnavailable, match="ValidationException"):
        model.complete(SYSTEM, MESSAGES, max_tokens=2256)
    assert slept == []


@pytest.mark.parametrize(("stop", "text"), [("max_tokens", "## Identity\n- Name"), ("end_turn", "  ")])
def test_bedrock_an_answer_cut_off_or_empty_is_out_of_format(bedrock, stop, text):
    model, stubber, _ = bedrock
    stubber.add_response("converse", converse_response(text, stop), converse_request())
    with pytest.raises(LlmOutOfFormat):
        model.complete(SYSTEM, MESSAGES, max_tokens=2256)


# OpenAI-compatible


class ReplayServer:
    """An HTTP server on 127.0.0.1 answering POSTs from a script of (status, headers, body, delay)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[tuple[int, dict[str, str], bytes, float]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                outer.requests.append({"path": self.path, "headers": dict(self.headers),
                                       "body": json.loads(self.rfile.read(length))})
                status, headers, body, delay = outer.script.pop(0)
                time.sleep(delay)
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, payload: Any, status: int = 200, headers: dict[str, str] | None = None,
               delay: float = 0.0) -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.script.append((status, headers or {}, body, delay))


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    replay = ReplayServer()
    replay.thread.start()
    yield replay
    replay.server.shutdown()
    replay.server.server_close()


def openai_model(server: ReplayServer, **kwargs: Any) -> tuple[OpenAICompatibleModel, list[float]]:
    slept: list[float] = []
    return OpenAICompatibleModel(server.base_url, "llama3.1:8b", sleep=slept.append, **kwargs), slept


def test_openai_posts_chat_completions_and_returns_the_message_content(server):
    server.answer(synthetic("openai_chat_completion_facts.json"))
    model, _ = openai_model(server, api_key="sk-local-test")

    answer = model.complete("Task: extract-facts", [{"role": "user", "content": "<new_turns>...</new_turns>"}],
                            max_tokens=1024)

    facts = parse_extraction(answer, [3])
    assert [f.subject for f in facts] == ["employer", "skill:kafka"]
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-local-test"
    assert request["body"] == {
        "model": "llama3.1:8b",
        "messages": [{"role": "system", "content": "Task: extract-facts"},
                     {"role": "user", "content": "<new_turns>...</new_turns>"}],
        "max_tokens": 1024, "temperature": 0.0, "stream": False,
    }


def test_openai_retries_429_honouring_retry_after_then_answers(server):
    server.answer({"error": {"message": "rate limited"}}, status=429, headers={"Retry-After": "2"})
    server.answer({"error": {"message": "loading model"}}, status=503)
    server.answer(synthetic("openai_chat_completion_facts.json"))
    model, slept = openai_model(server)

    assert model.complete("s", [{"role": "user", "content": "u"}], max_tokens=10).startswith('{"facts"')
    assert len(server.requests) == 3 and slept[0] == 2.0 and len(slept) == 2


def test_openai_a_rejected_request_fails_at_once_with_the_servers_message(server):
    server.answer({"error": {"message": "model 'llama9' not found"}}, status=404)
    model, slept = openai_model(server)
    with pytest.raises(LlmUnavailable, match="HTTP 404: model 'llama9' not found"):
        model.complete("s", [{"role": "user", "content": "u"}], max_tokens=10)
    assert len(server.requests) == 1 and slept == []


def test_openai_a_server_slower_than_the_timeout_is_unavailable_after_the_attempts(server):
    for _ in range(2):
        server.answer(synthetic("openai_chat_completion_facts.json"), delay=0.5)
    model, slept = openai_model(server, timeout=0.1, max_attempts=2)
    with pytest.raises(LlmUnavailable, match="after 2 attempts"):
        model.complete("s", [{"role": "user", "content": "u"}], max_tokens=10)
    assert len(slept) == 1


@pytest.mark.parametrize(
    "payload",
    [
        b"<html>502 Bad Gateway</html>",
        {"object": "chat.completion", "choices": []},
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": "## Identity"},
                      "finish_reason": "length"}]},
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]},
    ],
)
def test_openai_an_answer_that_is_not_a_usable_completion_is_out_of_format(server, payload):
    server.answer(payload)
    model, _ = openai_model(server)
    with pytest.raises(LlmOutOfFormat):
        model.complete("s", [{"role": "user", "content": "u"}], max_tokens=10)


def test_openai_base_url_and_model_are_checked_when_configured():
    with pytest.raises(ValueError, match="http"):
        OpenAICompatibleModel("file:///etc/passwd", "m")
    with pytest.raises(ValueError, match="openaiModel"):
        OpenAICompatibleModel("http://127.0.0.1:11434/v1", "")
