"""The RecordStore contract: SqliteRecordStore and DynamoDbRecordStore (under moto) behave alike."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from agentmem.domain.errors import Conflict, InvalidInput, NotFound
from agentmem.domain.models import Feedback, Memory, Run

T0 = 1_750_000_000.0


def make_run(run_id: str = "run-1", *, tenant: str = "acme", agent: str = "agent-a", at: float = T0) -> Run:
    return Run(
        tenant=tenant,
        agent_id=agent,
        run_id=run_id,
        input=f"input of {run_id}",
        created_at=at,
        user_id="user-1",
        thread_id="thread-1",
        injected_memory_ids=["mem-old"],
    )


def make_feedback(
    run_id: str = "run-1",
    n: int = 1,
    *,
    tenant: str = "acme",
    agent: str = "agent-a",
    at: float = T0,
    rating: str = "down",
) -> tuple[Feedback, Memory]:
    feedback = Feedback(
        tenant=tenant,
        agent_id=agent,
        run_id=run_id,
        feedback_id=f"fb-{run_id}-{n}",
        rating=rating,
        comment=f"comment {n}",
        created_at=at,  # type: ignore[arg-type]
        memory_id=f"mem-{run_id}-{n}",
        idempotency_key=f"key-{n}",
        request_hash="h1",
    )
    memory = Memory(
        tenant=tenant,
        agent_id=agent,
        memory_id=feedback.memory_id,
        run_id=run_id,
        feedback_id=feedback.feedback_id,
        rating=feedback.rating,
        comment=feedback.comment,
        digest=f"Editor: comment {n}\nInput: input of {run_id}",
        importance=1.0,
        created_at=at,
    )
    return feedback, memory


def add_memories(store: Any, count: int, *, tenant: str = "acme", agent: str = "agent-a") -> list[Memory]:
    """`count` runs with one feedback each, one second apart (the last is the newest)."""
    memories = []
    for i in range(count):
        run_id = f"run-{i:03d}"
        store.put_run(make_run(run_id, tenant=tenant, agent=agent, at=T0 + i))
        feedback, memory = make_feedback(run_id, tenant=tenant, agent=agent, at=T0 + i)
        store.add_feedback(feedback, memory)
        memories.append(memory)
    return memories


# Runs


def test_a_stored_run_reads_back_whole(record_store: Any) -> None:
    run = make_run()
    record_store.put_run(run)
    assert record_store.get_run("acme", "agent-a", "run-1") == run


@pytest.mark.parametrize("masked", [True, False])
def test_a_runs_masked_marker_reads_back_and_survives_its_output_being_set(record_store: Any, masked: bool) -> None:
    record_store.put_run(dataclasses.replace(make_run(), masked=masked))
    record_store.set_run_output("acme", "agent-a", "run-1", "the answer")
    assert record_store.get_run("acme", "agent-a", "run-1").masked is masked


def test_putting_a_run_id_twice_is_a_conflict_and_keeps_the_first(record_store: Any) -> None:
    record_store.put_run(make_run())
    with pytest.raises(Conflict):
        record_store.put_run(dataclasses.replace(make_run(), input="another input"))
    assert record_store.get_run("acme", "agent-a", "run-1").input == "input of run-1"


def test_an_unknown_run_reads_as_none(record_store: Any) -> None:
    assert record_store.get_run("acme", "agent-a", "nope") is None


def test_set_run_output_stores_the_output(record_store: Any) -> None:
    record_store.put_run(make_run())
    record_store.set_run_output("acme", "agent-a", "run-1", "the answer")
    assert record_store.get_run("acme", "agent-a", "run-1").output == "the answer"


def test_set_run_output_of_an_unknown_run_is_not_found_and_creates_nothing(record_store: Any) -> None:
    with pytest.raises(NotFound):
        record_store.set_run_output("acme", "agent-a", "nope", "the answer")
    assert record_store.get_run("acme", "agent-a", "nope") is None


# Feedback


def test_erasing_a_users_runs_reaches_every_agent_and_leaves_everyone_elses(record_store: Any) -> None:
    def run(run_id: str, agent: str, user: str | None, tenant: str = "acme") -> Run:
        return dataclasses.replace(make_run(run_id, agent=agent, tenant=tenant), user_id=user)

    for stored in (
        run("r1", "agent-a", "alice"), run("r2", "agent-b", "alice"), run("r3", "agent-a", "bob"),
        run("r4", "agent-a", None), run("r5", "agent-a", "alice", tenant="globex"),
    ):
        record_store.put_run(stored)

    assert record_store.delete_runs_of_user("acme", "alice") == 2
    assert record_store.delete_runs_of_user("acme", "alice") == 0

    assert record_store.get_run("acme", "agent-a", "r1") is None
    assert record_store.get_run("acme", "agent-b", "r2") is None
    assert record_store.get_run("acme", "agent-a", "r3") is not None
    assert record_store.get_run("acme", "agent-a", "r4") is not None
    assert record_store.get_run("globex", "agent-a", "r5") is not None
    with pytest.raises(Conflict):  # a user's run keeps its id unique too
        record_store.put_run(run("r3", "agent-a", "bob"))


def test_feedback_creates_its_memory_and_is_listed_on_the_run(record_store: Any) -> None:
    record_store.put_run(make_run())
    feedback, memory = make_feedback()
    stored, created = record_store.add_feedback(feedback, memory)
    assert created is True
    assert stored == feedback
    assert record_store.get_memory("acme", "agent-a", memory.memory_id) == memory
    assert record_store.get_run("acme", "agent-a", "run-1").feedback_ids == [feedback.feedback_id]


def test_the_same_feedback_id_twice_gives_one_memory_and_the_first_feedback(record_store: Any) -> None:
    record_store.put_run(make_run())
    feedback, memory = make_feedback()
    record_store.add_feedback(feedback, memory)
    retry = dataclasses.replace(feedback, comment="sent again", memory_id="mem-other")
    stored, created = record_store.add_feedback(retry, dataclasses.replace(memory, memory_id="mem-other"))
    assert created is False
    assert stored == feedback
    assert record_store.get_memory("acme", "agent-a", "mem-other") is None
    assert [m.memory_id for m in record_store.list_memories("acme", "agent-a", limit=10).items] == [memory.memory_id]
    assert record_store.get_run("acme", "agent-a", "run-1").feedback_ids == [feedback.feedback_id]


def test_feedback_on_an_unknown_run_is_not_found_and_writes_nothing(record_store: Any) -> None:
    feedback, memory = make_feedback("ghost")
    with pytest.raises(NotFound):
        record_store.add_feedback(feedback, memory)
    assert record_store.get_memory("acme", "agent-a", memory.memory_id) is None
    assert record_store.list_memories("acme", "agent-a", limit=10).items == []
    assert record_store.list_memories_by_status("acme", "pending", limit=10) == []


def test_a_second_feedback_on_a_run_is_appended(record_store: Any) -> None:
    record_store.put_run(make_run())
    first, first_memory = make_feedback(n=1)
    second, second_memory = make_feedback(n=2, rating="up", at=T0 + 5)
    record_store.add_feedback(first, first_memory)
    record_store.add_feedback(second, second_memory)
    assert record_store.get_run("acme", "agent-a", "run-1").feedback_ids == [first.feedback_id, second.feedback_id]
    assert record_store.get_run("acme", "agent-a", "run-1").verdict == "up"


# Runs listing (the editors' review queue)


def put_runs(store: Any, count: int, *, tenant: str = "acme", agent: str = "agent-a") -> list[Run]:
    """`count` runs one second apart, no feedback yet (the last is the newest)."""
    runs = [make_run(f"run-{i:03d}", tenant=tenant, agent=agent, at=T0 + i) for i in range(count)]
    for run in runs:
        store.put_run(run)
    return runs


def give(store: Any, run: Run, rating: str, n: int = 1, at: float | None = None) -> None:
    feedback, memory = make_feedback(run.run_id, n, tenant=run.tenant, agent=run.agent_id, rating=rating,
                                     at=at if at is not None else run.created_at + 60)
    store.add_feedback(feedback, memory)


def listed(store: Any, verdict: str = "any", *, limit: int = 100, agent: str = "agent-a",
           tenant: str = "acme") -> list[str]:
    """Every run id of a listing, walking all its pages."""
    seen: list[str] = []
    cursor = None
    for _ in range(50):
        page = store.list_runs(tenant, agent, limit=limit, cursor=cursor, verdict=verdict)
        assert len(page.items) <= limit
        seen += [r.run_id for r in page.items]
        cursor = page.next_cursor
        if cursor is None:
            return seen
    raise AssertionError("paging does not end")


def test_runs_are_listed_newest_first_and_pages_cover_each_run_exactly_once(record_store: Any) -> None:
    runs = put_runs(record_store, 7)
    newest_first = [r.run_id for r in reversed(runs)]
    assert listed(record_store, limit=3) == newest_first
    assert listed(record_store, limit=100) == newest_first
    first = record_store.list_runs("acme", "agent-a", limit=3)
    assert [r.run_id for r in first.items] == newest_first[:3] and first.next_cursor is not None
    assert record_store.list_runs("acme", "agent-a", limit=7).next_cursor is None
    assert record_store.list_runs("acme", "agent-a", limit=7).items == list(reversed(runs))


def test_a_run_awaits_a_verdict_until_its_feedback_then_lists_under_its_rating(record_store: Any) -> None:
    runs = put_runs(record_store, 5)
    assert listed(record_store, "none") == [r.run_id for r in reversed(runs)]
    give(record_store, runs[1], "down")
    give(record_store, runs[3], "up")
    assert listed(record_store, "none", limit=2) == ["run-004", "run-002", "run-000"]
    assert listed(record_store, "down") == ["run-001"]
    assert listed(record_store, "up") == ["run-003"]
    assert listed(record_store, "any", limit=2) == ["run-004", "run-003", "run-002", "run-001", "run-000"]
    [down] = record_store.list_runs("acme", "agent-a", limit=10, verdict="down").items
    assert down.verdict == "down" and down.feedback_ids == ["fb-run-001-1"]
    assert record_store.get_run("acme", "agent-a", "run-000").verdict is None


def test_the_newest_feedback_decides_the_verdict(record_store: Any) -> None:
    [run] = put_runs(record_store, 1)
    give(record_store, run, "up", n=1)
    give(record_store, run, "down", n=2, at=T0 + 120)
    assert record_store.get_run("acme", "agent-a", run.run_id).verdict == "down"
    assert listed(record_store, "down") == [run.run_id]
    assert listed(record_store, "up") == [] and listed(record_store, "none") == []
    assert listed(record_store, "any") == [run.run_id]


def test_unfiltered_pages_interleave_verdicts_in_time_order(record_store: Any) -> None:
    runs = put_runs(record_store, 9)
    for run, rating in zip(runs, ["up", "down", None, "down", None, "up", "up", None, "down"], strict=True):
        if rating:
            give(record_store, run, rating)
    expected = [r.run_id for r in reversed(runs)]
    for limit in (1, 2, 4, 9):
        assert listed(record_store, "any", limit=limit) == expected, limit


def test_runs_created_in_the_same_instant_are_ordered_by_id_and_none_is_lost(record_store: Any) -> None:
    for run_id in ("run-b", "run-a", "run-c"):
        record_store.put_run(make_run(run_id, at=T0))
    assert listed(record_store, limit=1) == ["run-c", "run-b", "run-a"]


def test_a_cursor_of_one_verdict_does_not_page_another(record_store: Any) -> None:
    put_runs(record_store, 3)
    cursor = record_store.list_runs("acme", "agent-a", limit=1, verdict="none").next_cursor
    assert cursor is not None
    assert [r.run_id for r in record_store.list_runs("acme", "agent-a", limit=5, cursor=cursor, verdict="none").items] \
        == ["run-001", "run-000"]
    with pytest.raises(InvalidInput) as caught:
        record_store.list_runs("acme", "agent-a", limit=1, cursor=cursor, verdict="any")
    assert [d["field"] for d in caught.value.details] == ["cursor"]


@pytest.mark.parametrize("cursor", ["not-a-cursor!", "e30", "W10", "eyJ2IjoiYW55In0", "%%%"])
def test_a_bad_runs_cursor_is_invalid_input_naming_the_cursor(record_store: Any, cursor: str) -> None:
    put_runs(record_store, 2)
    with pytest.raises(InvalidInput) as caught:
        record_store.list_runs("acme", "agent-a", limit=1, cursor=cursor)
    assert [d["field"] for d in caught.value.details] == ["cursor"]


def test_runs_of_another_agent_or_tenant_are_never_listed(record_store: Any) -> None:
    put_runs(record_store, 2, agent="agent-a")
    put_runs(record_store, 3, agent="agent-b")
    put_runs(record_store, 4, tenant="globex", agent="agent-a")
    give(record_store, make_run("run-000", tenant="globex"), "down")
    page = record_store.list_runs("acme", "agent-a", limit=10)
    assert [(r.tenant, r.agent_id, r.run_id) for r in page.items] == [
        ("acme", "agent-a", "run-001"), ("acme", "agent-a", "run-000")]
    assert listed(record_store, "down") == []
    assert listed(record_store, "down", tenant="globex") == ["run-000"]
    assert listed(record_store, agent="agent-c") == []


# Memories


def test_get_memories_returns_those_that_exist(record_store: Any) -> None:
    memories = add_memories(record_store, 3)
    wanted = [memories[0].memory_id, "missing", memories[2].memory_id, memories[0].memory_id]
    found = record_store.get_memories("acme", "agent-a", wanted)
    assert sorted(m.memory_id for m in found) == sorted([memories[0].memory_id, memories[2].memory_id])
    assert record_store.get_memories("acme", "agent-a", []) == []


def test_get_memories_reads_every_field_back_as_the_listing_does(record_store: Any) -> None:
    memory = add_memories(record_store, 1)[0]
    vector = bytes(range(16))
    record_store.update_memory("acme", "agent-a", memory.memory_id, importance=1.5, status="indexed",
                               comment_vector=vector, group_id="mem-elsewhere")
    record_store.record_injections("acme", "agent-a", [memory.memory_id])
    [got] = record_store.get_memories("acme", "agent-a", [memory.memory_id])
    assert got == record_store.list_memories("acme", "agent-a", limit=5).items[0]
    assert (got.memory_id, got.run_id, got.feedback_id, got.rating, got.comment, got.digest) == (
        memory.memory_id, memory.run_id, memory.feedback_id, memory.rating, memory.comment, memory.digest)
    assert (got.importance, got.status, got.injected_count, got.comment_vector, got.group_id) == (
        1.5, "indexed", 1, vector, "mem-elsewhere")
    assert (got.created_at, got.subject) == (memory.created_at, memory.subject)


def test_listing_is_newest_first_and_pages_cover_every_memory_exactly_once(record_store: Any) -> None:
    memories = add_memories(record_store, 7)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = record_store.list_memories("acme", "agent-a", limit=3, cursor=cursor)
        pages += 1
        assert len(page.items) <= 3
        seen += [m.memory_id for m in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
        assert pages < 10, "paging does not end"
    assert seen == [m.memory_id for m in reversed(memories)]
    assert pages == 3


def test_a_page_that_holds_everything_has_no_next_cursor(record_store: Any) -> None:
    add_memories(record_store, 3)
    assert record_store.list_memories("acme", "agent-a", limit=3).next_cursor is None
    assert record_store.list_memories("acme", "agent-a", limit=10).next_cursor is None


@pytest.mark.parametrize("cursor", ["not-a-cursor!", "e30", "W10", "eyJwayI6MX0", "%%%"])
def test_a_bad_cursor_is_invalid_input_naming_the_cursor(record_store: Any, cursor: str) -> None:
    add_memories(record_store, 2)
    with pytest.raises(InvalidInput) as caught:
        record_store.list_memories("acme", "agent-a", limit=1, cursor=cursor)
    assert [d["field"] for d in caught.value.details] == ["cursor"]


def test_deleted_memories_are_left_out_of_listings_but_still_readable(record_store: Any) -> None:
    memories = add_memories(record_store, 3)
    record_store.update_memory("acme", "agent-a", memories[1].memory_id, status="deleted")
    listed = [m.memory_id for m in record_store.list_memories("acme", "agent-a", limit=10).items]
    assert listed == [memories[2].memory_id, memories[0].memory_id]
    assert record_store.get_memory("acme", "agent-a", memories[1].memory_id).status == "deleted"


def test_a_deleted_memory_stays_deleted_whatever_is_written_after(record_store: Any) -> None:
    memory = add_memories(record_store, 1)[0]
    record_store.update_memory("acme", "agent-a", memory.memory_id, status="deleted")
    for change in ({"status": "indexed"}, {"status": "pending"}, {"importance": 1.5}, {"status": "deleted"}):
        with pytest.raises(NotFound):
            record_store.update_memory("acme", "agent-a", memory.memory_id, **change)
    assert record_store.get_memory("acme", "agent-a", memory.memory_id).status == "deleted"
    assert record_store.list_memories("acme", "agent-a", limit=10).items == []


def test_a_comment_vector_is_stored_with_the_status_and_kept_by_later_updates(record_store: Any) -> None:
    memory = add_memories(record_store, 1)[0]
    assert record_store.get_memory("acme", "agent-a", memory.memory_id).comment_vector is None
    vector = bytes(range(256)) * 6  # 384 float32s' worth of bytes, every byte value
    updated = record_store.update_memory("acme", "agent-a", memory.memory_id, status="indexed", comment_vector=vector)
    assert updated.comment_vector == vector
    record_store.update_memory("acme", "agent-a", memory.memory_id, importance=2.0)
    again = record_store.get_memory("acme", "agent-a", memory.memory_id)
    assert again.comment_vector == vector and again.importance == 2.0 and again.status == "indexed"
    assert [m.comment_vector for m in record_store.get_memories("acme", "agent-a", [memory.memory_id])] == [vector]


def test_update_memory_changes_importance_and_status_and_returns_the_memory(record_store: Any) -> None:
    memory = add_memories(record_store, 1)[0]
    updated = record_store.update_memory("acme", "agent-a", memory.memory_id, importance=1.5)
    assert (updated.importance, updated.status) == (1.5, "pending")
    assert updated.updated_at is not None
    updated = record_store.update_memory("acme", "agent-a", memory.memory_id, status="indexed")
    assert (updated.importance, updated.status) == (1.5, "indexed")
    assert record_store.get_memory("acme", "agent-a", memory.memory_id) == updated


def test_update_of_an_unknown_memory_is_not_found(record_store: Any) -> None:
    add_memories(record_store, 1)
    with pytest.raises(NotFound):
        record_store.update_memory("acme", "agent-a", "nope", importance=0.3)
    with pytest.raises(NotFound):
        record_store.update_memory("acme", "agent-a", "nope", status="indexed")
    assert record_store.get_memory("acme", "agent-a", "nope") is None


def test_pending_memories_are_listed_until_they_are_indexed(record_store: Any) -> None:
    a = add_memories(record_store, 2, agent="agent-a")
    b = add_memories(record_store, 1, agent="agent-b")
    pending = record_store.list_memories_by_status("acme", "pending", limit=10)
    assert sorted(m.memory_id for m in pending) == sorted(m.memory_id for m in a + b)
    assert {m.agent_id for m in pending} == {"agent-a", "agent-b"}

    record_store.update_memory("acme", "agent-a", a[0].memory_id, status="indexed")
    record_store.update_memory("acme", "agent-b", b[0].memory_id, status="deleted")
    pending = record_store.list_memories_by_status("acme", "pending", limit=10)
    assert [m.memory_id for m in pending] == [a[1].memory_id]
    indexed = record_store.list_memories_by_status("acme", "indexed", limit=10)
    assert [m.memory_id for m in indexed] == [a[0].memory_id]


def test_pending_listing_honours_its_limit(record_store: Any) -> None:
    add_memories(record_store, 4)
    assert len(record_store.list_memories_by_status("acme", "pending", limit=2)) == 2


def test_record_injections_counts_each_injection(record_store: Any) -> None:
    memories = add_memories(record_store, 2)
    record_store.record_injections("acme", "agent-a", [memories[0].memory_id])
    record_store.record_injections("acme", "agent-a", [memories[0].memory_id, memories[1].memory_id])
    record_store.record_injections("acme", "agent-a", ["deleted-since"])
    record_store.record_injections("acme", "agent-a", [])
    counts = {
        m.memory_id: m.injected_count
        for m in record_store.get_memories("acme", "agent-a", [m.memory_id for m in memories])
    }
    assert counts == {memories[0].memory_id: 2, memories[1].memory_id: 1}
    assert record_store.get_memory("acme", "agent-a", "deleted-since") is None


def test_agents_with_memories_are_listed_per_tenant(record_store: Any) -> None:
    add_memories(record_store, 1, agent="agent-b")
    add_memories(record_store, 2, agent="agent-a")
    add_memories(record_store, 1, tenant="globex", agent="agent-z")
    record_store.put_run(make_run("lonely", agent="agent-c"))  # a run without feedback has no memory
    assert record_store.list_agents_with_memories("acme") == ["agent-a", "agent-b"]
    assert record_store.list_agents_with_memories("globex") == ["agent-z"]
    assert record_store.list_agents_with_memories("initech") == []


# Isolation


def test_the_same_ids_under_another_tenant_or_agent_are_invisible(record_store: Any) -> None:
    mine = add_memories(record_store, 2, tenant="acme", agent="agent-a")
    # Exactly the same run, feedback and memory ids, elsewhere.
    add_memories(record_store, 3, tenant="globex", agent="agent-a")
    add_memories(record_store, 3, tenant="acme", agent="agent-b")
    record_store.update_memory("globex", "agent-a", mine[0].memory_id, importance=0.3)

    assert record_store.get_memory("acme", "agent-a", mine[0].memory_id).importance == 1.0
    assert [m.memory_id for m in record_store.list_memories("acme", "agent-a", limit=10).items] == [
        mine[1].memory_id,
        mine[0].memory_id,
    ]
    assert all(
        m.tenant == "acme" and m.agent_id == "agent-a"
        for m in record_store.get_memories("acme", "agent-a", [m.memory_id for m in mine])
    )
    assert record_store.get_run("acme", "agent-a", "run-002") is None
    assert record_store.get_run("globex", "agent-a", "run-002") is not None
    assert {m.tenant for m in record_store.list_memories_by_status("globex", "pending", limit=10)} == {"globex"}
    with pytest.raises(NotFound):
        record_store.update_memory("initech", "agent-a", mine[0].memory_id, importance=0.3)


def test_a_cursor_of_one_agent_does_not_page_another(record_store: Any) -> None:
    add_memories(record_store, 3, agent="agent-a")
    add_memories(record_store, 3, agent="agent-b")
    cursor = record_store.list_memories("acme", "agent-a", limit=1).next_cursor
    assert cursor is not None
    try:
        page = record_store.list_memories("acme", "agent-b", limit=10, cursor=cursor)
    except InvalidInput:
        return  # refusing a foreign cursor is within the contract
    assert all(m.agent_id == "agent-b" and m.tenant == "acme" for m in page.items)


# Retention


def test_memories_created_before_a_time_are_listed_oldest_first_without_deleted_ones(record_store: Any) -> None:
    memories = add_memories(record_store, 5)
    record_store.update_memory("acme", "agent-a", memories[1].memory_id, status="deleted")
    add_memories(record_store, 2, agent="agent-b")

    expired = record_store.list_memories_created_before("acme", "agent-a", T0 + 3, limit=10)

    assert [m.memory_id for m in expired] == [memories[0].memory_id, memories[2].memory_id]
    assert [m.memory_id for m in record_store.list_memories_created_before("acme", "agent-a", T0 + 9, limit=2)] == [
        memories[0].memory_id, memories[2].memory_id]
    assert record_store.list_memories_created_before("acme", "agent-a", T0, limit=10) == []
    assert record_store.list_memories_created_before("other", "agent-a", T0 + 9, limit=10) == []
