"""One contract for every ProfileStore adapter: SQLite locally, DynamoDB (under moto) in AWS."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.domain.errors import Conflict, InvalidInput
from agentmem.ports.profiles import ProfileVersion

from tests.contract.conftest import TABLE_NAME, create_table


@pytest.fixture(params=["sqlite", "dynamodb"])
def profile_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from agentmem.adapters.local.profile_store import SqliteProfileStore

        store = SqliteProfileStore(tmp_path / "profiles.db")
        yield store
        store.close()
    else:
        from agentmem.adapters.aws.dynamodb_profiles import DynamoDbProfileStore

        request.getfixturevalue("moto")
        create_table()
        yield DynamoDbProfileStore(TABLE_NAME)


def version(n: int, body: str = "", *, user: str = "ana", tenant: str = "acme", **kw: Any) -> ProfileVersion:
    fields: dict[str, Any] = {
        "tenant": tenant, "user_id": user, "version": n, "body": body or f"## body {n}\n",
        "updated_at": 1_700_000_000.5 + n, "turn_count": 2 * n, "schema_version": 1, "source": "consolidation",
    }
    return ProfileVersion(**{**fields, **kw})


def test_a_user_without_a_profile_has_no_current_version(profile_store):
    assert profile_store.current("acme", "ana") is None
    assert profile_store.get_version("acme", "ana", 1) is None
    assert profile_store.list_versions("acme", "ana", limit=5).items == []


def test_saved_versions_read_back_exactly(profile_store):
    first = version(1)
    second = version(2, "## Identity\n- Name: Ana ✓\n", source="restore", restored_from=1,
                     consolidated={"t1": 4, "thread:2@x": 12})
    profile_store.save(first)
    profile_store.save(second)
    assert profile_store.current("acme", "ana") == second
    assert profile_store.get_version("acme", "ana", 1) == first


def test_a_version_is_written_only_on_top_of_the_one_before_it(profile_store):
    profile_store.save(version(1))
    with pytest.raises(Conflict):
        profile_store.save(version(1, "## a rival first version\n"))
    with pytest.raises(Conflict):
        profile_store.save(version(3))
    assert profile_store.current("acme", "ana") == version(1)
    profile_store.save(version(2))
    assert profile_store.current("acme", "ana").version == 2


def test_a_first_version_needs_no_profile_to_exist(profile_store):
    with pytest.raises(Conflict):
        profile_store.save(version(2))
    profile_store.save(version(1))


def test_concurrent_writers_never_overwrite_each_other(profile_store):
    if type(profile_store).__name__.startswith("DynamoDb"):
        pytest.skip("moto checks transaction conditions without serialising concurrent transactions, as "
                    "DynamoDB does; the condition itself is checked by the sequential conflict tests")
    written: list[int] = []
    lock = threading.Lock()

    def writer(name: str) -> None:
        for _ in range(5):
            while True:
                current = profile_store.current("acme", "ana")
                n = (current.version if current else 0) + 1
                try:
                    profile_store.save(version(n, f"## by {name}\n"))
                except Conflict:
                    continue
                with lock:
                    written.append(n)
                break

    threads = [threading.Thread(target=writer, args=(f"w{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(written) == list(range(1, 16))
    assert profile_store.current("acme", "ana").version == 15


def test_versions_list_newest_first_page_by_page(profile_store):
    for n in range(1, 6):
        profile_store.save(version(n))
    first = profile_store.list_versions("acme", "ana", limit=2)
    assert [v.version for v in first.items] == [5, 4] and first.next_cursor
    second = profile_store.list_versions("acme", "ana", limit=2, cursor=first.next_cursor)
    assert [v.version for v in second.items] == [3, 2]
    last = profile_store.list_versions("acme", "ana", limit=2, cursor=second.next_cursor)
    assert [v.version for v in last.items] == [1] and last.next_cursor is None


@pytest.mark.parametrize("cursor", ["nonsense", "eyJiZWxvdyI6IC0xfQ", "W10"])
def test_a_cursor_this_store_did_not_return_is_invalid_input(profile_store, cursor):
    with pytest.raises(InvalidInput):
        profile_store.list_versions("acme", "ana", limit=2, cursor=cursor)


def test_users_and_tenants_are_apart_and_deleting_a_user_removes_only_theirs(profile_store):
    profile_store.save(version(1, user="ana"))
    profile_store.save(version(2, user="ana"))
    profile_store.save(version(1, user="bob"))
    profile_store.save(version(1, user="ana", tenant="other"))

    profile_store.delete_user("acme", "ana")

    assert profile_store.current("acme", "ana") is None
    assert profile_store.list_versions("acme", "ana", limit=10).items == []
    assert profile_store.current("acme", "bob") == version(1, user="bob")
    assert profile_store.current("other", "ana") == version(1, user="ana", tenant="other")
    profile_store.delete_user("acme", "ana")  # idempotent
    profile_store.save(version(1, user="ana"))  # a fresh start after erasure
