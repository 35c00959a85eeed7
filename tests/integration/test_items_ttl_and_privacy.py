"""Items (LangGraph's store) through the real handlers on the embedded backends: TTLs honoured on read and
refreshed by reads, the search query masked before the embedder sees it, and an agent's items erased
with the agent's personal data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agentmem.ports.vectors import VectorQuery
from agentmem.wiring import Services

from tests.integration.conversations_harness import HandlerCaller, HashingEmbedder, RecordingEmbedder, local_services

T0 = 1_800_000_000.0
EMAIL = "ana.silva@example.com"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def embedder() -> RecordingEmbedder:
    return RecordingEmbedder(HashingEmbedder())


@pytest.fixture
def services(tmp_path: Path, clock: Clock, embedder: RecordingEmbedder) -> Iterator[Services]:
    with local_services(tmp_path / "data", embedder) as built:
        built.items.clock = clock
        yield built


@pytest.fixture
def call(services: Services) -> HandlerCaller:  # the items' handlers, in the services' time
    return HandlerCaller(services)


def put(call: HandlerCaller, key: str, ttl: float | None = None, owner: str = "users/u-1", **value: str) -> dict:
    body = {"namespace": ["m"], "key": key, "value": value or {"text": key}, **({"ttl": ttl} if ttl else {})}
    status, answer = call("PUT", f"/v1/{owner}/items", body)
    assert status == 200, answer
    return dict(answer)


def get(call: HandlerCaller, key: str, refresh: str = "true", owner: str = "users/u-1") -> tuple[int, dict]:
    return call("GET", f"/v1/{owner}/items?namespace=m&key={key}&refreshTtl={refresh}")


def test_an_item_expires_ttl_minutes_after_its_last_read_and_is_then_never_read(call, clock):
    stored = put(call, "note", ttl=10)
    assert stored["expiresAt"] == "2027-01-15T08:10:00.000Z"  # T0 + 10 minutes
    put(call, "kept")

    clock.now = T0 + 9 * 60
    assert get(call, "note")[0] == 200  # a read restarts the 10 minutes
    clock.now = T0 + 18 * 60
    status, unrefreshed = get(call, "note", refresh="false")
    assert status == 200 and unrefreshed["expiresAt"] == "2027-01-15T08:19:00.000Z"
    clock.now = T0 + 20 * 60
    assert get(call, "note")[0] == 404
    _, found = call("POST", "/v1/users/u-1/items/search", {"query": "note"})
    assert [i["key"] for i in found["items"]] == ["kept"]
    _, listed = call("POST", "/v1/users/u-1/items/search", {})
    assert [i["key"] for i in listed["items"]] == ["kept"]


def test_a_search_refreshes_the_ttl_of_what_it_finds_unless_told_not_to(call, clock):
    put(call, "found", ttl=10, text="kayak trip")
    clock.now = T0 + 9 * 60
    call("POST", "/v1/users/u-1/items/search", {"query": "kayak", "refreshTtl": False})
    clock.now = T0 + 11 * 60
    assert get(call, "found")[0] == 404

    put(call, "again", ttl=10, text="kayak trip")
    clock.now += 9 * 60
    _, found = call("POST", "/v1/users/u-1/items/search", {"query": "kayak"})
    assert [i["key"] for i in found["items"]] == ["again"]
    clock.now += 9 * 60
    assert get(call, "again")[0] == 200


def test_the_search_query_is_masked_before_the_embedder_sees_it_and_finds_the_items_token(call, embedder):
    stored = put(call, "contact", text=f"Write to {EMAIL} on Mondays")
    put(call, "other", text="Something else entirely")
    token = stored["value"]["text"].split()[2]
    assert token.startswith("{{PII_EMAIL_")

    embedder.texts.clear()
    status, found = call("POST", "/v1/users/u-1/items/search", {"query": EMAIL})
    assert status == 200 and found["items"][0]["key"] == "contact"
    assert embedder.texts == [token] and not any(EMAIL in text for text in embedder.texts)


def test_an_agents_items_are_masked_with_its_own_subject_and_erased_with_its_personal_data(call, services, embedder):
    stored = put(call, "memo", owner="agents/planner", text=f"Escalate to {EMAIL}")
    assert EMAIL not in stored["value"]["text"] and not any(EMAIL in text for text in embedder.texts)
    put(call, "mine", text="the user's own")
    put(call, "theirs", owner="agents/other-agent")

    assert call("DELETE", "/v1/agents/planner/personal-data")[0] == 204
    assert get(call, "memo", owner="agents/planner")[0] == 404
    _, namespaces = call("GET", "/v1/agents/planner/items/namespaces")
    assert namespaces["namespaces"] == []
    query = VectorQuery(services.settings.tenant, "item", "agents/planner", embedder.embed(["Escalate"])[0], 10)
    assert services.memory.vectors.search(query) == []  # the item vectors went with the owner
    _, found = call("POST", "/v1/agents/planner/items/search", {"query": "Escalate"})
    assert found["items"] == []
    assert get(call, "mine")[0] == 200 and get(call, "theirs", owner="agents/other-agent")[0] == 200
