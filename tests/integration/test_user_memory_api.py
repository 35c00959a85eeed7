"""Searching a user's memory, listing users and threads, correcting a fact: through the real handlers,
on the embedded backends and on the AWS adapters under moto (the same assertions for both).

The model is the offline rule set (facts such as "User works at Globex"); the PII detector is the
structured rules alone, so an e-mail address is what shows masking.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.adapters.local.offline_llm import OfflineRuleModel
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.local.lambda_runtime import invoke
from agentmem.local.server import create_app
from agentmem.wiring import set_services

from tests.integration.conversations_harness import RecordingEmbedder, moto_environment
from tests.integration.local_client import LocalCaller
from tests.llm_doubles import RecordingModel

USER = "ana"
EMAIL = "ana.lopez@example.com"


class World:
    """One tenant on one backend: a caller, and the delivery of TurnsAppended to consolidation."""

    def __init__(self, call: LocalCaller, deliver: Any, embedder: RecordingEmbedder) -> None:
        self.call = call
        self.deliver = deliver
        self.embedder = embedder

    def say(self, thread: str, *texts: str, user: str = USER) -> None:
        status, answer = self.call("POST", f"/v1/users/{user}/threads/{thread}/turns",
                                   {"turns": [{"role": "user", "content": text} for text in texts]})
        assert status == 201, answer
        self.deliver()

    def ok(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        got, answer = self.call(method, path, body)
        assert got == status, answer
        return answer


@pytest.fixture(params=["local", "aws"])
def world(request: pytest.FixtureRequest, tmp_path: Path, minilm: Any) -> Iterator[World]:
    embedder = RecordingEmbedder(minilm)
    if request.param == "local":
        app = create_app(tmp_path, start_worker=False, tenant="acme", enabled_agents=["assistant"],
                         ports={"embedder": embedder, "llm": RecordingModel(OfflineRuleModel()),
                                "pii_detector": RegexPiiDetector()})
        yield World(LocalCaller(app), app.worker.drain, embedder)
        app.close()
        return
    from tests.integration.test_user_memory_aws import _aws_world

    with moto_environment():
        aws = _aws_world(embedder)

        def deliver() -> None:
            for envelope in aws.delivered():
                invoke("consolidate", envelope)

        yield World(aws.call, deliver, embedder)
    set_services(None)


def runs_recorded(world: World) -> list[Any]:
    return world.ok("GET", "/v1/agents/assistant/runs?feedback=any")["items"]


# Search


def test_search_finds_facts_turns_and_items_by_meaning_and_records_no_run(world: World) -> None:
    world.say("t1", "I work at Globex as a data engineer.")
    world.say("t2", "My cat Miso only eats salmon.")
    world.ok("PUT", f"/v1/users/{USER}/items",
             {"namespace": ["memories"], "key": "k1", "value": {"text": "Prefers window seats on long flights"}})

    found = world.ok("POST", f"/v1/users/{USER}/search", {"query": "Which company employs the user?", "limit": 3})
    pets = world.ok("POST", f"/v1/users/{USER}/search", {"query": "what does the pet eat", "kinds": ["turns"]})
    travel = world.ok("POST", f"/v1/users/{USER}/search", {"query": "airplane seat", "kinds": ["items"], "limit": 1})

    assert found["facts"][0]["text"] == "User works at Globex" and found["facts"][0]["score"] > 0
    assert found["turns"][0]["threadId"] == "t1" and "Globex" in found["turns"][0]["content"]
    assert found["degraded"] == [] and len(found["facts"]) <= 3 and len(found["turns"]) <= 3
    assert pets["turns"][0]["content"] == "My cat Miso only eats salmon." and pets["turns"][0]["seq"] == 1
    assert pets["facts"] == [] and pets["items"] == []
    assert [(i["key"], i["namespace"]) for i in travel["items"]] == [("k1", ["memories"])]
    assert runs_recorded(world) == []


def test_search_masks_the_query_before_it_is_embedded_and_finds_the_users_token(world: World) -> None:
    world.say("t1", f"Write to me at {EMAIL} please.")

    found = world.ok("POST", f"/v1/users/{USER}/search", {"query": f"messages for {EMAIL}", "kinds": ["turns"]})

    token = found["turns"][0]["content"].removeprefix("Write to me at ").removesuffix(" please.")
    assert token.startswith("{{PII_EMAIL_") and EMAIL not in " ".join(world.embedder.texts)
    assert f"messages for {token}" in world.embedder.texts


def test_search_finds_nothing_of_another_user(world: World) -> None:
    world.say("t1", "I work at Globex as a data engineer.", user="bob")

    found = world.ok("POST", f"/v1/users/{USER}/search", {"query": "Which company employs the user?"})

    assert (found["facts"], found["turns"], found["items"]) == ([], [], [])


def test_a_bad_search_is_one_400_naming_every_invalid_field(world: World) -> None:
    status, answer = world.call("POST", f"/v1/users/{USER}/search", {"query": "", "limit": 0, "kinds": ["runs"]})
    bad_id, _ = world.call("POST", "/v1/users/-ana/search", {"query": "x"})
    extra, _ = world.call("POST", f"/v1/users/{USER}/search", {"query": "x", "topK": 3})

    assert status == 400 and answer["error"]["code"] == "validation_error"
    assert {d["field"].split(".")[0] for d in answer["error"]["details"]} >= {"query", "limit", "kinds"}
    assert (bad_id, extra) == (400, 400)


# Listing users and threads


def test_users_are_listed_paged_and_by_prefix_and_an_erased_user_is_not(world: World) -> None:
    for user in ("u-1", "u-2", "u-3", "v-1"):
        world.say("t1", "hello", user=user)

    first = world.ok("GET", "/v1/users?limit=2")
    second = world.ok("GET", f"/v1/users?limit=2&cursor={first['nextCursor']}")
    prefixed = world.ok("GET", "/v1/users?prefix=u-")
    world.ok("DELETE", "/v1/users/u-2", status=204)
    after_erase = world.ok("GET", "/v1/users")

    assert [u["userId"] for u in first["items"] + second["items"]] == ["u-1", "u-2", "u-3", "v-1"]
    assert second["nextCursor"] is None and first["items"][0]["createdAt"].endswith("Z")
    assert [u["userId"] for u in prefixed["items"]] == ["u-1", "u-2", "u-3"]
    assert [u["userId"] for u in after_erase["items"]] == ["u-1", "u-3", "v-1"]


def test_threads_are_listed_newest_activity_first_with_their_turn_count(world: World) -> None:
    world.say("old", "one", "two")
    world.say("new", "one")
    world.say("old", "three")

    threads = world.ok("GET", f"/v1/users/{USER}/threads")
    paged = world.ok("GET", f"/v1/users/{USER}/threads?limit=1")

    assert [(t["threadId"], t["turnCount"]) for t in threads["items"]] == [("old", 3), ("new", 1)]
    assert threads["items"][0]["lastActivityAt"] >= threads["items"][1]["lastActivityAt"]
    assert [t["threadId"] for t in paged["items"]] == ["old"] and paged["nextCursor"]
    assert world.ok("GET", "/v1/users/nobody/threads") == {"items": [], "nextCursor": None}


def test_listings_refuse_bad_cursors_limits_and_ids_with_400(world: World) -> None:
    world.say("t1", "hello")

    for path in ("/v1/users?cursor=nope", "/v1/users?limit=0", "/v1/users?prefix=a%20b",
                 f"/v1/users/{USER}/threads?cursor=nope", f"/v1/users/{USER}/threads?limit=201",
                 "/v1/users/a%2Fb/threads"):
        status, answer = world.call("GET", path)
        assert status == 400 and answer["error"]["code"] == "validation_error", path


# Correcting a fact


def test_a_corrected_fact_is_masked_listed_and_found_by_its_new_meaning(world: World) -> None:
    world.say("t1", "I work at Globex as a data engineer.")
    fact_id = world.ok("GET", f"/v1/users/{USER}/facts")["items"][0]["factId"]

    updated = world.ok("PATCH", f"/v1/users/{USER}/facts/{fact_id}",
                       {"text": f"User   works at Initech; reach her at {EMAIL}"})
    listed = world.ok("GET", f"/v1/users/{USER}/facts")["items"]
    found = world.ok("POST", f"/v1/users/{USER}/search", {"query": "Initech", "kinds": ["facts"], "limit": 1})

    assert updated["factId"] == fact_id and updated["status"] == "active"
    assert updated["text"].startswith("User works at Initech; reach her at {{PII_EMAIL_")
    assert EMAIL not in updated["text"] and EMAIL not in " ".join(world.embedder.texts)
    assert [f["text"] for f in listed] == [updated["text"]]
    assert found["facts"][0]["factId"] == fact_id and found["facts"][0]["text"] == updated["text"]


def test_correcting_a_missing_fact_is_404_and_a_bad_body_is_400(world: World) -> None:
    world.say("t1", "I work at Globex as a data engineer.")
    fact_id = world.ok("GET", f"/v1/users/{USER}/facts")["items"][0]["factId"]

    missing, answer = world.call("PATCH", f"/v1/users/{USER}/facts/no-such-fact", {"text": "x"})
    other_user, _ = world.call("PATCH", f"/v1/users/bob/facts/{fact_id}", {"text": "x"})
    blank, _ = world.call("PATCH", f"/v1/users/{USER}/facts/{fact_id}", {"text": "   "})
    extra, _ = world.call("PATCH", f"/v1/users/{USER}/facts/{fact_id}", {"text": "x", "subject": "y"})
    too_long, _ = world.call("PATCH", f"/v1/users/{USER}/facts/{fact_id}", {"text": "x" * 501})

    assert (missing, answer["error"]["code"], other_user) == (404, "not_found", 404)
    assert (blank, extra, too_long) == (400, 400, 400)
    assert world.ok("GET", f"/v1/users/{USER}/facts")["items"][0]["text"] == "User works at Globex"
