"""The TranscriptStore contract: SqliteTranscriptStore and DynamoDbTranscriptStore (moto) behave alike."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.domain.errors import Conflict, InvalidInput
from agentmem.ports.transcripts import (
    APPEND_KEY_SECONDS,
    AppendKey,
    NewTurn,
    StoredTurn,
    encode_turn_cursor,
    turns_fingerprint,
)

from tests.contract.conftest import TABLE_NAME, create_table

T0 = 1_750_000_000.0


@pytest.fixture(params=["sqlite", "dynamodb"])
def transcripts(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from agentmem.adapters.local.transcript_store import SqliteTranscriptStore

        store = SqliteTranscriptStore(tmp_path / "transcripts.db")
        yield store
        store.close()
    else:
        from agentmem.adapters.aws.dynamodb_transcripts import DynamoDbTranscriptStore

        request.getfixturevalue("moto")
        create_table()
        yield DynamoDbTranscriptStore(TABLE_NAME, sleep=lambda _: None)


def turns(*contents: str) -> list[NewTurn]:
    roles = ("user", "assistant")
    return [NewTurn(role=roles[i % 2], content=c, tokens=len(c)) for i, c in enumerate(contents)]


def append_numbered(store: Any, count: int, *, tenant: str = "acme", user: str = "alice", thread: str = "t1") -> None:
    for n in range(count):
        store.append(tenant, user, thread, turns(f"turn {n}"), T0 + n)


def contents(stored: list[StoredTurn]) -> list[str]:
    return [t.content for t in stored]


def test_appends_get_consecutive_seqs_from_one_and_read_back_whole(transcripts: Any) -> None:
    first = transcripts.append("acme", "alice", "t1", turns("hello", "hi there"), T0)
    second = transcripts.append("acme", "alice", "t1", turns("again"), T0 + 1)

    assert [t.seq for t in first + second] == [1, 2, 3]
    assert first[1] == StoredTurn("acme", "alice", "t1", 2, "assistant", "hi there", 8, T0)
    assert transcripts.list_turns("acme", "alice", "t1", limit=10).items == first + second


def test_every_thread_counts_its_own_seqs(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("a", "b"), T0)
    other = transcripts.append("acme", "alice", "t2", turns("c"), T0)
    assert other[0].seq == 1


def test_an_empty_append_stores_nothing(transcripts: Any) -> None:
    assert transcripts.append("acme", "alice", "t1", [], T0) == []
    assert not transcripts.thread_exists("acme", "alice", "t1")


def test_pages_walk_the_thread_oldest_first_without_gaps_or_repeats(transcripts: Any) -> None:
    append_numbered(transcripts, 7)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = transcripts.list_turns("acme", "alice", "t1", limit=3, cursor=cursor)
        seen += contents(page.items)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [f"turn {n}" for n in range(7)]
    assert pages == 3


def test_a_page_that_ends_the_thread_has_no_cursor(transcripts: Any) -> None:
    append_numbered(transcripts, 3)
    assert transcripts.list_turns("acme", "alice", "t1", limit=3).next_cursor is None


@pytest.mark.parametrize("cursor", ["not-a-cursor", "eyJzIjotMSwidCI6IngifQ", ""])
def test_a_cursor_not_returned_by_this_api_is_invalid_input(transcripts: Any, cursor: str) -> None:
    append_numbered(transcripts, 2)
    if cursor == "":
        cursor = encode_turn_cursor("acme", "alice", "other-thread", 1)
    with pytest.raises(InvalidInput) as raised:
        transcripts.list_turns("acme", "alice", "t1", limit=1, cursor=cursor)
    assert raised.value.details == [{"field": "cursor", "message": "not a cursor this API returned"}]


def test_a_cursor_of_another_user_or_tenant_is_refused(transcripts: Any) -> None:
    append_numbered(transcripts, 2)
    for tenant, user in (("acme", "bob"), ("globex", "alice")):
        with pytest.raises(InvalidInput):
            transcripts.list_turns("acme", "alice", "t1", limit=1, cursor=encode_turn_cursor(tenant, user, "t1", 1))


def test_newest_turns_are_the_last_ones_oldest_first(transcripts: Any) -> None:
    append_numbered(transcripts, 12)
    assert contents(transcripts.newest_turns("acme", "alice", "t1", 4)) == [f"turn {n}" for n in range(8, 12)]
    assert len(transcripts.newest_turns("acme", "alice", "t1", 50)) == 12
    assert transcripts.newest_turns("acme", "alice", "t1", 0) == []
    assert transcripts.newest_turns("acme", "alice", "nothing-here", 5) == []


def test_no_read_reaches_another_user_or_tenant(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("alice's"), T0)
    transcripts.append("acme", "bob", "t1", turns("bob's"), T0)
    transcripts.append("globex", "alice", "t1", turns("globex alice's"), T0)

    assert contents(transcripts.list_turns("acme", "alice", "t1", limit=10).items) == ["alice's"]
    assert contents(transcripts.newest_turns("acme", "bob", "t1", 10)) == ["bob's"]
    assert contents(transcripts.newest_turns("globex", "alice", "t1", 10)) == ["globex alice's"]
    assert not transcripts.thread_exists("acme", "carol", "t1")


def test_deleting_a_user_removes_all_their_threads_and_nothing_else(transcripts: Any) -> None:
    for thread in ("t1", "t2", "t3"):
        append_numbered(transcripts, 3, thread=thread)
    transcripts.append("acme", "bob", "t1", turns("bob's"), T0)
    transcripts.append("globex", "alice", "t1", turns("globex alice's"), T0)

    transcripts.delete_user("acme", "alice")
    transcripts.delete_user("acme", "alice")

    for thread in ("t1", "t2", "t3"):
        assert not transcripts.thread_exists("acme", "alice", thread)
        assert transcripts.list_turns("acme", "alice", thread, limit=10).items == []
    assert contents(transcripts.newest_turns("acme", "bob", "t1", 10)) == ["bob's"]
    assert transcripts.thread_exists("globex", "alice", "t1")
    # A thread appended to after an erase starts again at seq 1.
    assert transcripts.append("acme", "alice", "t1", turns("fresh"), T0)[0].seq == 1


class InterleavingClient:
    """A DynamoDB client that lets another writer append to the thread just before each of our first
    `times` transactions: the race two Lambda containers run when they append to one thread at once."""

    def __init__(self, inner: Any, other_writer: Any, times: int, *, key: AppendKey | None = None,
                 content: str = "from the other writer") -> None:
        self.inner, self.other_writer, self.left = inner, other_writer, times
        self.key, self.content = key, content

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def transact_write_items(self, **request: Any) -> Any:
        if self.left > 0:
            self.left -= 1
            self.other_writer.append("acme", "alice", "t1", turns(self.content), T0, key=self.key)
        return self.inner.transact_write_items(**request)


def test_two_writers_never_share_a_seq(transcripts: Any) -> None:
    if type(transcripts).__name__ == "DynamoDbTranscriptStore":
        import boto3
        from agentmem.adapters.aws.dynamodb_transcripts import DynamoDbTranscriptStore

        other = DynamoDbTranscriptStore(TABLE_NAME)
        racing = DynamoDbTranscriptStore(
            TABLE_NAME, InterleavingClient(boto3.client("dynamodb"), other, times=2), sleep=lambda _: None
        )
        racing.append("acme", "alice", "t1", turns("mine", "mine too"), T0)
    else:
        # SQLite takes the write lock before reading the last seq: real threads cannot interleave.
        def writer() -> None:
            for _ in range(5):
                transcripts.append("acme", "alice", "t1", turns("x", "y"), T0)

        threads = [threading.Thread(target=writer) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    stored = transcripts.list_turns("acme", "alice", "t1", limit=100).items
    assert [t.seq for t in stored] == list(range(1, len(stored) + 1))
    if type(transcripts).__name__ == "DynamoDbTranscriptStore":
        assert contents(stored) == ["from the other writer"] * 2 + ["mine", "mine too"]
    else:
        assert len(stored) == 40


def test_get_turns_reads_named_turns_across_threads_in_the_order_asked(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("one", "two", "three"), T0)
    transcripts.append("acme", "alice", "t2", turns("other"), T0 + 1)
    transcripts.append("acme", "bob", "t1", turns("bob's"), T0)

    got = transcripts.get_turns("acme", "alice", [("t2", 1), ("t1", 3), ("t1", 9), ("t3", 1), ("t1", 1)])

    assert [(t.thread_id, t.seq, t.content) for t in got] == [("t2", 1, "other"), ("t1", 3, "three"), ("t1", 1, "one")]
    assert transcripts.get_turns("acme", "bob", [("t1", 1)])[0].content == "bob's"
    assert transcripts.get_turns("acme", "carol", [("t1", 1)]) == []
    assert transcripts.get_turns("acme", "alice", []) == []


# -- deleting a tail or a thread ---------------------------------------------------------------------


def test_truncate_removes_the_tail_returns_it_and_the_next_append_continues_after_the_kept_turns(
    transcripts: Any,
) -> None:
    append_numbered(transcripts, 5)
    removed = transcripts.truncate("acme", "alice", "t1", 4)

    assert [(t.seq, t.content) for t in removed] == [(4, "turn 3"), (5, "turn 4")]
    assert [t.seq for t in transcripts.list_turns("acme", "alice", "t1", limit=10).items] == [1, 2, 3]
    again = transcripts.append("acme", "alice", "t1", turns("after"), T0 + 9)
    assert [t.seq for t in again] == [4]
    assert contents(transcripts.newest_turns("acme", "alice", "t1", 2)) == ["turn 2", "after"]
    assert transcripts.truncate("acme", "alice", "t1", 9) == []  # past the end: nothing, idempotent
    assert [t.seq for t in transcripts.append("acme", "alice", "t1", turns("next"), T0 + 10)] == [5]


def test_truncating_from_the_first_turn_removes_the_thread_and_no_other(transcripts: Any) -> None:
    append_numbered(transcripts, 3)
    append_numbered(transcripts, 2, thread="t2")
    append_numbered(transcripts, 2, user="bob")

    assert len(transcripts.truncate("acme", "alice", "t1", 1)) == 3
    assert not transcripts.thread_exists("acme", "alice", "t1")
    assert transcripts.has_threads("acme", "alice")  # t2 is left
    assert transcripts.list_turns("acme", "alice", "t1", limit=10).items == []
    assert len(transcripts.list_turns("acme", "alice", "t2", limit=10).items) == 2
    assert len(transcripts.list_turns("acme", "bob", "t1", limit=10).items) == 2
    assert [t.seq for t in transcripts.append("acme", "alice", "t1", turns("new"), T0)] == [1]
    assert transcripts.truncate("acme", "alice", "gone", 1) == []
    transcripts.truncate("acme", "alice", "t1", 1)
    transcripts.truncate("acme", "alice", "t2", 1)
    assert not transcripts.has_threads("acme", "alice") and transcripts.has_threads("acme", "bob")


def test_append_keys_are_found_by_the_seqs_their_appends_stored_and_go_with_them(transcripts: Any) -> None:
    append_numbered(transcripts, 6)
    append_numbered(transcripts, 6, thread="t2")
    transcripts.remember_append_key("acme", "alice", "t1", 2, "k-first")
    transcripts.remember_append_key("acme", "alice", "t1", 4, "k-second")
    transcripts.remember_append_key("acme", "alice", "t1", 6, "k-third")
    transcripts.remember_append_key("acme", "alice", "t2", 6, "k-other-thread")

    assert transcripts.append_keys("acme", "alice", "t1", 4) == ["k-second", "k-third"]
    transcripts.truncate("acme", "alice", "t1", 5)
    assert transcripts.append_keys("acme", "alice", "t1", 1) == ["k-first", "k-second"]
    transcripts.delete_user("acme", "alice")
    assert transcripts.append_keys("acme", "alice", "t1", 1) == []
    assert transcripts.append_keys("acme", "alice", "t2", 1) == []


def test_a_users_append_keys_are_listed_across_their_threads_and_no_one_elses(transcripts: Any) -> None:
    append_numbered(transcripts, 2)
    append_numbered(transcripts, 2, thread="t2")
    append_numbered(transcripts, 2, user="bob")
    transcripts.remember_append_key("acme", "alice", "t1", 2, "k-one")
    transcripts.remember_append_key("acme", "alice", "t2", 2, "k-two")
    transcripts.remember_append_key("acme", "bob", "t1", 2, "k-bob")

    assert sorted(transcripts.user_append_keys("acme", "alice")) == [("t1", "k-one"), ("t2", "k-two")]
    transcripts.delete_user("acme", "alice")
    assert transcripts.user_append_keys("acme", "alice") == []
    assert transcripts.user_append_keys("acme", "bob") == [("t1", "k-bob")]


# -- an append's Idempotency-Key, stored with its turns ------------------------------------------------


def keyed(key: str, *contents: str) -> AppendKey:
    roles = ("user", "assistant")
    return AppendKey(key, turns_fingerprint([(roles[i % 2], c) for i, c in enumerate(contents)]))


def test_an_append_sent_again_with_its_key_gets_the_first_turns_and_stores_nothing(transcripts: Any) -> None:
    first = transcripts.append("acme", "alice", "t1", turns("hello", "hi"), T0, key=keyed("k1", "hello", "hi"))
    transcripts.append("acme", "alice", "t1", turns("later"), T0 + 1)

    again = transcripts.append("acme", "alice", "t1", turns("hello", "hi"), T0 + 5, key=keyed("k1", "hello", "hi"))

    assert again == first and [t.seq for t in again] == [1, 2]
    assert contents(transcripts.list_turns("acme", "alice", "t1", limit=10).items) == ["hello", "hi", "later"]


def test_an_append_key_sent_with_other_turns_is_a_conflict_and_stores_nothing(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("hello"), T0, key=keyed("k1", "hello"))
    with pytest.raises(Conflict):
        transcripts.append("acme", "alice", "t1", turns("other"), T0 + 1, key=keyed("k1", "other"))
    assert contents(transcripts.list_turns("acme", "alice", "t1", limit=10).items) == ["hello"]


def test_an_append_key_belongs_to_its_thread_and_user(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("hello"), T0, key=keyed("k1", "hello"))
    assert transcripts.append("acme", "alice", "t2", turns("hello"), T0, key=keyed("k1", "hello"))[0].thread_id == "t2"
    assert transcripts.append("acme", "bob", "t1", turns("hello"), T0, key=keyed("k1", "hello"))[0].user_id == "bob"
    assert len(transcripts.list_turns("acme", "alice", "t2", limit=10).items) == 1
    assert len(transcripts.list_turns("acme", "bob", "t1", limit=10).items) == 1


def test_an_append_key_older_than_its_lifetime_appends_again(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("hello"), T0, key=keyed("k1", "hello"))
    later = transcripts.append("acme", "alice", "t1", turns("hello"), T0 + APPEND_KEY_SECONDS + 1,
                               key=keyed("k1", "hello"))
    assert [t.seq for t in later] == [2]
    # ... and the key now answers for the new append.
    assert transcripts.append("acme", "alice", "t1", turns("hello"), T0 + APPEND_KEY_SECONDS + 2,
                              key=keyed("k1", "hello")) == later


def test_append_keys_never_show_up_as_turns(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("one", "two"), T0, key=keyed("k1", "one", "two"))
    assert contents(transcripts.newest_turns("acme", "alice", "t1", 10)) == ["one", "two"]
    assert contents(transcripts.list_turns("acme", "alice", "t1", limit=10).items) == ["one", "two"]


def test_erasing_a_user_forgets_their_append_keys(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("hello"), T0, key=keyed("k1", "hello"))
    transcripts.delete_user("acme", "alice")
    fresh = transcripts.append("acme", "alice", "t1", turns("hello"), T0 + 1, key=keyed("k1", "hello"))
    assert [t.seq for t in fresh] == [1]
    assert len(transcripts.list_turns("acme", "alice", "t1", limit=10).items) == 1


def test_two_appends_with_one_key_at_once_store_the_turns_once(transcripts: Any) -> None:
    key = keyed("k1", "hello")
    if type(transcripts).__name__ == "DynamoDbTranscriptStore":
        import boto3
        from agentmem.adapters.aws.dynamodb_transcripts import DynamoDbTranscriptStore

        # The other request commits the same key between our check and our transaction.
        other = DynamoDbTranscriptStore(TABLE_NAME)
        racing = DynamoDbTranscriptStore(
            TABLE_NAME, InterleavingClient(boto3.client("dynamodb"), other, times=1, key=key, content="hello"),
            sleep=lambda _: None,
        )
        answers = [racing.append("acme", "alice", "t1", turns("hello"), T0, key=key)]
    else:
        answers = []

        def writer() -> None:
            answers.append(transcripts.append("acme", "alice", "t1", turns("hello"), T0, key=key))

        threads = [threading.Thread(target=writer) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    stored = transcripts.list_turns("acme", "alice", "t1", limit=10).items
    assert contents(stored) == ["hello"]
    assert all(answer == stored for answer in answers) and answers


def test_a_keyed_append_whose_turns_were_deleted_appends_again(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("kept"), T0)
    transcripts.append("acme", "alice", "t1", turns("hello", "hi"), T0 + 1, key=keyed("k1", "hello", "hi"))
    transcripts.truncate("acme", "alice", "t1", 3)  # only "hi" goes: the key answers no more
    again = transcripts.append("acme", "alice", "t1", turns("hello", "hi"), T0 + 2, key=keyed("k1", "hello", "hi"))
    assert [t.seq for t in again] == [3, 4]
    assert contents(transcripts.list_turns("acme", "alice", "t1", limit=10).items) == ["kept", "hello", "hello", "hi"]
    transcripts.truncate("acme", "alice", "t1", 2)
    again = transcripts.append("acme", "alice", "t1", turns("hello", "hi"), T0 + 3, key=keyed("k1", "hello", "hi"))
    assert [t.seq for t in again] == [2, 3]
    assert contents(transcripts.list_turns("acme", "alice", "t1", limit=10).items) == ["kept", "hello", "hi"]


# Listing users and threads


def test_users_are_listed_by_id_from_their_first_turn_with_when_they_were_first_seen(transcripts: Any) -> None:
    transcripts.append("acme", "bob", "t1", turns("hi"), T0 + 5)
    transcripts.append("acme", "alice", "t1", turns("hi"), T0)
    transcripts.append("acme", "alice", "t2", turns("again"), T0 + 9)
    transcripts.append("other", "carol", "t1", turns("hi"), T0)

    page = transcripts.list_users("acme", limit=10)

    assert [(u.user_id, u.created_at) for u in page.items] == [("alice", T0), ("bob", T0 + 5)]
    assert page.next_cursor is None


def test_users_page_through_every_user_once_and_filter_by_prefix(transcripts: Any) -> None:
    ids = ["a-1", "a-2", "a-3", "a_4", "ab", "b-1"]
    for n, user in enumerate(ids):
        transcripts.append("acme", user, "t1", turns("hi"), T0 + n)

    seen, cursor = [], None
    while True:
        page = transcripts.list_users("acme", limit=2, cursor=cursor)
        seen += [u.user_id for u in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    prefixed = transcripts.list_users("acme", limit=2, prefix="a-")
    rest = transcripts.list_users("acme", limit=2, prefix="a-", cursor=prefixed.next_cursor)

    assert seen == ids
    assert [u.user_id for u in prefixed.items + rest.items] == ["a-1", "a-2", "a-3"]
    assert rest.next_cursor is None


def test_a_users_cursor_of_another_prefix_or_tenant_is_invalid_input(transcripts: Any) -> None:
    for user in ("a-1", "a-2", "a-3"):
        transcripts.append("acme", user, "t1", turns("hi"), T0)
    cursor = transcripts.list_users("acme", limit=1).next_cursor

    for tenant, prefix, bad in (("acme", "a-", cursor), ("other", "", cursor), ("acme", "", "not-a-cursor")):
        with pytest.raises(InvalidInput):
            transcripts.list_users(tenant, limit=1, prefix=prefix, cursor=bad)


def test_an_erased_user_is_not_listed_but_one_whose_threads_were_deleted_still_is(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("hi"), T0)
    transcripts.append("acme", "bob", "t1", turns("hi"), T0)
    transcripts.truncate("acme", "bob", "t1", 1)

    transcripts.delete_user("acme", "alice")

    assert [u.user_id for u in transcripts.list_users("acme", limit=10).items] == ["bob"]


def test_threads_are_listed_newest_activity_first_with_their_last_seq(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "old", turns("a", "b"), T0)
    transcripts.append("acme", "alice", "busy", turns("a"), T0 + 1)
    transcripts.append("acme", "alice", "new", turns("a"), T0 + 2)
    transcripts.append("acme", "alice", "busy", turns("b", "c"), T0 + 3)
    transcripts.append("acme", "bob", "theirs", turns("a"), T0 + 4)

    page = transcripts.list_threads("acme", "alice", limit=10)

    assert [(t.thread_id, t.last_seq, t.last_activity_at) for t in page.items] == [
        ("busy", 3, T0 + 3), ("new", 1, T0 + 2), ("old", 2, T0),
    ]
    assert page.next_cursor is None


def test_threads_page_through_every_thread_once_ties_broken_by_thread_id(transcripts: Any) -> None:
    for thread in ("t1", "t2", "t3", "t4", "t5"):
        transcripts.append("acme", "alice", thread, turns("a"), T0)

    seen, cursor = [], None
    while True:
        page = transcripts.list_threads("acme", "alice", limit=2, cursor=cursor)
        seen += [t.thread_id for t in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break

    assert seen == ["t5", "t4", "t3", "t2", "t1"]


def test_a_deleted_thread_is_not_listed_and_a_threads_cursor_of_another_user_is_invalid(transcripts: Any) -> None:
    transcripts.append("acme", "alice", "t1", turns("a"), T0)
    transcripts.append("acme", "alice", "t2", turns("a"), T0 + 1)
    transcripts.append("acme", "alice", "t3", turns("a"), T0 + 2)
    transcripts.truncate("acme", "alice", "t2", 1)
    cursor = transcripts.list_threads("acme", "alice", limit=1).next_cursor

    assert [t.thread_id for t in transcripts.list_threads("acme", "alice", limit=10).items] == ["t3", "t1"]
    assert transcripts.list_threads("acme", "nobody", limit=10).items == []
    with pytest.raises(InvalidInput):
        transcripts.list_threads("acme", "bob", limit=1, cursor=cursor)
