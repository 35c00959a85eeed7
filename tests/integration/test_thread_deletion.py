"""Deleting a thread's tail or the whole thread, through the real handlers, on the embedded backends and
on the AWS adapters under moto: the turns, their recall entries, their appends' idempotency records and
the profile's watermark go; what consolidation learnt stays; turns appended next are consolidated."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.config import load_settings
from agentmem.wiring import Services, build_services, set_services

from tests.integration.conversations_harness import (
    HandlerCaller,
    HashingEmbedder,
    all_turns,
    local_services,
    moto_environment,
)

USER, THREAD = "u-del", "t-del"
EXCHANGES = {
    "k1": [("user", "I live in Lisbon."), ("assistant", "Noted.")],
    "k2": [("user", "I like kayaking on the river."), ("assistant", "Nice.")],
    "k3": [("user", "I like teal paint."), ("assistant", "Good choice.")],
}


@pytest.fixture(params=["local", pytest.param("moto", marks=pytest.mark.double)])  # moto + the OpenSearch double
def services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    if request.param == "local":
        with local_services(tmp_path / "data") as built:
            yield built
        return
    from agentmem.adapters.aws.opensearch_index import OpenSearchVectorIndex
    from agentmem.adapters.local.offline_llm import OfflineRuleModel
    from agentmem.adapters.local.pii_regex import RegexPiiDetector

    from tests.contract.conftest import COLLECTION_ENDPOINT, INDEX_NAME, KEY_TABLE_NAME, TABLE_NAME
    from tests.contract.fake_opensearch import FakeOpenSearchServer
    from tests.integration.test_conversations_moto import BUS_NAME, Stack

    with moto_environment():
        stack = Stack(tmp_path)
        settings = load_settings(
            backend="aws", tenant="acme", table_name=TABLE_NAME, key_table_name=KEY_TABLE_NAME,
            event_bus_name=BUS_NAME, kms_key_arn=stack.key_arn, hmac_key_arn=stack.hmac_arn, data_dir=tmp_path,
        )
        # DynamoDB, KMS, EventBridge in moto; the OpenSearch adapters (vectors and the keyword documents)
        # against the server double; moto has no Converse and a canned Comprehend: the offline rules
        # and the regex detector stand in.
        vectors = OpenSearchVectorIndex(COLLECTION_ENDPOINT, INDEX_NAME, dimension=HashingEmbedder.dimension)
        FakeOpenSearchServer(INDEX_NAME, HashingEmbedder.dimension).mount_on(vectors.client)
        built = build_services(settings, vectors=vectors, embedder=HashingEmbedder(), llm=OfflineRuleModel(),
                               pii_detector=RegexPiiDetector())
        yield built
        set_services(None)
        built.close()


def keyed_append(call: HandlerCaller, key: str, turns: list[tuple[str, str]], thread: str = THREAD) -> list[Any]:
    status, answer = call(
        "POST", f"/v1/users/{USER}/threads/{thread}/turns",
        {"turns": [{"role": role, "content": content} for role, content in turns]}, headers={"Idempotency-Key": key},
    )
    assert status == 201, answer
    return list(answer["turns"])


def consume(services: Services, stored: list[Any], thread: str = THREAD) -> Any:
    """What the consolidate function does with the append's TurnsAppended: index, then consolidate."""
    first, last = stored[0]["seq"], stored[-1]["seq"]
    services.turn_recall.index_appended(USER, thread, first, last)
    return services.consolidation.consolidate(USER, thread, first, last)


def recalled_seqs(services: Services, query: str, thread: str = THREAD) -> set[int]:
    hits = services.turn_recall.search.search(USER, query, 20)
    return {int(h.item_id.rpartition("#")[2]) for h in hits if h.item_id.startswith(f"{thread}#")}


def seqs(call: HandlerCaller, thread: str = THREAD) -> list[int] | None:
    turns = all_turns(call, USER, thread)
    return None if turns is None else [t["seq"] for t in turns]


def watermark(services: Services, thread: str = THREAD) -> int | None:
    current = services.profiles.store.current("acme" if services.settings.backend == "aws" else "local", USER)
    return None if current is None else current.consolidated.get(thread)


def profile_text(call: HandlerCaller) -> str:
    status, profile = call("GET", f"/v1/users/{USER}/profile")
    assert status == 200, profile
    _, plain = call("POST", f"/v1/users/{USER}/threads/{THREAD}/unmask", {"text": profile["markdown"]})
    return str(plain["text"])


@pytest.fixture
def call(services: Services) -> HandlerCaller:
    """The handlers, after the three exchanges were appended with keys (and consumed) and another thread."""
    caller = HandlerCaller(services)
    for key, turns in EXCHANGES.items():
        consume(services, keyed_append(caller, key, turns))
    keyed_append(caller, "other-thread", EXCHANGES["k2"], thread="t-kept")
    return caller


def test_deleting_a_tail_removes_its_turns_recall_entries_and_keys_and_later_turns_are_consolidated(
    services: Services, call: HandlerCaller
) -> None:
    assert seqs(call) == [1, 2, 3, 4, 5, 6] and watermark(services) == 6
    assert {3, 4} <= recalled_seqs(services, "kayaking river")

    status, answer = call("DELETE", f"/v1/users/{USER}/threads/{THREAD}/turns?fromSeq=3")
    assert status == 200, answer
    assert [(t["seq"], t["role"]) for t in answer["turns"]] == [(3, "user"), (4, "assistant"), (5, "user"),
                                                                 (6, "assistant")]
    assert answer["turns"][0]["content"] == "I like kayaking on the river."
    assert seqs(call) == [1, 2]
    assert recalled_seqs(services, "kayaking river teal paint") & {3, 4, 5, 6} == set()  # 1, 2 stay
    assert watermark(services) == 2
    assert "kayaking" in profile_text(call)  # what consolidation learnt stays (stated in the OpenAPI text)
    assert seqs(call, "t-kept") == [1, 2]

    # k2's record went with its turns: the retry stores them again; k1's turns stayed, and so does its answer.
    assert [t["seq"] for t in keyed_append(call, "k2", EXCHANGES["k2"])] == [3, 4]
    assert [t["seq"] for t in keyed_append(call, "k1", EXCHANGES["k1"])] == [1, 2]
    assert seqs(call) == [1, 2, 3, 4]
    # Turns that get deleted seqs are consolidated and indexed as new ones.
    later = keyed_append(call, "k4", [("user", "I work at Globex."), ("assistant", "Noted.")])
    assert [t["seq"] for t in later] == [5, 6]
    result = consume(services, later)
    assert result.reason != "already consolidated" and "Globex" in profile_text(call)
    assert watermark(services) == 6
    assert 5 in recalled_seqs(services, "work Globex")

    status, again = call("DELETE", f"/v1/users/{USER}/threads/{THREAD}/turns?fromSeq=9")
    assert (status, again["turns"]) == (200, [])


def test_deleting_the_thread_removes_every_turn_and_a_new_thread_of_that_id_starts_at_one(
    services: Services, call: HandlerCaller
) -> None:
    status, answer = call("DELETE", f"/v1/users/{USER}/threads/{THREAD}")
    assert (status, answer) == (204, None)
    assert seqs(call) is None  # 404: the thread is gone
    assert recalled_seqs(services, "Lisbon kayaking river teal paint") == set()
    assert watermark(services) is None
    assert seqs(call, "t-kept") == [1, 2]
    assert call("DELETE", f"/v1/users/{USER}/threads/{THREAD}")[0] == 204  # idempotent
    # Every key went with the thread: k1 appends again, from seq 1.
    assert [t["seq"] for t in keyed_append(call, "k1", EXCHANGES["k1"])] == [1, 2]
    assert consume(services, [{"seq": 1}, {"seq": 2}]).reason != "already consolidated"


def test_a_tail_deletion_without_a_valid_from_seq_is_a_400_and_deletes_nothing(
    services: Services, call: HandlerCaller
) -> None:
    for query in ("", "?fromSeq=0", "?fromSeq=abc", "?fromSeq=true", "?fromSeq=1000000000000"):
        status, answer = call("DELETE", f"/v1/users/{USER}/threads/{THREAD}/turns{query}")
        assert status == 400 and answer["error"]["code"] == "validation_error", (query, answer)
        assert answer["error"]["details"][0]["field"] == "fromSeq", query
    assert seqs(call) == [1, 2, 3, 4, 5, 6]
