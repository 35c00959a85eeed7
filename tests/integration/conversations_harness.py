"""What the conversation-memory integration suites share: calling the handlers, recording the embedder,
and a randomised multi-tenant scenario checked against a model of what each user may see."""

from __future__ import annotations

import json
import os
import random
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from agentmem.domain.pii import find_tokens
from agentmem.local import apigateway
from agentmem.local.lambda_runtime import invoke
from agentmem.wiring import Services, build_services, set_services

# The identifier types whose every detected value must be masked (the "structured types").
STRUCTURED_ENTITY_TYPES = frozenset(
    {"EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "US_SSN", "IBAN_CODE", "IP_ADDRESS"}
)


class HandlerCaller:
    """Calls the real Lambda handlers with the API Gateway proxy event a request would become.

    Each call first installs `services`, so several tenants (one Services each, as one stack each
    in AWS) can be driven from one test.
    """

    def __init__(self, services: Services) -> None:
        self.services = services

    def __call__(
        self, method: str, path: str, body: Any = None, raw: str | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        set_services(self.services)
        found = apigateway.match(method, path.split("?", 1)[0])
        if found.route is None:
            return 404, None
        text = raw if raw is not None else (json.dumps(body) if body is not None else None)
        event = apigateway.proxy_event(
            found.route, found.path_parameters, method, path, {"Content-Type": "application/json", **(headers or {})},
            text,
            "127.0.0.1",
        )
        result = invoke(found.route.function, event)
        payload = result.get("body")
        return int(result["statusCode"]), (json.loads(payload) if payload else None)


@contextmanager
def local_services(data_dir: Path, embedder: Any = None) -> Iterator[Services]:
    """Services on the embedded backends in `data_dir` (a hashing embedder unless one is given), closed after."""
    from agentmem.config import load_settings

    built = build_services(load_settings(backend="local", data_dir=data_dir), embedder=embedder or HashingEmbedder())
    try:
        yield built
    finally:
        set_services(None)
        built.close()


# Fake credentials and a region for moto, so nothing can reach a real account.
MOTO_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
    "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true",
}


@contextmanager
def moto_environment() -> Iterator[None]:
    """Inside moto's mock, with fake credentials and no profile or endpoint of this machine's."""
    from moto import mock_aws

    saved = dict(os.environ)
    os.environ.update(MOTO_ENVIRONMENT)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        os.environ.pop(name, None)
    try:
        with mock_aws():
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class RecordingEmbedder:
    """An embedder that keeps every text it was given, in front of a real one (or a hashing one)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


class HashingEmbedder:
    """Cheap deterministic unit vectors from character trigrams: for tests that need no semantics."""

    model_id = "test/hashing-trigrams"
    dimension = 64

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower()}  "
            for i in range(len(padded) - 2):
                out[row, zlib.crc32(padded[i : i + 3].encode()) % self.dimension] += 1.0
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-9)
        return out


def append(call: HandlerCaller, user: str, thread: str, turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    status, answer = call(
        "POST", f"/v1/users/{user}/threads/{thread}/turns",
        {"turns": [{"role": role, "content": content} for role, content in turns]},
    )
    assert status == 201, answer
    stored: list[dict[str, Any]] = answer["turns"]
    return stored


def all_turns(call: HandlerCaller, user: str, thread: str, page_size: int = 200) -> list[dict[str, Any]] | None:
    """Every turn of a thread through the GET route, page by page; None when the thread is unknown (404)."""
    turns: list[dict[str, Any]] = []
    cursor = ""
    while True:
        status, page = call("GET", f"/v1/users/{user}/threads/{thread}/turns?limit={page_size}{cursor}")
        if status == 404:
            return None
        assert status == 200, page
        turns += page["items"]
        if page["nextCursor"] is None:
            return turns
        cursor = f"&cursor={page['nextCursor']}"


@dataclass
class IsolationModel:
    """What each (tenant, user) owns: their threads' masked turns, and what each of their tokens stands for."""

    turns: dict[tuple[str, str, str], list[dict[str, Any]]] = field(default_factory=dict)
    values: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    masked_texts: list[tuple[tuple[str, str], str]] = field(default_factory=list)

    def expected_unmask(self, tenant: str, user: str, text: str) -> str:
        own = self.values.get((tenant, user), {})
        out = text
        for token in {t.token for t in find_tokens(text)}:
            if token in own:
                out = out.replace(token, own[token])
        return out


def run_isolation_scenario(
    callers: dict[str, HandlerCaller], users: Sequence[str], threads: Sequence[str], seed: int, operations: int
) -> IsolationModel:
    """Random appends, reads, unmasks, retrieves and erasures over several tenants, users and threads.

    After every operation the answer is checked against the model: a read returns exactly the
    caller's own turns, an unmask restores exactly the caller's own tokens, an erase removes
    exactly the caller's data. Every value is unique to one (tenant, user), so any leak shows.
    """
    rng = random.Random(seed)
    model = IsolationModel()
    tenants = list(callers)
    serial = 0
    for _ in range(operations):
        tenant, user, thread = rng.choice(tenants), rng.choice(users), rng.choice(threads)
        call = callers[tenant]
        operation = rng.choices(["append", "read", "unmask", "retrieve", "erase"], [6, 2, 3, 1, 1])[0]
        if operation == "append":
            own = model.values.setdefault((tenant, user), {})
            if own and rng.random() < 0.3:
                email = rng.choice(sorted(own.values()))  # a value this user has used before
            else:
                serial += 1
                email = f"{user}.{tenant}.{serial}@example.com"
            # Short on purpose: moto's canned Comprehend answer would mask characters 50-58 of longer texts.
            stored = append(call, user, thread, [("user", f"Mail {email}")])
            tokens = find_tokens(stored[0]["content"])
            assert len(tokens) == 1 and email not in stored[0]["content"]
            own[tokens[0].token] = email
            model.turns.setdefault((tenant, user, thread), []).extend(stored)
            model.masked_texts.append(((tenant, user), stored[0]["content"]))
        elif operation == "read":
            expected = model.turns.get((tenant, user, thread))
            assert all_turns(call, user, thread) == expected
        elif operation == "unmask":
            picked = [text for _, text in rng.sample(model.masked_texts, min(4, len(model.masked_texts)))]
            text = " | ".join(picked) or "nothing to unmask"
            status, answer = call("POST", f"/v1/users/{user}/threads/{thread}/unmask", {"text": text})
            assert status == 200, answer
            assert answer["text"] == model.expected_unmask(tenant, user, text)
        elif operation == "retrieve":
            status, answer = call(
                "POST", "/v1/agents/agent-a/retrieve",
                {"input": "What did we talk about?", "userId": user, "threadId": thread, "tokenBudget": 4000},
            )
            assert status == 200, answer
            own_turns = [
                {"role": t["role"], "content": t["content"]} for t in model.turns.get((tenant, user, thread), [])
            ]
            assert answer["history"] == own_turns[len(own_turns) - len(answer["history"]) :]
        else:
            status, _ = call("DELETE", f"/v1/users/{user}")
            assert status == 204
            for key in [k for k in model.turns if k[:2] == (tenant, user)]:
                del model.turns[key]
            model.values.pop((tenant, user), None)
    # Finally every thread of every user reads back exactly as the model says.
    for tenant in tenants:
        for user in users:
            for thread in threads:
                assert all_turns(callers[tenant], user, thread) == model.turns.get((tenant, user, thread))
    return model


def check_a_crash_between_the_turns_and_the_idempotency_record(
    call: HandlerCaller, services: Services, monkeypatch: Any, user: str
) -> None:
    """An append whose turns are written but whose idempotency record never completes (the process died
    between the two writes), sent again with its key once that in-progress record has lapsed: the retry
    gets the turns the first one stored, and the thread holds them once."""
    from agentmem.local.lambda_runtime import LocalLambdaContext

    path = f"/v1/users/{user}/threads/t1/turns"
    body = {"turns": [{"role": "user", "content": "I moved to Porto."}, {"role": "assistant", "content": "Noted."}]}
    headers = {"Idempotency-Key": "crash-1"}
    store = services.turns_idempotency_store()

    def crash(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the process died before the idempotency record completed")

    # A crashed invocation's in-progress record lasts until its Lambda timeout; here that is a second in
    # the past, so the record has lapsed already when the retry comes (no waiting for a clock to pass it).
    monkeypatch.setattr(LocalLambdaContext, "get_remaining_time_in_millis", lambda self: -1000)
    with monkeypatch.context() as crashing:
        crashing.setattr(store, "save_success", crash)
        status, _ = call("POST", path, body, headers=headers)
    assert status >= 500
    stored_by_the_crashed_request = all_turns(call, user, "t1")
    assert stored_by_the_crashed_request is not None and len(stored_by_the_crashed_request) == 2

    status, answer = call("POST", path, body, headers=headers)
    assert status == 201, answer
    assert answer["turns"] == stored_by_the_crashed_request
    assert all_turns(call, user, "t1") == stored_by_the_crashed_request
    # From now on the completed record answers, with the same turns.
    assert call("POST", path, body, headers=headers) == (201, answer)
    status, error = call("POST", path, {"turns": [{"role": "user", "content": "Something else."}]}, headers=headers)
    assert status == 409 and error["error"]["code"] == "conflict"
    assert all_turns(call, user, "t1") == stored_by_the_crashed_request
