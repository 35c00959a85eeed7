"""Conversation memory through the real handlers on the embedded backends: transcripts, the PII vault,
erasure, and history packed into `retrieve`'s token budget."""

from __future__ import annotations

import importlib.util
import itertools
import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.adapters.local.event_bus import SqliteEventBus
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.config import load_settings
from agentmem.domain.packing import message_tokens
from agentmem.domain.pii import find_tokens
from agentmem.local.lambda_runtime import invoke
from agentmem.local.worker import EventWorker
from agentmem.tokens import get_token_counter
from agentmem.wiring import Services, build_services, set_services
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import EVAL_DIR, load_event
from tests.integration.conversations_harness import (
    STRUCTURED_ENTITY_TYPES,
    HandlerCaller,
    HashingEmbedder,
    RecordingEmbedder,
    all_turns,
    append,
    check_a_crash_between_the_turns_and_the_idempotency_record,
    run_isolation_scenario,
)

EMAIL = "jane.doe@example.com"
PHONE = "+44 20 7946 0958"
CARD = "4111 1111 1111 1111"


@pytest.fixture(autouse=True)
def quiet_powertools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")


def make_services(data_dir: Path, embedder: Any = None, **overrides: Any) -> Services:
    settings_ = load_settings(backend="local", data_dir=data_dir, **overrides)
    return build_services(settings_, embedder=embedder or HashingEmbedder())


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    built = make_services(tmp_path / "data", enabled_agents=["agent-a"])
    yield built
    set_services(None)
    built.close()


@pytest.fixture
def call(services: Services) -> HandlerCaller:
    return HandlerCaller(services)


def row_counts(data_dir: Path) -> dict[str, int]:
    counts = {}
    for name, table in (("transcripts.db", "turns"), ("vault.db", "vault_entries"), ("keys.db", "data_keys")):
        with sqlite3.connect(data_dir / name) as conn:
            counts[f"{name}:{table}"] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    return counts


# Turns


def test_appended_turns_are_stored_masked_with_seq_and_token_count(call: HandlerCaller) -> None:
    status, answer = call("POST", "/v1/users/alice/threads/t1/turns", {"turns": [
        {"role": "user", "content": f"Mail {EMAIL} or call {PHONE}."},
        {"role": "assistant", "content": f"Noted: {EMAIL}."},
    ]})

    assert status == 201
    assert (answer["userId"], answer["threadId"]) == ("alice", "t1")
    first, second = answer["turns"]
    email, phone = (t.token for t in find_tokens(first["content"]))
    assert first["content"] == f"Mail {email} or call {phone}."
    assert second["content"] == f"Noted: {email}."
    assert email.startswith("{{PII_EMAIL_") and phone.startswith("{{PII_PHONE_")
    assert [t["seq"] for t in answer["turns"]] == [1, 2]
    assert [t["tokens"] for t in answer["turns"]] == [get_token_counter().count(t["content"]) for t in answer["turns"]]
    assert first["createdAt"].endswith("Z")


def test_turns_read_back_oldest_first_page_by_page(call: HandlerCaller) -> None:
    for n in range(5):
        append(call, "alice", "t1", [("user", f"question {n}"), ("assistant", f"answer {n}")])
    status, page = call("GET", "/v1/users/alice/threads/t1/turns?limit=4")
    assert status == 200 and [t["seq"] for t in page["items"]] == [1, 2, 3, 4]
    status, page = call("GET", f"/v1/users/alice/threads/t1/turns?limit=4&cursor={page['nextCursor']}")
    assert [t["content"] for t in page["items"]] == ["question 2", "answer 2", "question 3", "answer 3"]
    walked = all_turns(call, "alice", "t1", page_size=3)
    assert walked is not None and [t["seq"] for t in walked] == list(range(1, 11))


def test_an_unknown_thread_is_404_and_erasing_an_unknown_user_is_204(call: HandlerCaller) -> None:
    status, error = call("GET", "/v1/users/alice/threads/never/turns")
    assert status == 404 and error["error"]["code"] == "not_found"
    assert call("DELETE", "/v1/users/nobody")[0] == 204


def test_every_invalid_field_is_reported_at_once_and_nothing_is_written(
    call: HandlerCaller, services: Services
) -> None:
    append(call, "alice", "t1", [("user", f"hello {EMAIL}")])
    before = row_counts(services.settings.data_dir)

    status, error = call("POST", "/v1/users/-alice/threads/t 1/turns", {
        "turns": [{"role": "system", "content": "Lessons from past runs"}, {"role": "user", "content": ""}],
        "extra": 1,
    })
    assert status == 400 and error["error"]["code"] == "validation_error"
    assert {d["field"] for d in error["error"]["details"]} == {
        "userId", "threadId", "turns.0.role", "turns.1.content", "extra",
    }
    # One bad turn among good ones: the whole request is refused, the good turn is not stored.
    status, error = call("POST", "/v1/users/alice/threads/t2/turns", {"turns": [
        {"role": "user", "content": f"valid, with {CARD}"}, {"role": "tool", "content": "x"},
    ]})
    assert status == 400 and [d["field"] for d in error["error"]["details"]] == ["turns.1.role"]
    too_many = {"turns": [{"role": "user", "content": "x"}] * 51}
    assert [d["field"] for d in call("POST", "/v1/users/alice/threads/t2/turns", too_many)[1]["error"]["details"]] \
        == ["turns"]
    too_long = {"turns": [{"role": "user", "content": "x" * 32_001}]}
    assert call("POST", "/v1/users/alice/threads/t2/turns", too_long)[0] == 400
    assert call("POST", "/v1/users/alice/threads/t2/turns", {"turns": []})[0] == 400
    assert call("POST", "/v1/users/alice/threads/t2/turns", raw="{not json")[0] == 400
    for query, field in (("limit=0", "limit"), ("limit=201", "limit"), ("limit=ten", "limit"),
                         ("cursor=forged", "cursor")):
        status, error = call("GET", f"/v1/users/alice/threads/t1/turns?{query}")
        assert status == 400 and [d["field"] for d in error["error"]["details"]] == [field], query
    status, error = call("POST", "/v1/users/alice/threads/t1/unmask", {"txt": "x"})
    assert status == 400 and {d["field"] for d in error["error"]["details"]} == {"text", "txt"}
    assert call("POST", "/v1/users/alice/threads/t1/unmask", {"text": "x" * 100_001})[0] == 400
    assert call("DELETE", "/v1/users/not%20valid")[0] == 400

    assert row_counts(services.settings.data_dir) == before
    assert call("GET", "/v1/users/alice/threads/t2/turns")[0] == 404


# The vault


def test_unmask_restores_the_users_tokens_from_any_thread_and_never_another_users(call: HandlerCaller) -> None:
    alice_t1 = append(call, "alice", "t1", [("user", f"I am {EMAIL}")])[0]["content"]
    alice_t2 = append(call, "alice", "t2", [("user", f"card {CARD}")])[0]["content"]
    bob = append(call, "bob", "t1", [("user", "I am bob@example.org")])[0]["content"]
    text = f"{alice_t1} / {alice_t2} / {bob}"

    status, answer = call("POST", "/v1/users/alice/threads/t3/unmask", {"text": text})

    assert status == 200
    assert answer == {"text": f"I am {EMAIL} / card {CARD} / {bob}"}
    assert call("POST", "/v1/users/bob/threads/t1/unmask", {"text": text})[1]["text"] == (
        f"{alice_t1} / {alice_t2} / I am bob@example.org"
    )


def test_the_same_value_of_a_user_is_always_the_same_token_in_every_thread(call: HandlerCaller) -> None:
    first = append(call, "alice", "t1", [("user", f"{EMAIL}")])[0]["content"]
    again = append(call, "alice", "t1", [("assistant", f"Sent to {EMAIL}, {EMAIL}.")])[0]["content"]
    elsewhere = append(call, "alice", "t2", [("user", f"{EMAIL}")])[0]["content"]
    someone_else = append(call, "bob", "t1", [("user", f"{EMAIL}")])[0]["content"]
    assert again == f"Sent to {first}, {first}."
    assert elsewhere == first
    assert someone_else != first


def test_erasing_a_user_destroys_keys_and_records_and_leaves_others_whole(
    call: HandlerCaller, services: Services
) -> None:
    alice = append(call, "alice", "t1", [("user", f"I am {EMAIL}")])[0]["content"]
    append(call, "alice", "t2", [("user", "second thread")])
    bob = append(call, "bob", "t1", [("user", f"I am {EMAIL} too")])[0]["content"]

    assert call("DELETE", "/v1/users/alice")[0] == 204
    assert call("DELETE", "/v1/users/alice")[0] == 204

    assert call("GET", "/v1/users/alice/threads/t1/turns")[0] == 404
    assert call("GET", "/v1/users/alice/threads/t2/turns")[0] == 404
    assert call("POST", "/v1/users/alice/threads/t1/unmask", {"text": alice})[1]["text"] == alice
    retrieved = call("POST", "/v1/agents/agent-a/retrieve", {"input": "hi", "userId": "alice", "threadId": "t1"})[1]
    assert retrieved["history"] == []
    data = services.settings.data_dir
    with sqlite3.connect(data / "keys.db") as keys, sqlite3.connect(data / "vault.db") as vault:
        rows = (
            keys.execute("SELECT COUNT(*) FROM data_keys WHERE user_id='alice'").fetchone()[0],
            vault.execute("SELECT COUNT(*) FROM vault_entries WHERE user_id='alice'").fetchone()[0],
            keys.execute("SELECT COUNT(*) FROM data_keys WHERE user_id='bob'").fetchone()[0],
        )
    assert rows == (0, 0, 1)
    assert call("POST", "/v1/users/bob/threads/t1/unmask", {"text": bob})[1]["text"] == f"I am {EMAIL} too"


def test_the_key_file_is_owner_only(call: HandlerCaller, services: Services) -> None:
    append(call, "alice", "t1", [("user", f"I am {EMAIL}")])
    assert (services.settings.data_dir / "vault.key").stat().st_mode & 0o777 == 0o600


# Retrieve


def test_retrieve_gives_the_newest_turns_of_that_thread_and_writes_nothing_back(call: HandlerCaller) -> None:
    for n in range(30):
        append(call, "alice", "t1", [("user", f"question number {n} " + "detail " * 20)])
    append(call, "alice", "t2", [("user", "a turn of another thread")])
    before = all_turns(call, "alice", "t1")

    status, answer = call("POST", "/v1/agents/agent-a/retrieve",
                          {"input": "go on", "userId": "alice", "threadId": "t1", "tokenBudget": 300})

    assert status == 200
    contents = [t["content"] for t in answer["history"]]
    assert 0 < len(contents) < 30
    assert contents == [f"question number {n} " + "detail " * 20 for n in range(30 - len(contents), 30)]
    assert answer["messages"][-len(contents):] == answer["history"]
    assert answer["tokens"] == get_token_counter().count_messages(answer["messages"]) <= 300
    assert all_turns(call, "alice", "t1") == before  # the injected messages never go back in


# Sample events


def test_the_sample_events_run_through_the_handler(call: HandlerCaller, services: Services) -> None:
    set_services(services)
    appended = invoke("conversations", load_event("conversations/append_turns"))
    assert appended["statusCode"] == 201
    stored = json.loads(appended["body"])["turns"]
    assert "jane.doe@example.com" not in json.dumps(stored)

    listed = json.loads(invoke("conversations", load_event("conversations/list_turns"))["body"])
    assert [t["seq"] for t in listed["items"]] == [1] and listed["nextCursor"]

    unmask = load_event("conversations/unmask")
    unmask["body"] = json.dumps({"text": stored[1]["content"]})
    assert json.loads(invoke("conversations", unmask)["body"]) == {
        "text": "Will do: the invoice goes to jane.doe@example.com today."
    }

    invalid = invoke("conversations", load_event("conversations/append_invalid"))
    assert invalid["statusCode"] == 400
    assert {d["field"] for d in json.loads(invalid["body"])["error"]["details"]} == {
        "userId", "turns.0.role", "threadId",
    }
    assert invoke("conversations", load_event("conversations/erase_user"))["statusCode"] == 204
    assert invoke("conversations", load_event("conversations/list_turns"))["statusCode"] == 404


def test_the_openapi_document_lists_the_conversation_routes(call: HandlerCaller) -> None:
    status, document = call("GET", "/v1/openapi.json")
    assert status == 200
    for path in ("/v1/users/{userId}/threads/{threadId}/turns", "/v1/users/{userId}/threads/{threadId}/unmask",
                 "/v1/users/{userId}"):
        assert path in document["paths"], path


# Context packing: the property


LESSON_AGENTS = {"agent-none": 0, "agent-few": 2, "agent-many": 6}
PII_SNIPPETS = [f"mail {EMAIL}", f"call {PHONE}", f"card {CARD}", "ip 192.168.10.20", "ssn 536-22-1234"]
_user_numbers = itertools.count()


@pytest.fixture(scope="module")
def lesson_services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """A data folder whose agents have 0, 2 and 6 indexed lessons (long ones: they must be trimmed)."""
    import os

    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    built = make_services(
        tmp_path_factory.mktemp("packing"), enabled_agents=list(LESSON_AGENTS), eligibility_threshold=0.0
    )
    call = HandlerCaller(built)
    for agent, count in LESSON_AGENTS.items():
        for n in range(count):
            status, run = call("POST", f"/v1/agents/{agent}/runs", {"input": f"task {n}", "output": "draft"})
            assert status == 201
            comment = f"Lesson {n}: " + "never use passive voice in headlines, " * (8 * (n + 1))
            status, _ = call("POST", f"/v1/agents/{agent}/runs/{run['runId']}/feedback",
                             {"rating": "down", "comment": comment[:4000]})
            assert status == 202
    set_services(built)
    bus = built.memory.bus
    assert isinstance(bus, SqliteEventBus)
    EventWorker(bus).drain()
    yield built
    set_services(None)
    built.close()


turn_text = st.one_of(
    st.text(min_size=1, max_size=300),
    st.sampled_from(PII_SNIPPETS),
    st.builds(lambda words, n: " ".join(words) * n,
              st.lists(st.sampled_from(["the", "budget", "turn", "ümlaut", "数据", "🙂"]), min_size=1, max_size=8),
              st.integers(1, 40)),
)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    thread=st.lists(st.tuples(st.sampled_from(["user", "assistant"]), turn_text), max_size=60),
    budget=st.integers(min_value=100, max_value=3000),
    agent=st.sampled_from(sorted(LESSON_AGENTS)),
)
def test_packed_context_never_exceeds_the_budget_and_keeps_a_suffix_of_the_thread(
    lesson_services: Services, thread: list[tuple[str, str]], budget: int, agent: str
) -> None:
    call = HandlerCaller(lesson_services)
    user = f"user-{next(_user_numbers)}"
    for start in range(0, len(thread), 50):
        append(call, user, "t1", thread[start : start + 50])
    stored = [{"role": t["role"], "content": t["content"]} for t in all_turns(call, user, "t1") or []]

    status, answer = call("POST", f"/v1/agents/{agent}/retrieve",
                          {"input": "Write the next headline.", "userId": user, "threadId": "t1",
                           "tokenBudget": budget})

    assert status == 200, answer
    counter = get_token_counter()
    assert answer["tokens"] == counter.count_messages(answer["messages"]) <= budget
    history = answer["history"]
    # A suffix: no newer turn is ever dropped while an older one is kept, and no turn is cut.
    assert history == stored[len(stored) - len(history) :]
    if history:
        assert answer["messages"][-len(history) :] == history
    event("older turns dropped" if len(history) < len(stored) else "whole thread kept")
    if len(history) < len(stored):
        # ...and the suffix is as long as the budget allows: the next older turn would not fit.
        next_older = stored[len(stored) - len(history) - 1]
        priming = 0 if answer["messages"] else 3
        assert answer["tokens"] + priming + message_tokens(next_older, counter) > budget
    if LESSON_AGENTS[agent]:
        assert answer["lessons"] and answer["messages"][0]["role"] == "system"
        assert "Lessons from past runs" in answer["messages"][0]["content"].splitlines()[0]


# Isolation


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_read_unmask_or_erase_ever_touches_another_tenants_or_users_data(tmp_path: Path, seed: int) -> None:
    data_dir = tmp_path / "shared-data"  # both tenants in one data folder: only the keys keep them apart
    tenants = {name: make_services(data_dir, tenant=name) for name in ("acme", "globex")}
    try:
        run_isolation_scenario(
            {name: HandlerCaller(built) for name, built in tenants.items()},
            users=["alice", "bob", "carol"], threads=["t1", "t2"], seed=seed, operations=120,
        )
    finally:
        set_services(None)
        for built in tenants.values():
            built.close()


# No personal data at rest


def structured_values(texts: list[str]) -> set[str]:
    detector = RegexPiiDetector()
    return {
        span.value for text in texts for span in detector.detect(text) if span.entity_type in STRUCTURED_ENTITY_TYPES
    }


def test_no_detected_structured_value_is_at_rest_in_logs_or_sent_to_the_embedder(
    tmp_path: Path, minilm: Any, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    source = EVAL_DIR / "pii-dev.json"
    if not source.exists():
        pytest.skip(f"{source} is absent: the evaluation data lives next to the repository, not in it")
    records = json.loads(source.read_text())
    texts = [record["full_text"] for record in records]
    # Everything agentmem logs, down to DEBUG. (Powertools' own DEBUG line "Calling API Route Handler"
    # prints whole request bodies: its loggers stay at their production level here.)
    caplog.set_level(logging.DEBUG, logger="agentmem")
    embedder = RecordingEmbedder(minilm)
    data_dir = tmp_path / "data"
    built = make_services(data_dir, embedder=embedder, enabled_agents=["agent-a"])
    call = HandlerCaller(built)
    answers: list[Any] = []
    try:
        users, threads = ["u0", "u1", "u2", "u3", "u4"], ["t0", "t1", "t2"]
        slots = [(user, thread) for user in users for thread in threads]
        for index, start in enumerate(range(0, len(texts), 50)):
            user, thread = slots[index % len(slots)]
            batch = texts[start : start + 50]
            answers.append(append(call, user, thread, [(("user", "assistant")[i % 2], t) for i, t in enumerate(batch)]))
        for user, thread in slots:
            answers.append(all_turns(call, user, thread))
            status, retrieved = call("POST", "/v1/agents/agent-a/retrieve", {
                "input": "What should I remember from this conversation?", "userId": user, "threadId": thread,
            })
            assert status == 200
            answers.append(retrieved)
        if importlib.util.find_spec("functions.consolidate.handler") is not None:
            # Whatever consolidation does with the new turns (profile, facts, their embeddings) is covered too.
            set_services(built)
            bus = built.memory.bus
            assert isinstance(bus, SqliteEventBus)
            EventWorker(bus).drain(timeout=15)
    finally:
        set_services(None)
        built.close()

    values = structured_values(texts)
    assert len(values) > 100  # the file holds plenty: the check below is not vacuous
    at_rest = {path: path.read_bytes() for path in data_dir.rglob("*") if path.is_file()}
    assert {"transcripts.db", "vault.db"} <= {path.name for path in at_rest}
    captured = capfd.readouterr()
    logs = captured.out + captured.err + caplog.text
    sent_to_embedder = "\n".join(embedder.texts)
    answered = json.dumps(answers, ensure_ascii=False)
    leaks = sorted(
        (where, value)
        for value in values
        for where, haystack in (
            *((path.name, blob) for path, blob in at_rest.items()),
            ("logs", logs.encode()), ("embedder", sent_to_embedder.encode()), ("answers", answered.encode()),
        )
        if value.encode() in haystack
    )
    assert leaks == []
    assert embedder.texts  # the embedder was used, so its record is evidence


def test_a_crash_between_the_turns_and_the_idempotency_record_never_appends_twice_on_sqlite(
    call: HandlerCaller, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_a_crash_between_the_turns_and_the_idempotency_record(call, services, monkeypatch, "crashed")
