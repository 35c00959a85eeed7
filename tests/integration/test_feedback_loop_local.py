"""The feedback-learning loop through the real handlers, on the embedded backends."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from agentmem.local.server import create_app
from agentmem.tokens import get_token_counter

from tests.integration.local_client import LocalCaller

AUDIT = "Audit this outdoor gear article for brand voice: our trail magic moments make every hike special."
SIMILAR = "Audit this hiking article for brand voice: trail magic moments keep every hike special."
UNRELATED = "Summarise the quarterly tax filing obligations for a limited company in Germany."
COMMENT = "'Trail magic' is our brand's own idiom, used on purpose. Do not flag it."
# COMMENT's specifics and subject with the opposite polarity: the two can disagree (domain/teaching.py).
OPPOSING = "Always flag 'trail magic', our brand idiom."


class SwitchableEmbedder:
    """The real embedder behind a switch that makes it fail like an unreachable model endpoint."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.down = False

    def embed(self, texts):
        if self.down:
            raise ConnectionError("model endpoint unreachable")
        return self.inner.embed(texts)


@pytest.fixture
def embedder(minilm):
    return SwitchableEmbedder(minilm)


@pytest.fixture
def app(tmp_path: Path, embedder):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": embedder},
                     enabled_agents=["auditor", "writer"])
    yield app
    app.close()


@pytest.fixture
def call(app):
    return LocalCaller(app)


def run_with_feedback(call, app, agent="auditor", text=AUDIT, rating="down", comment=COMMENT, key=None):
    status, answer = call("POST", f"/v1/agents/{agent}/retrieve", {"input": text})
    assert status == 200
    run_id = answer["runId"]
    assert call("PUT", f"/v1/agents/{agent}/runs/{run_id}/output", {"output": "FLAG: 'trail magic' (cliché)"})[0] == 204
    headers = {"Idempotency-Key": key} if key else None
    status, receipt = call("POST", f"/v1/agents/{agent}/runs/{run_id}/feedback",
                           {"rating": rating, "comment": comment}, headers)
    assert status == 202, receipt
    return run_id, receipt


def test_a_thumbs_down_becomes_a_lesson_injected_into_the_next_similar_run(app, call):
    run_id, receipt = run_with_feedback(call, app)
    assert receipt["status"] == "accepted"
    assert app.worker.drain() >= 1

    status, answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})

    assert status == 200 and answer["memory"] == "enabled"
    assert [lesson["memoryId"] for lesson in answer["lessons"]] == [receipt["memoryId"]]
    lesson = answer["lessons"][0]
    assert lesson["rating"] == "down" and COMMENT in lesson["text"]
    assert lesson["score"] == pytest.approx(lesson["similarity"])
    system = answer["messages"][0]
    assert system["role"] == "system" and "Lessons from past runs" in system["content"]
    assert "Mistakes to avoid" in system["content"] and COMMENT in system["content"]
    assert 0 < answer["tokens"] <= 2000
    # The run records which lessons it was shown.
    status, run = call("GET", f"/v1/agents/auditor/runs/{answer['runId']}")
    assert run["injectedMemoryIds"] == [receipt["memoryId"]]
    status, first = call("GET", f"/v1/agents/auditor/runs/{run_id}")
    assert first["feedback"][0]["comment"] == COMMENT and first["output"].startswith("FLAG")


def test_an_unrelated_input_gets_no_lesson(app, call):
    run_with_feedback(call, app)
    app.worker.drain()
    status, answer = call("POST", "/v1/agents/auditor/retrieve", {"input": UNRELATED})
    assert status == 200 and answer["lessons"] == [] and answer["messages"] == []


def test_thumbs_up_is_a_pattern_to_keep(app, call):
    run_with_feedback(call, app, rating="up", comment="Good catch of the passive voice; keep doing this.")
    app.worker.drain()
    answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]
    assert answer["lessons"][0]["rating"] == "up"
    assert "Validated patterns to keep" in answer["messages"][0]["content"]


def test_lessons_never_cross_agents(app, call):
    run_with_feedback(call, app, agent="auditor")
    app.worker.drain()
    answer = call("POST", "/v1/agents/writer/retrieve", {"input": AUDIT})[1]
    assert answer["memory"] == "enabled" and answer["lessons"] == []


def test_a_disabled_agent_still_gets_an_answer_but_no_memory_and_cannot_take_feedback(app, call):
    status, answer = call("POST", "/v1/agents/stranger/retrieve", {"input": AUDIT})
    assert status == 200 and answer["memory"] == "disabled" and answer["lessons"] == []
    status, error = call("POST", f"/v1/agents/stranger/runs/{answer['runId']}/feedback", {"rating": "down"})
    assert status == 403 and error["error"]["code"] == "memory_disabled"


def test_the_same_idempotency_key_gives_the_same_answer_and_one_memory(app, call):
    run_id, first = run_with_feedback(call, app, key="review-1")
    for _ in range(3):
        status, again = call("POST", f"/v1/agents/auditor/runs/{run_id}/feedback",
                             {"rating": "down", "comment": COMMENT}, {"Idempotency-Key": "review-1"})
        assert status == 202 and again == first
    items = call("GET", "/v1/agents/auditor/memories")[1]["items"]
    assert [m["memoryId"] for m in items] == [first["memoryId"]]
    status, error = call("POST", f"/v1/agents/auditor/runs/{run_id}/feedback",
                         {"rating": "up"}, {"Idempotency-Key": "review-1"})
    assert status == 409 and error["error"]["code"] == "conflict"


class CountingDetector:
    """The real local detector, counting the texts it is shown."""

    def __init__(self) -> None:
        from agentmem.adapters.local.presidio_pii import LocalPiiDetector

        self.inner = LocalPiiDetector()
        self.texts: list[str] = []

    def detect(self, text):
        self.texts.append(text)
        return self.inner.detect(text)


def test_a_keyed_feedback_comment_is_masked_once_and_stored_as_an_unkeyed_one_is(tmp_path: Path, embedder):
    detector = CountingDetector()
    app = create_app(tmp_path, start_worker=False, ports={"embedder": embedder, "pii_detector": detector},
                     enabled_agents=["auditor"])
    call = LocalCaller(app)
    comment = "Ask Maria Gonzalez before flagging 'trail magic'; she owns the brand voice."
    try:
        stored = []
        for key in ("review-1", None):
            run = {"input": AUDIT, "output": "FLAG: trail magic"}
            run_id = call("POST", "/v1/agents/auditor/runs", run)[1]["runId"]
            detector.texts.clear()
            headers = {"Idempotency-Key": key} if key else None
            status, receipt = call("POST", f"/v1/agents/auditor/runs/{run_id}/feedback",
                                   {"rating": "down", "comment": comment}, headers)
            assert status == 202
            assert detector.texts == [comment]  # the raw comment, once; never its masked form again
            memory = app.services.memory.store.get_memory(app.settings.tenant, "auditor", receipt["memoryId"])
            stored.append(memory.comment)
        assert stored[0] == stored[1] and "Maria" not in stored[0] and "{{PII_PERSON_" in stored[0]
    finally:
        app.close()


def test_feedback_on_an_unknown_run_is_404_and_writes_nothing(app, call):
    status, error = call("POST", "/v1/agents/auditor/runs/run-unknown/feedback", {"rating": "down"})
    assert status == 404 and error["error"]["code"] == "not_found"
    assert call("GET", "/v1/agents/auditor/memories")[1]["items"] == []


def test_every_invalid_field_is_reported_at_once_and_nothing_is_written(app, call, tmp_path):
    before = _row_counts(tmp_path)
    status, error = call("POST", "/v1/agents/bad agent!/retrieve",
                         {"input": 7, "tokenBudget": 5, "topK": 11, "userId": "-x", "surprise": True})
    assert status == 400 and error["error"]["code"] == "validation_error"
    fields = {d["field"] for d in error["error"]["details"]}
    assert fields == {"agentId", "input", "tokenBudget", "topK", "userId", "surprise"}
    status, error = call("POST", "/v1/agents/auditor/runs/run-1/feedback", {"rating": "meh", "comment": "x" * 4001})
    assert status == 400 and {d["field"] for d in error["error"]["details"]} == {"rating", "comment"}
    status, error = call("POST", "/v1/agents/auditor/retrieve", {"input": "x" * 32_001})
    assert status == 400 and error["error"]["details"][0]["field"] == "input"
    status, error = call("POST", "/v1/agents/auditor/retrieve", raw=b"{not json")
    assert status == 400 and error["error"]["details"] == [{"field": "body", "message": "the body is not valid JSON"}]
    status, error = call("POST", "/v1/agents/auditor/retrieve", raw=b'{"input": "' + b"x" * 600_000 + b'"}')
    assert status == 413 and error["error"]["code"] == "too_large"
    status, error = call("PATCH", "/v1/agents/auditor/memories/mem-1", {"importance": 2.5})
    assert status == 400
    status, error = call("GET", "/v1/agents/auditor/memories?limit=0&cursor=")
    assert status == 400 and error["error"]["details"][0]["field"] == "limit"
    assert _row_counts(tmp_path) == before


def test_input_at_the_limit_is_accepted(call):
    assert call("POST", "/v1/agents/auditor/retrieve", {"input": "x" * 32_000})[0] == 200


def test_importance_multiplies_the_score_but_not_eligibility(app, call):
    _, receipt = run_with_feedback(call, app)
    app.worker.drain()
    memory_id = receipt["memoryId"]
    status, memory = call("PATCH", f"/v1/agents/auditor/memories/{memory_id}", {"importance": "important"})
    assert status == 200 and memory["importance"] == 1.5
    lesson = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]["lessons"][0]
    assert lesson["score"] == pytest.approx(lesson["similarity"] * 1.5, abs=1e-5)
    call("PATCH", f"/v1/agents/auditor/memories/{memory_id}", {"importance": 0})
    lesson = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]["lessons"][0]
    assert lesson["score"] == 0 and lesson["similarity"] >= 0.30
    assert call("PATCH", "/v1/agents/auditor/memories/mem-missing", {"importance": "neutral"})[0] == 404


def test_a_more_important_lesson_outranks_a_more_similar_one(app, call):
    _, close = run_with_feedback(call, app, text=SIMILAR, comment="Close lesson.")
    _, far = run_with_feedback(call, app, text=AUDIT + " Also check the product names.", comment="Far lesson.")
    app.worker.drain()
    call("PATCH", f"/v1/agents/auditor/memories/{far['memoryId']}", {"importance": 2})
    lessons = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]["lessons"]
    assert [x["memoryId"] for x in lessons] == [far["memoryId"], close["memoryId"]]
    assert lessons[0]["similarity"] < lessons[1]["similarity"]


def test_a_deleted_lesson_is_never_retrieved_again(app, call):
    _, receipt = run_with_feedback(call, app)
    app.worker.drain()
    assert call("DELETE", f"/v1/agents/auditor/memories/{receipt['memoryId']}")[0] == 204
    assert call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]["lessons"] == []
    assert call("GET", "/v1/agents/auditor/memories")[1]["items"] == []
    assert call("DELETE", f"/v1/agents/auditor/memories/{receipt['memoryId']}")[0] == 404


def test_lessons_older_than_max_age_are_not_eligible(app, call):
    run_with_feedback(call, app)
    app.worker.drain()
    real_clock = app.services.memory.clock
    app.services.memory.clock = lambda: real_clock() + 91 * 86_400
    assert call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]["lessons"] == []


def test_memories_page_newest_first_with_a_cursor(app, call):
    ids = [run_with_feedback(call, app, comment=f"lesson {i}")[1]["memoryId"] for i in range(5)]
    seen, cursor = [], None
    while True:
        path = "/v1/agents/auditor/memories?limit=2" + (f"&cursor={cursor}" if cursor else "")
        status, page = call("GET", path)
        assert status == 200 and len(page["items"]) <= 2
        seen += [m["memoryId"] for m in page["items"]]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert seen == list(reversed(ids))
    status, error = call("GET", "/v1/agents/auditor/memories?cursor=garbage!!")
    assert status == 400 and error["error"]["details"][0]["field"] == "cursor"


def test_a_failed_embedder_degrades_retrieve_and_feedback_is_indexed_once_it_recovers(app, call, embedder):
    _run_id, receipt = run_with_feedback(call, app)
    embedder.down = True
    status, answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})
    assert status == 200 and answer["degraded"] == ["embedder"] and answer["lessons"] == []
    assert app.worker.drain() == 0  # the indexer failed; the event waits for a retry
    assert call("GET", "/v1/agents/auditor/memories")[1]["items"][0]["status"] == "pending"
    embedder.down = False
    app.worker.base_delay = 0
    _make_due_now(app)
    assert app.worker.drain() >= 1
    lessons = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]["lessons"]
    assert [x["memoryId"] for x in lessons] == [receipt["memoryId"]]


def test_a_failed_vector_index_degrades_retrieve(app, call):
    run_with_feedback(call, app)
    app.worker.drain()
    index = app.services.memory.vectors.inner
    original = index.search
    index.search = lambda query: (_ for _ in ()).throw(OSError("index unreachable"))
    try:
        status, answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})
    finally:
        index.search = original
    assert status == 200 and answer["degraded"] == ["vectors"] and answer["lessons"] == []


def test_killing_the_server_between_feedback_and_indexing_loses_nothing(tmp_path, embedder):
    first = create_app(tmp_path, start_worker=False, ports={"embedder": embedder}, enabled_agents=["auditor"])
    _, receipt = run_with_feedback(LocalCaller(first), first)
    first.close()  # stopped before the worker ever ran: the event is only on disk

    second = create_app(tmp_path, start_worker=False, ports={"embedder": embedder}, enabled_agents=["auditor"])
    try:
        assert second.worker.drain() >= 1
        lessons = LocalCaller(second)("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]["lessons"]
        assert [x["memoryId"] for x in lessons] == [receipt["memoryId"]]
    finally:
        second.close()


def test_the_background_worker_indexes_feedback_without_help(tmp_path, embedder, monkeypatch):
    from tests.integration.indexer_watch import after_indexing, watch_indexer

    indexed = watch_indexer(monkeypatch)
    app = create_app(tmp_path, ports={"embedder": embedder}, enabled_agents=["auditor"])
    try:
        call = LocalCaller(app)
        _, receipt = run_with_feedback(call, app)
        lessons = after_indexing(
            indexed, lambda: call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]["lessons"])
        assert [x["memoryId"] for x in lessons] == [receipt["memoryId"]]
    finally:
        app.close()


def test_the_openapi_document_lists_every_route_of_the_catalog(call):
    from functions.catalog import FUNCTIONS

    status, doc = call("GET", "/v1/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.")
    for spec in FUNCTIONS:
        for method, template in spec.routes:
            assert method.lower() in doc["paths"][template], (method, template)
            responses = doc["paths"][template][method.lower()]["responses"]
            assert "422" not in responses and responses["400"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"}
    feedback = doc["paths"]["/v1/agents/{agentId}/runs/{runId}/feedback"]["post"]["responses"]
    assert "202" in feedback and "200" not in feedback
    assert set(doc["components"]["securitySchemes"]) == {"sigv4", "bearer"}


def test_unknown_routes_and_methods_get_the_contract_error(call):
    status, error = call("GET", "/v1/nothing-here")
    assert status == 404 and error["error"]["code"] == "not_found"
    status, error = call("DELETE", "/v1/health")
    assert status == 405


def test_the_embedding_of_a_repeated_input_is_computed_once(app, call, minilm):
    call("POST", "/v1/agents/auditor/retrieve", {"input": "a repeated input, seen twice"})
    before = minilm.texts_encoded
    call("POST", "/v1/agents/auditor/retrieve", {"input": "a repeated input, seen twice"})
    assert minilm.texts_encoded == before


def _make_due_now(app) -> None:
    with sqlite3.connect(app.settings.data_dir / "events.db") as conn:
        conn.execute("UPDATE events SET next_attempt_at = 0 WHERE status = 'pending'")
        conn.execute("UPDATE deliveries SET next_attempt_at = 0 WHERE status = 'pending'")


def _row_counts(data_dir: Path) -> dict[str, int]:
    counts = {}
    with sqlite3.connect(data_dir / "agentmem.db") as conn:
        for table in ("runs", "feedback", "memories"):
            counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    with sqlite3.connect(data_dir / "events.db") as conn:
        counts["events"] = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    return counts


def test_similarity_scores_are_cosines(minilm):
    a, b = minilm.embed([AUDIT, SIMILAR])
    assert np.isclose(np.linalg.norm(a), 1, atol=1e-5) and 0.30 <= float(a @ b) <= 1


def test_a_bad_importance_is_reported_under_its_own_field_name(call):
    status, error = call("PATCH", "/v1/agents/auditor/memories/mem-1", {"importance": "huge"})
    assert status == 400
    assert [d["field"] for d in error["error"]["details"]] == ["importance"]


def test_agents_are_listed_with_their_memory_switch(app, call):
    run_with_feedback(call, app, agent="auditor")
    status, answer = call("GET", "/v1/agents")
    assert status == 200
    assert answer["items"] == [{"agentId": "auditor", "memory": "enabled"}, {"agentId": "writer", "memory": "enabled"}]


def test_personal_data_in_a_users_retrieve_input_is_masked_before_it_is_recorded_or_embedded(app, call, minilm):
    embedded: list[str] = []
    original = minilm.embed

    def recording(texts):
        embedded.extend(texts)
        return original(texts)

    minilm.embed = recording
    try:
        status, answer = call("POST", "/v1/agents/auditor/retrieve",
                              {"input": "Email jane.doe@example.com about the audit", "userId": "user-1"})
    finally:
        del minilm.embed
    assert status == 200
    run = call("GET", f"/v1/agents/auditor/runs/{answer['runId']}")[1]
    assert "jane.doe@example.com" not in run["input"] and "{{PII_EMAIL_" in run["input"]
    assert embedded and all("jane.doe@example.com" not in text for text in embedded)
    restored = call("POST", "/v1/users/user-1/threads/retrieve-inputs/unmask", {"text": run["input"]})[1]
    assert restored["text"] == "Email jane.doe@example.com about the audit"


def test_a_json_body_sent_as_another_media_type_is_415_and_records_no_run(app):
    # `curl -d '{...}'` sends application/x-www-form-urlencoded unless told otherwise: it is not read.
    before = len(app.services.memory.store.list_runs(app.settings.tenant, "auditor", limit=100).items)
    for content_type in ("application/x-www-form-urlencoded", "text/plain", None):
        headers = {"Content-Type": content_type} if content_type else {}
        status, _, body = app.handle("POST", "/v1/agents/auditor/retrieve", headers, b'{"input": "hello"}', "x")
        assert status == 415 and json.loads(body)["error"]["code"] == "unsupported_media_type", body
    assert len(app.services.memory.store.list_runs(app.settings.tenant, "auditor", limit=100).items) == before


def test_a_disabled_agents_retrieve_records_no_input_text(app, call):
    status, answer = call("POST", "/v1/agents/stranger/retrieve", {"input": AUDIT})
    assert status == 200 and answer["memory"] == "disabled"
    run = app.services.memory.get_run("stranger", answer["runId"])
    assert run.input == ""
    with sqlite3.connect(app.settings.data_dir / "agentmem.db") as db:
        assert not db.execute("SELECT 1 FROM runs WHERE input LIKE '%trail magic%'").fetchall()


# Three different points (near-duplicates would be folded into one bullet: see the grouping tests).
LONG_COMMENTS = [
    "'Trail magic' is our idiom; never flag it. " + "Read the whole style guide before flagging anything. " * 12,
    "Sentences over thirty words lose readers; split them. " + "Our voice is warm and plain. " * 12,
    "Report the number of flags at the top of the audit. " + "Group the flags by section. " * 12,
]


def test_lessons_in_the_answer_the_run_and_the_counts_are_exactly_those_in_the_messages(app, call):
    made = []
    for rating, comment in zip(("up", "down", "down"), LONG_COMMENTS, strict=True):
        _, receipt = run_with_feedback(call, app, rating=rating, comment=comment)
        made.append(receipt["memoryId"])
    assert app.worker.drain() >= 3
    # The 👍 lesson scores best; the message still shows it after the 👎 ones, but it is never cut first.
    assert call("PATCH", f"/v1/agents/auditor/memories/{made[0]}", {"importance": "important"})[0] == 200
    for other in made[1:]:
        assert call("PATCH", f"/v1/agents/auditor/memories/{other}", {"importance": 0.5})[0] == 200
    full = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR, "tokenBudget": 4000})[1]
    ranked = full["lessons"]
    assert len(ranked) == 3 and ranked[0]["memoryId"] == made[0] and ranked[0]["rating"] == "up"
    # A few tokens short of the system message with all three bullets (each is about 120): room for the
    # best two only (the run examples of the context message give way first, then the third bullet).
    system_tokens = get_token_counter().count_messages([full["messages"][0]])
    status, answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR, "tokenBudget": system_tokens - 20})
    assert status == 200
    kept = [lesson["memoryId"] for lesson in answer["lessons"]]
    assert len(kept) == 2
    assert kept == [lesson["memoryId"] for lesson in ranked[: len(kept)]]  # by score, 👍 or 👎
    system = answer["messages"][0]["content"]
    for lesson in ranked:
        assert (lesson["text"] in system) == (lesson["memoryId"] in kept)
    run = app.services.memory.get_run("auditor", answer["runId"])
    assert run.injected_memory_ids == kept
    store = app.services.memory.store
    counts = {m.memory_id: m.injected_count for m in store.get_memories(app.settings.tenant, "auditor", made)}
    # Once by the 4,000-token retrieve (all three), once more by this one (only the kept ones).
    assert counts == {memory_id: 2 if memory_id in kept else 1 for memory_id in made}


AGREEING = [  # three editors, one teaching, in their own words (domain/teaching.py merges them)
    COMMENT,
    "Do not flag 'trail magic': it is our brand idiom.",
    "'Trail magic' is a brand idiom we use on purpose; don't flag it.",
]


def test_near_duplicate_lessons_are_injected_as_one_bullet_naming_its_editors(app, call):
    made = [run_with_feedback(call, app, comment=c)[1]["memoryId"] for c in AGREEING]
    app.worker.drain()
    answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]
    system = answer["messages"][0]["content"]
    assert system.count("\n- ") == 1 and "(given by 3 editors)" in system
    # Every member was injected: listed, recorded on the run and counted; all name the bullet's lesson.
    assert sorted(lesson["memoryId"] for lesson in answer["lessons"]) == sorted(made)
    assert {lesson["groupId"] for lesson in answer["lessons"]} == {oldest(app, made)}
    assert answer["lessons"][0]["text"] in system
    assert sorted(app.services.memory.get_run("auditor", answer["runId"]).injected_memory_ids) == sorted(made)
    store = app.services.memory.store
    assert {m.injected_count for m in store.get_memories(app.settings.tenant, "auditor", made)} == {1}


def oldest(app, memory_ids):
    """The memoryId a group of these lessons is named by: its oldest member's."""
    lessons = app.services.memory.store.get_memories(app.settings.tenant, "auditor", memory_ids)
    return min(lessons, key=lambda m: (m.created_at, m.memory_id)).memory_id


def wall(call, limit=20):
    """Every lesson of the auditor's wall, paged `limit` at a time, by memoryId."""
    items, cursor = {}, None
    while True:
        query = f"?limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        status, page = call("GET", f"/v1/agents/auditor/memories{query}")
        assert status == 200 and page["degraded"] == [], page
        items.update({item["memoryId"]: item for item in page["items"]})
        cursor = page["nextCursor"]
        if cursor is None:
            return items


def test_the_wall_lists_near_duplicate_lessons_as_one_group_on_every_page(app, call):
    made = [run_with_feedback(call, app, comment=c)[1]["memoryId"] for c in AGREEING]
    _, apart = run_with_feedback(call, app, comment=LONG_COMMENTS[1])
    app.worker.drain()
    # One lesson a page: each page still knows the whole group.
    items = wall(call, limit=1)
    assert {m: items[m]["group"]["groupId"] for m in made} == dict.fromkeys(made, oldest(app, made))
    assert {items[m]["group"]["size"] for m in made} == {3}
    assert items[apart["memoryId"]]["group"] == {
        "groupId": apart["memoryId"], "size": 1, "conflictsWith": [], "overruledBy": None}
    # The same group retrieve injects as one bullet, under the same id.
    answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]
    assert {lesson["groupId"] for lesson in answer["lessons"] if lesson["memoryId"] in made} == {oldest(app, made)}


def test_deleting_one_member_of_a_group_leaves_the_rest_on_the_wall(app, call):
    made = [run_with_feedback(call, app, comment=c)[1]["memoryId"] for c in AGREEING]
    app.worker.drain()
    first = oldest(app, made)
    newest = next(m for m in reversed(made) if m != first)
    assert call("DELETE", f"/v1/agents/auditor/memories/{newest}")[0] == 204
    items = wall(call)
    assert sorted(items) == sorted(m for m in made if m != newest)
    assert {(i["group"]["groupId"], i["group"]["size"]) for i in items.values()} == {(first, 2)}
    assert call("DELETE", f"/v1/agents/auditor/memories/{first}")[0] == 204  # the group's namesake
    (last,) = wall(call).values()
    # A group keeps the name it was given, also once the lesson it is named by is deleted.
    assert last["group"] == {"groupId": first, "size": 1, "conflictsWith": [], "overruledBy": None}


def test_the_wall_marks_a_thumbs_up_and_a_newer_thumbs_down_on_near_identical_text_as_a_conflict(app, call):
    _, older = run_with_feedback(call, app, rating="up", comment="Flagging 'trail magic' is right.")
    _, newer = run_with_feedback(call, app, rating="down", comment=COMMENT)
    app.worker.drain()
    items = wall(call)
    old_id, new_id = older["memoryId"], newer["memoryId"]
    assert items[old_id]["group"] == {"groupId": old_id, "size": 1, "conflictsWith": [new_id], "overruledBy": new_id}
    assert items[new_id]["group"] == {"groupId": new_id, "size": 1, "conflictsWith": [old_id], "overruledBy": None}


def test_with_the_embedder_down_the_wall_groups_by_the_stored_comment_vectors(app, call, embedder):
    made = [run_with_feedback(call, app, comment=comment)[1]["memoryId"] for comment in AGREEING]
    app.worker.drain()
    embedder.down = True  # an unreachable model endpoint (its cache included)
    status, page = call("GET", "/v1/agents/auditor/memories")
    assert status == 200 and page["degraded"] == []
    assert {i["memoryId"]: i["group"]["size"] for i in page["items"]} == dict.fromkeys(made, len(AGREEING))


def test_with_the_embedder_down_a_possible_conflict_without_a_stored_comment_vector_leaves_the_wall_ungrouped(
    app, call, embedder
):
    _, receipt = run_with_feedback(call, app)
    # The opposite rating and comparable terms: telling whether they conflict needs both comment vectors.
    _, other = run_with_feedback(call, app, comment=OPPOSING, rating="up")
    app.worker.drain()
    with sqlite3.connect(app.settings.data_dir / "agentmem.db") as conn:  # as if indexed before vectors were kept
        conn.execute("UPDATE memories SET comment_vector = NULL WHERE memory_id = ?", (other["memoryId"],))
    embedder.down = True
    status, page = call("GET", "/v1/agents/auditor/memories")
    assert status == 200 and page["degraded"] == ["embedder"]
    assert {i["memoryId"]: i["group"] for i in page["items"]} == {receipt["memoryId"]: None, other["memoryId"]: None}


def test_comparing_lessons_again_on_a_repeated_retrieve_costs_no_model_call(app, call, minilm):
    for comment in AGREEING:
        run_with_feedback(call, app, comment=comment)
    app.worker.drain()
    first = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]
    before = minilm.texts_encoded
    again = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]
    assert minilm.texts_encoded == before and again["messages"] == first["messages"]


def test_deleting_one_member_of_a_group_leaves_the_rest(app, call):
    made = [run_with_feedback(call, app, comment=c)[1]["memoryId"] for c in AGREEING]
    app.worker.drain()
    assert call("DELETE", f"/v1/agents/auditor/memories/{made[0]}")[0] == 204
    answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]
    assert sorted(lesson["memoryId"] for lesson in answer["lessons"]) == sorted(made[1:])
    assert "(given by 2 editors)" in answer["messages"][0]["content"]


def test_a_thumbs_up_and_a_newer_thumbs_down_on_near_identical_text_inject_only_the_newer(app, call):
    _, older = run_with_feedback(call, app, rating="up", comment="Flagging 'trail magic' is right.")
    _, newer = run_with_feedback(call, app, rating="down", comment=COMMENT)
    app.worker.drain()
    answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]
    assert [lesson["memoryId"] for lesson in answer["lessons"]] == [newer["memoryId"]]
    system = answer["messages"][0]["content"]
    assert "Mistakes to avoid" in system and "Validated patterns" not in system
    run = app.services.memory.get_run("auditor", answer["runId"])
    assert run.injected_memory_ids == [newer["memoryId"]] and older["memoryId"] not in run.injected_memory_ids


def test_a_lesson_of_a_run_stored_before_masking_holds_tokens_and_a_masked_runs_digest_is_its_stored_text(app, call):
    from agentmem.domain.models import Run

    # A run written by a version that stored the agent's texts as given: its values are masked in the digest.
    raw = "Write to jane.doe@example.com about the audit"
    store, tenant = app.services.memory.store, app.settings.tenant
    store.put_run(Run(tenant, "auditor", "run-legacy", raw, 1_750_000_000.0, user_id="u1"))
    verdict = {"rating": "down", "comment": "Too long."}
    receipt = call("POST", "/v1/agents/auditor/runs/run-legacy/feedback", verdict)[1]
    legacy = store.get_memory(tenant, "auditor", receipt["memoryId"])
    assert "jane.doe@example.com" not in legacy.digest and "{{PII_EMAIL_" in legacy.digest

    # A run recorded now is marked masked: its digest is the stored (masked) texts, not masked again.
    status, answer = call("POST", "/v1/agents/auditor/runs", {"input": raw, "output": "Done.", "userId": "u1"})
    assert status == 201
    run = app.services.memory.get_run("auditor", answer["runId"])
    assert run.masked and "{{PII_EMAIL_" in run.input
    receipt = call("POST", f"/v1/agents/auditor/runs/{run.run_id}/feedback", verdict)[1]
    lesson = store.get_memory(tenant, "auditor", receipt["memoryId"])
    assert lesson.digest == f"Editor: Too long.\nOutput: Done.\nInput: {run.input}"


def test_a_restarted_server_embeds_the_comments_it_lacks_before_the_first_wall_page_asks(tmp_path, minilm):
    import uuid

    tag = uuid.uuid4().hex[:8]  # comments no other test embedded, so the shared model's cache lacks them
    first = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, enabled_agents=["auditor"])
    for comment in AGREEING:
        run_with_feedback(LocalCaller(first), first, comment=f"{comment} ({tag})")
    first.worker.drain()
    first.close()
    with sqlite3.connect(tmp_path / "agentmem.db") as conn:  # lessons indexed before comment vectors were kept
        conn.execute("UPDATE memories SET comment_vector = NULL")

    second = create_app(tmp_path, ports={"embedder": minilm}, enabled_agents=["auditor"])
    try:
        assert second.warmed.wait(30)
        before = minilm.texts_encoded
        status, page = LocalCaller(second)("GET", "/v1/agents/auditor/memories")
        assert status == 200 and {item["group"]["size"] for item in page["items"]} == {len(AGREEING)}
        assert minilm.texts_encoded == before  # the comments were embedded at start, not on the request path
    finally:
        second.close()


def test_the_indexer_keeps_each_comments_vector_so_a_retrieve_asks_the_model_only_for_its_query(
    app, call, embedder, monkeypatch
):
    for comment in AGREEING:
        run_with_feedback(call, app, comment=comment)
    app.worker.drain()
    asked: list[str] = []
    original = embedder.embed

    def recording(texts):
        asked.extend(texts)
        return original(texts)

    monkeypatch.setattr(embedder, "embed", recording)
    answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})[1]
    assert any(f"(given by {len(AGREEING)} editors)" in message["content"] for message in answer["messages"])
    assert asked == [SIMILAR]  # the comments' vectors came from the store, cached or not


@pytest.mark.parametrize(("second_rating", "compared"), [("down", False), ("up", True)])
def test_lessons_are_compared_for_conflicts_only_when_both_ratings_are_among_the_candidates(
    app, call, embedder, tmp_path, second_rating, compared
):
    # Two lessons on the same run input, their comment vectors not kept (lessons indexed before they were),
    # their terms comparable: telling a conflict apart would embed their comments on the request.
    run_with_feedback(call, app, comment=COMMENT, rating="down")
    run_with_feedback(call, app, comment=OPPOSING, rating=second_rating)
    app.worker.drain()
    with sqlite3.connect(tmp_path / "agentmem.db") as conn:
        conn.execute("UPDATE memories SET comment_vector = NULL")
    embedded: list[str] = []
    original = embedder.inner.embed

    def recording(texts):
        embedded.extend(texts)
        return original(texts)

    embedder.inner.embed = recording
    try:
        status, answer = call("POST", "/v1/agents/auditor/retrieve", {"input": SIMILAR})
    finally:
        del embedder.inner.embed
    assert status == 200 and len(answer["lessons"]) >= 1
    assert embedded[0] == SIMILAR
    assert (len(embedded) > 1) is compared
