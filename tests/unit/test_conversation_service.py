"""ConversationService on the embedded adapters: masking, the vault's keys, erasure, events."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from agentmem.adapters.local.event_bus import SqliteEventBus
from agentmem.adapters.local.key_file import LocalKeyFile
from agentmem.adapters.local.key_store import SqliteKeyStore
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
from agentmem.adapters.local.vault_store import SqliteVaultStore
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.domain.envelope import DataKeyCache, encryption_context, token_scope_hash
from agentmem.domain.errors import BackendUnavailable, NotFound
from agentmem.domain.pii import find_tokens
from agentmem.ports.vault import GeneratedKey
from agentmem.ports.vectors import VectorItem, VectorQuery
from agentmem.service.conversations import TURNS_APPENDED, ConversationService, TurnInput

EMAIL = "jane.doe@example.com"
CARD = "4111 1111 1111 1111"


class CountingKeys:
    """The real local key file, counting the calls that would be KMS calls in AWS."""

    def __init__(self, inner: LocalKeyFile) -> None:
        self.inner = inner
        self.calls: dict[str, int] = {"generate": 0, "unwrap": 0, "thread_hash": 0}

    def generate_data_key(self, context: Mapping[str, str]) -> GeneratedKey:
        self.calls["generate"] += 1
        return self.inner.generate_data_key(context)

    def unwrap(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        self.calls["unwrap"] += 1
        return self.inner.unwrap(wrapped, context)

    def rewrap(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        return self.inner.rewrap(wrapped, context)

    def thread_hash(self, tenant: str, user_id: str, thread_id: str) -> str:
        self.calls["thread_hash"] += 1
        return self.inner.thread_hash(tenant, user_id, thread_id)


class BrokenDetector:
    def detect(self, text: str) -> list[Any]:
        raise ConnectionError("Comprehend unreachable")


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[dict[str, Any]]:
    transcripts = SqliteTranscriptStore(tmp_path / "transcripts.db")
    vault = SqliteVaultStore(tmp_path / "vault.db")
    key_store = SqliteKeyStore(tmp_path / "keys.db")
    bus = SqliteEventBus(tmp_path / "events.db")
    vectors = LocalVectorIndex(tmp_path / "vectors.db")
    yield {
        "transcripts": transcripts, "vault": vault, "key_store": key_store, "bus": bus, "vectors": vectors,
        "keys": CountingKeys(LocalKeyFile(tmp_path / "vault.key")),
    }
    for part in (transcripts, vault, key_store, bus, vectors):
        part.close()


def make_service(parts: dict[str, Any], tenant: str = "acme", **overrides: Any) -> ConversationService:
    arguments: dict[str, Any] = {
        "tenant": tenant, "transcripts": parts["transcripts"], "vault": parts["vault"],
        "key_store": parts["key_store"], "keys": parts["keys"],
        "detector": RegexPiiDetector(), "bus": parts["bus"], "vectors": parts["vectors"],
    }
    return ConversationService(**{**arguments, **overrides})


def user_says(*texts: str) -> list[TurnInput]:
    return [TurnInput("user", text) for text in texts]


def test_the_same_value_gets_the_same_token_across_appends(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    first = service.append_turns("alice", "t1", user_says(f"mail {EMAIL}", f"card {CARD} and {EMAIL}"))
    later = service.append_turns("alice", "t1", user_says(f"again {EMAIL}"))

    email_token = find_tokens(first[0].content)[0].token
    assert first[1].content == f"card {find_tokens(first[1].content)[0].token} and {email_token}"
    assert later[0].content == f"again {email_token}"
    counters = sorted(t.counter for turn in first for t in find_tokens(turn.content))
    assert counters == [1, 1, 2]


def test_a_users_value_is_one_token_in_all_their_threads_and_another_users_is_another(
    parts: dict[str, Any],
) -> None:
    service = make_service(parts)
    one = find_tokens(service.append_turns("alice", "t1", user_says(EMAIL))[0].content)[0]
    two = find_tokens(service.append_turns("alice", "t2", user_says(f"{CARD} and {EMAIL}"))[0].content)
    bob = find_tokens(service.append_turns("bob", "t1", user_says(EMAIL))[0].content)[0]
    assert two[1].token == one.token  # a keyword search over alice's turns finds it in both threads
    assert two[0].counter == 2  # the counter runs per user, not per thread
    assert bob.thread_hash != one.thread_hash and bob.token != one.token
    assert service.unmask("bob", "t1", one.token) == one.token


def test_tokens_already_in_a_text_are_kept_as_they_are(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    token = find_tokens(service.append_turns("alice", "t1", user_says(EMAIL))[0].content)[0].token
    echoed = service.append_turns("alice", "t1", [TurnInput("assistant", f"I wrote to {token}.")])
    assert echoed[0].content == f"I wrote to {token}."


def test_turns_without_personal_data_touch_no_key(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    stored = service.append_turns("alice", "t1", user_says("What is the weather like in spring?"))
    assert stored[0].content == "What is the weather like in spring?"
    assert parts["keys"].calls == {"generate": 0, "unwrap": 0, "thread_hash": 0}
    assert parts["key_store"].get_data_key("acme", "alice") is None


def test_a_failed_pii_check_stores_nothing(parts: dict[str, Any]) -> None:
    service = make_service(parts, detector=BrokenDetector())
    with pytest.raises(BackendUnavailable) as raised:
        service.append_turns("alice", "t1", user_says(f"mail {EMAIL}"))
    assert raised.value.part == "pii"
    assert not parts["transcripts"].thread_exists("acme", "alice", "t1")
    with pytest.raises(NotFound):
        service.list_turns("alice", "t1", 10)


def test_token_counts_are_of_the_masked_text(parts: dict[str, Any]) -> None:
    from agentmem.tokens import get_token_counter

    service = make_service(parts)
    stored = service.append_turns("alice", "t1", user_says(f"mail {EMAIL} now"))
    assert stored[0].tokens == get_token_counter().count(stored[0].content)
    assert service.recent_history("alice", "t1", 5)[0].tokens == stored[0].tokens


def test_unwrapped_keys_are_cached_and_token_scopes_cost_no_key_provider_call(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    for n in range(3):
        masked = service.append_turns("alice", "t1", user_says(f"{n}: {EMAIL}"))[0].content
    assert service.unmask("alice", "t1", masked) == f"2: {EMAIL}"
    assert parts["keys"].calls == {"generate": 1, "unwrap": 0, "thread_hash": 0}


def test_a_users_token_scope_is_keyed_by_their_own_data_key_not_by_a_tenant_secret(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    token = find_tokens(service.append_turns("alice", "t1", user_says(EMAIL))[0].content)[0]
    stored = parts["key_store"].get_data_key("acme", "alice")
    data_key = parts["keys"].inner.unwrap(stored.wrapped, encryption_context("acme", "alice"))
    assert token.thread_hash == token_scope_hash(data_key)
    assert token.thread_hash != parts["keys"].inner.thread_hash("acme", "alice", "*")


def test_without_the_cache_every_use_unwraps_the_key(parts: dict[str, Any]) -> None:
    service = make_service(parts, key_cache=DataKeyCache(ttl_seconds=0))
    masked = service.append_turns("alice", "t1", user_says(EMAIL))[0].content
    service.append_turns("alice", "t1", user_says(EMAIL))
    assert service.unmask("alice", "t9", masked) == EMAIL
    assert parts["keys"].calls["unwrap"] == 2


def test_unmask_restores_the_users_tokens_from_every_thread_but_no_one_elses(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    mine = service.append_turns("alice", "t1", user_says(EMAIL))[0].content
    mine_too = service.append_turns("alice", "t2", user_says(CARD))[0].content
    theirs = service.append_turns("bob", "t1", user_says("bob@example.org"))[0].content
    text = f"{mine} / {mine_too} / {theirs} / {{{{PII_EMAIL_deadbeef_1}}}}"

    restored = service.unmask("alice", "t3", text)

    assert restored == f"{EMAIL} / {CARD} / {theirs} / {{{{PII_EMAIL_deadbeef_1}}}}"
    assert make_service(parts, tenant="globex").unmask("alice", "t1", mine) == mine


def test_destroyed_data_keys_leave_leftover_entries_undecryptable(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    masked = service.append_turns("alice", "t1", user_says(EMAIL))[0].content
    parts["key_store"].destroy_data_keys("acme", "alice")
    service.key_cache.forget("acme", "alice")
    assert parts["vault"].get_entries("acme", "alice", [find_tokens(masked)[0].token])  # the copy is there
    assert service.unmask("alice", "t1", masked) == masked


class OrderRecorder:
    """Wraps a store, writing each erase call into a shared log before passing it on."""

    def __init__(self, inner: Any, name: str, log: list[str]) -> None:
        self.inner, self.name, self.log = inner, name, log

    def __getattr__(self, attribute: str) -> Any:
        target = getattr(self.inner, attribute)
        if attribute not in {"destroy_data_keys", "delete_user"}:
            return target

        def recorded(*args: Any) -> Any:
            self.log.append(f"{self.name}.{attribute}")
            return target(*args)

        return recorded


def test_erase_destroys_the_data_keys_before_anything_else(parts: dict[str, Any]) -> None:
    calls: list[str] = []
    service = make_service(
        parts,
        transcripts=OrderRecorder(parts["transcripts"], "transcripts", calls),
        vault=OrderRecorder(parts["vault"], "vault", calls),
        key_store=OrderRecorder(parts["key_store"], "key_store", calls),
    )
    service.append_turns("alice", "t1", user_says(EMAIL))

    service.erase_user("alice", forget_append_keys=None,
                       user_erasers=[lambda tenant, user: calls.append(f"hook({tenant},{user})")])

    assert calls == [
        "key_store.destroy_data_keys", "transcripts.delete_user", "vault.delete_user", "hook(acme,alice)",
    ]


def test_erase_removes_the_users_records_and_vectors_and_nobody_elses(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    vectors = parts["vectors"]
    unit = np.ones(4, dtype=np.float32) / 2
    vectors.upsert([
        VectorItem("acme", kind, owner, f"{kind}-{owner}", unit, 1.0)
        for kind in ("fact", "turn", "lesson") for owner in ("alice", "bob")
    ])
    alice = service.append_turns("alice", "t1", user_says(EMAIL))[0].content
    bob = service.append_turns("bob", "t1", user_says(EMAIL))[0].content

    service.erase_user("alice", forget_append_keys=None, user_erasers=[])
    service.erase_user("alice", forget_append_keys=None, user_erasers=[])  # idempotent

    assert parts["key_store"].get_data_key("acme", "alice") is None
    assert not parts["transcripts"].thread_exists("acme", "alice", "t1")
    assert parts["vault"].get_entries("acme", "alice", [find_tokens(alice)[0].token]) == []
    assert service.unmask("bob", "t1", bob) == EMAIL

    def owners(kind: str) -> set[str]:
        hits = vectors.search(VectorQuery("acme", kind, "alice", unit, 10)) + vectors.search(
            VectorQuery("acme", kind, "bob", unit, 10))
        return {hit.item_id.split("-")[1] for hit in hits}

    assert owners("fact") == owners("turn") == {"bob"}
    assert owners("lesson") == {"alice", "bob"}  # lessons are the agents', not the user's


def test_an_erased_user_starts_again_with_a_new_key(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    old = service.append_turns("alice", "t1", user_says(EMAIL))[0].content
    old_wrapped = parts["key_store"].get_data_key("acme", "alice").wrapped
    service.erase_user("alice", forget_append_keys=None, user_erasers=[])
    new = service.append_turns("alice", "t1", user_says(EMAIL))[0].content
    assert parts["key_store"].get_data_key("acme", "alice").wrapped != old_wrapped
    assert [t.seq for t in service.list_turns("alice", "t1", 10).items] == [1]
    assert service.unmask("alice", "t1", new) == EMAIL
    # The counter restarts, the scope does not come back: it was keyed with the destroyed key, so no
    # earlier token can be linked to the user id again.
    assert find_tokens(new)[0].counter == 1 and find_tokens(new)[0].thread_hash != find_tokens(old)[0].thread_hash
    assert service.unmask("alice", "t1", old) == old


def test_rewrap_moves_every_key_under_the_current_kek_and_values_still_decrypt(
    parts: dict[str, Any],
) -> None:
    service = make_service(parts)
    key_file: LocalKeyFile = parts["keys"].inner
    masked = {user: service.append_turns(user, "t1", user_says(EMAIL))[0].content for user in ("alice", "bob")}
    old_kek = key_file.current_kek_id()

    new_kek = key_file.rotate()
    assert service.rewrap_data_keys("alice") == 1
    assert service.rewrap_data_keys() == 2

    assert new_kek != old_kek
    for user in ("alice", "bob"):
        stored = parts["key_store"].get_data_key("acme", user)
        assert LocalKeyFile.kek_id_of(stored.wrapped) == new_kek
        service.key_cache.forget("acme", user)
        assert service.unmask(user, "t1", masked[user]) == EMAIL


def test_concurrent_writers_share_one_token_per_value_and_never_a_seq(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(5):
                service.append_turns("alice", "t1", user_says(f"writer {n}.{i} {EMAIL}"))
        except BaseException as exc:  # surfaced below: a thread's exception would vanish otherwise
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    turns = service.list_turns("alice", "t1", 100).items
    assert [t.seq for t in turns] == list(range(1, 21))
    assert len({find_tokens(t.content)[0].token for t in turns}) == 1


def test_appending_announces_the_new_seqs_without_any_content(parts: dict[str, Any]) -> None:
    service = make_service(parts)
    service.append_turns("alice", "t1", user_says("hello", f"mail {EMAIL}"))
    events = parts["bus"].due(limit=10)
    assert [e.envelope["detail-type"] for e in events] == [TURNS_APPENDED]
    assert events[0].envelope["detail"] == {
        "tenant": "acme", "userId": "alice", "threadId": "t1", "fromSeq": 1, "toSeq": 2,
    }
    assert "jane" not in json.dumps(events[0].envelope)


class DownBus:
    def publish(self, events: Any) -> Any:
        raise ConnectionError("EventBridge unreachable")


def test_a_bus_outage_does_not_lose_the_turns(parts: dict[str, Any]) -> None:
    service = make_service(parts, bus=DownBus())
    stored = service.append_turns("alice", "t1", user_says("hello"))
    assert [t.seq for t in service.list_turns("alice", "t1", 10).items] == [stored[0].seq]


# Consistent masking: a value already in the subject's vault is masked wherever it appears.


class NamesWhenIntroduced:
    """A detector as inconsistent as a statistical one: finds a name only in "my name is X" sentences.

    Everything else is the real regex detector's.
    """

    def __init__(self, names: tuple[str, ...] = ("Caroline", "Ann")) -> None:
        self.names = names
        self.regex = RegexPiiDetector()

    def detect(self, text: str) -> list[Any]:
        from agentmem.domain.pii import PiiSpan

        spans = list(self.regex.detect(text))
        for name in self.names:
            marker = f"my name is {name}"
            at = text.find(marker)
            if at >= 0:
                start = at + len("my name is ")
                spans.append(PiiSpan("PERSON", start, start + len(name), name, 0.85))
        return sorted(spans, key=lambda span: span.start)


def test_a_name_the_detector_misses_later_is_masked_with_the_token_it_got_first(parts: dict[str, Any]) -> None:
    service = make_service(parts, detector=NamesWhenIntroduced())
    first = service.append_turns("alice", "t1", user_says("Hi, my name is Caroline."))[0].content
    token = find_tokens(first)[0].token
    later = service.append_turns("alice", "t2", user_says("Caroline went to Caroline's support group."))
    assert later[0].content == f"{token} went to {token}'s support group."
    assert service.mask_text("alice", "When did Caroline go?") == f"When did {token} go?"
    assert service.unmask("alice", "t2", later[0].content) == "Caroline went to Caroline's support group."


def test_a_name_found_in_one_turn_of_an_append_is_masked_in_the_others(parts: dict[str, Any]) -> None:
    service = make_service(parts, detector=NamesWhenIntroduced())
    stored = service.append_turns("alice", "t1", user_says("Caroline here.", "Well, my name is Caroline."))
    tokens = [find_tokens(turn.content) for turn in stored]
    assert len(tokens[0]) == 1 and tokens[0][0].token == tokens[1][0].token
    assert "Caroline" not in stored[0].content + stored[1].content


def test_only_whole_words_and_the_exact_value_are_masked(parts: dict[str, Any]) -> None:
    service = make_service(parts, detector=NamesWhenIntroduced())
    token = find_tokens(service.mask_text("alice", "my name is Ann"))[0].token
    assert service.mask_text("alice", "Annual report by Ann, for Anne and ann, on Ann's desk: xAnn Ann2") == (
        f"Annual report by {token}, for Anne and ann, on {token}'s desk: xAnn Ann2"
    )


def test_another_users_known_value_is_not_used(parts: dict[str, Any]) -> None:
    service = make_service(parts, detector=NamesWhenIntroduced())
    service.mask_text("bob", "my name is Caroline")
    service.mask_text("alice", f"mail {EMAIL}")  # alice has a vault, without Caroline in it
    assert service.mask_text("alice", "Caroline called.") == "Caroline called."
    assert service.mask_text("carol", "Caroline called.") == "Caroline called."  # no vault at all


def test_a_value_added_by_another_process_is_masked_once_the_counter_moves(parts: dict[str, Any]) -> None:
    reader = make_service(parts, detector=NamesWhenIntroduced())
    writer = make_service(parts, detector=NamesWhenIntroduced())  # another process: its own caches
    reader.mask_text("alice", f"mail {EMAIL}")
    assert reader.mask_text("alice", "Caroline called.") == "Caroline called."
    token = find_tokens(writer.mask_text("alice", "my name is Caroline"))[0].token
    assert reader.mask_text("alice", "Caroline called.") == f"{token} called."


def test_after_an_erase_no_value_of_the_user_is_known_any_more(parts: dict[str, Any]) -> None:
    service = make_service(parts, detector=NamesWhenIntroduced())
    other = make_service(parts, detector=NamesWhenIntroduced())  # its cache still holds the old index
    service.mask_text("alice", "my name is Caroline")
    assert other.mask_text("alice", "Caroline called.") != "Caroline called."
    service.erase_user("alice", forget_append_keys=None, user_erasers=[])
    service.mask_text("alice", f"mail {EMAIL}")  # a new key, a new vault
    assert other.mask_text("alice", "Caroline called.") == "Caroline called."
    assert service.mask_text("alice", "Caroline called.") == "Caroline called."
