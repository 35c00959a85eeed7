"""One contract for every FactStore adapter: SQLite locally, DynamoDB (under moto) in AWS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.domain.errors import InvalidInput
from agentmem.domain.facts import Fact

from tests.contract.conftest import TABLE_NAME, create_table


@pytest.fixture(params=["sqlite", "dynamodb"])
def fact_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from agentmem.adapters.local.fact_store import SqliteFactStore

        store = SqliteFactStore(tmp_path / "facts.db")
        yield store
        store.close()
    else:
        from agentmem.adapters.aws.dynamodb_facts import DynamoDbFactStore

        request.getfixturevalue("moto")
        create_table()
        yield DynamoDbFactStore(TABLE_NAME)


def fact(n: int, *, user: str = "ana", tenant: str = "acme", subject: str = "general", **kw: Any) -> Fact:
    fields: dict[str, Any] = {
        "tenant": tenant, "user_id": user, "fact_id": f"fact_{n:04d}", "text": f"User fact {n} ✓",
        "subject": subject, "thread_id": "t1", "source_seqs": [n, n + 1], "created_at": 1_700_000_000.25 + n,
        "valid_from": 1_700_000_000.25 + n,
    }
    return Fact(**{**fields, **kw})


def test_an_added_fact_reads_back_exactly(fact_store):
    assert fact_store.add(fact(1, subject="employer")) is True
    assert fact_store.get("acme", "ana", "fact_0001") == fact(1, subject="employer")
    assert fact_store.get("acme", "ana", "fact_9999") is None


def test_adding_a_fact_id_twice_writes_nothing_the_second_time(fact_store):
    assert fact_store.add(fact(1)) is True
    assert fact_store.add(fact(1, text="another text")) is False
    assert fact_store.get("acme", "ana", "fact_0001").text == "User fact 1 ✓"


def test_a_new_fact_supersedes_the_old_ones_with_their_validity_closed(fact_store):
    fact_store.add(fact(1, subject="employer"))
    fact_store.add(fact(2, subject="employer"))
    new = fact(3, subject="employer")

    assert fact_store.add(new, ["fact_0001", "fact_0002"]) is True

    for old_id in ("fact_0001", "fact_0002"):
        old = fact_store.get("acme", "ana", old_id)
        assert old.status == "superseded" and old.superseded_by == "fact_0003" and old.valid_to == new.valid_from
    assert fact_store.get("acme", "ana", "fact_0003").status == "active"


def test_facts_no_longer_active_or_missing_are_left_alone_when_superseding(fact_store):
    fact_store.add(fact(1))
    fact_store.add(fact(2), ["fact_0001"])
    fact_store.add(fact(3), ["fact_0001", "fact_0404"])
    old = fact_store.get("acme", "ana", "fact_0001")
    assert old.superseded_by == "fact_0002"  # not re-pointed at the later fact
    assert fact_store.get("acme", "ana", "fact_0404") is None
    assert fact_store.get("acme", "ana", "fact_0003").status == "active"


def test_listing_is_newest_first_active_only_unless_asked_and_pages(fact_store):
    for n in range(1, 6):
        fact_store.add(fact(n))
    fact_store.add(fact(6), ["fact_0005"])
    first = fact_store.list_facts("acme", "ana", limit=2)
    assert [f.fact_id for f in first.items] == ["fact_0006", "fact_0004"] and first.next_cursor
    rest = fact_store.list_facts("acme", "ana", limit=10, cursor=first.next_cursor)
    assert [f.fact_id for f in rest.items] == ["fact_0003", "fact_0002", "fact_0001"]
    assert rest.next_cursor is None
    everything = fact_store.list_facts("acme", "ana", limit=10, include_superseded=True)
    assert [f.fact_id for f in everything.items] == [f"fact_{n:04d}" for n in range(6, 0, -1)]


@pytest.mark.parametrize("cursor", ["nonsense", "WyJ4IiwgMV0"])
def test_a_cursor_this_store_did_not_return_is_invalid_input(fact_store, cursor):
    with pytest.raises(InvalidInput):
        fact_store.list_facts("acme", "ana", limit=2, cursor=cursor)


def test_subjects_are_those_of_active_facts(fact_store):
    fact_store.add(fact(1, subject="employer"))
    fact_store.add(fact(2, subject="skill:python"))
    fact_store.add(fact(3, subject="home_location"), ["fact_0001"])
    assert fact_store.subjects("acme", "ana") == ["home_location", "skill:python"]


def test_get_many_returns_those_that_exist(fact_store):
    for n in range(1, 4):
        fact_store.add(fact(n))
    found = fact_store.get_many("acme", "ana", ["fact_0003", "fact_0001", "fact_0404", "fact_0001"])
    assert sorted(f.fact_id for f in found) == ["fact_0001", "fact_0003"]
    assert fact_store.get_many("acme", "ana", []) == []


def test_deleting_removes_the_fact_for_good(fact_store):
    fact_store.add(fact(1))
    assert fact_store.delete("acme", "ana", "fact_0001") is True
    assert fact_store.get("acme", "ana", "fact_0001") is None
    assert fact_store.delete("acme", "ana", "fact_0001") is False


def test_users_and_tenants_are_apart_and_deleting_a_user_removes_only_theirs(fact_store):
    for n in range(1, 4):
        fact_store.add(fact(n))
    fact_store.add(fact(1, user="bob"))
    fact_store.add(fact(1, tenant="other"))
    assert fact_store.get("acme", "bob", "fact_0002") is None

    assert fact_store.delete_user("acme", "ana") == 3

    assert fact_store.list_facts("acme", "ana", limit=10, include_superseded=True).items == []
    assert fact_store.get("acme", "bob", "fact_0001") == fact(1, user="bob")
    assert fact_store.get("other", "ana", "fact_0001") == fact(1, tenant="other")
    assert fact_store.delete_user("acme", "ana") == 0


def test_setting_a_facts_text_changes_only_its_text_and_reads_back(fact_store):
    original = fact(1, subject="home")
    fact_store.add(original)

    updated = fact_store.set_text("acme", "ana", "fact_0001", "User lives in {{PII_LOCATION_0a1b2c3d_1}} ✓")

    assert updated == Fact(**{**original.__dict__, "text": "User lives in {{PII_LOCATION_0a1b2c3d_1}} ✓"})
    assert fact_store.get("acme", "ana", "fact_0001") == updated


def test_setting_the_text_of_a_fact_that_does_not_exist_writes_nothing(fact_store):
    fact_store.add(fact(1))

    assert fact_store.set_text("acme", "ana", "fact_0009", "new") is None
    assert fact_store.set_text("acme", "bob", "fact_0001", "new") is None
    assert fact_store.get("acme", "bob", "fact_0001") is None
    assert fact_store.get("acme", "ana", "fact_0001").text == "User fact 1 ✓"
