"""Profiles, facts and consolidation on the embedded adapters, with the model swapped per test.

The stores, vector index, embedder and bus are the real local ones; only the
language model is chosen by the test (the offline rules, or a scripted answer).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentmem.adapters.local.event_bus import SqliteEventBus
from agentmem.adapters.local.fact_store import SqliteFactStore
from agentmem.adapters.local.key_file import LocalKeyFile
from agentmem.adapters.local.key_store import SqliteKeyStore
from agentmem.adapters.local.offline_llm import OfflineRuleModel
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.profile_store import SqliteProfileStore
from agentmem.adapters.local.transcript_store import SqliteTranscriptStore
from agentmem.adapters.local.vault_store import SqliteVaultStore
from agentmem.adapters.local.vector_index import LocalVectorIndex
from agentmem.domain.errors import Conflict, InvalidInput, NotFound, TooLarge
from agentmem.domain.profile import EMPTY, empty_body, parse_body, render_body
from agentmem.ports.transcripts import NewTurn
from agentmem.service.consolidation import ConsolidationService, PiiGuardedModel
from agentmem.service.conversations import ConversationService
from agentmem.service.facts import FactService
from agentmem.service.profiles import (
    PROFILE_UNCHANGED,
    PROFILE_UPDATE_FAILED,
    PROFILE_UPDATED,
    ProfileService,
)
from agentmem.tokens import get_token_counter

from tests.llm_doubles import DownModel, RecordingModel, ScriptedModel

TENANT = "acme"


@dataclass
class World:
    tmp: Path
    transcripts: SqliteTranscriptStore
    bus: SqliteEventBus
    profiles: ProfileService
    facts: FactService
    vectors: LocalVectorIndex
    consolidation: ConsolidationService

    def say(self, user: str, thread: str, *turns: tuple[str, str]) -> tuple[int, int]:
        counter = get_token_counter()
        stored = self.transcripts.append(
            TENANT, user, thread, [NewTurn(role, text, counter.count(text)) for role, text in turns], 1.0
        )
        return stored[0].seq, stored[-1].seq

    def consolidate(self, user: str, thread: str, *turns: tuple[str, str]) -> Any:
        first, last = self.say(user, thread, *turns)
        return self.consolidation.consolidate(user, thread, first, last)

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return [(e.envelope["detail-type"], e.envelope["detail"]) for e in self.bus.due(limit=1000)]


def vault_masker(tmp: Path, transcripts: SqliteTranscriptStore, opened: list[Any]) -> Callable[[str, str], str]:
    """The real masking step (the conversation side's vault, regex detector) on files under `tmp`."""
    vault, key_store = SqliteVaultStore(tmp / "vault.db"), SqliteKeyStore(tmp / "keys.db")
    opened.extend([vault, key_store])
    conversations = ConversationService(
        tenant=TENANT, transcripts=transcripts, vault=vault, key_store=key_store,
        keys=LocalKeyFile(tmp / "vault.key"), detector=RegexPiiDetector(),
    )
    return conversations.mask_text


@pytest.fixture
def make_world(tmp_path: Path, minilm) -> Iterator[Callable[..., World]]:
    opened: list[Any] = []

    def make(model: Any = None, *, budget: int = 2000, guard: bool = True) -> World:
        model = model or OfflineRuleModel()
        if guard:
            model = PiiGuardedModel(model, RegexPiiDetector())
        transcripts = SqliteTranscriptStore(tmp_path / "transcripts.db")
        bus = SqliteEventBus(tmp_path / "events.db")
        profile_store = SqliteProfileStore(tmp_path / "profiles.db")
        fact_store = SqliteFactStore(tmp_path / "facts.db")
        vectors = LocalVectorIndex(tmp_path / "vectors.db")
        opened.extend([transcripts, bus, profile_store, fact_store, vectors])
        masker = vault_masker(tmp_path, transcripts, opened)
        profiles = ProfileService(TENANT, profile_store, token_budget=budget, masker=masker, bus=bus)
        facts = FactService(TENANT, fact_store, vectors, minilm, llm=model)
        consolidation = ConsolidationService(TENANT, transcripts, profiles, facts, llm=model)
        return World(tmp_path, transcripts, bus, profiles, facts, vectors, consolidation)

    yield make
    for part in opened:
        part.close()


# Consolidation


def test_turns_become_a_profile_version_and_facts_and_the_bus_hears_of_it(make_world):
    world = make_world()
    result = world.consolidate("ana", "t1", ("user", "I work at Globex. I know Python."), ("assistant", "Noted."))

    assert result.status == "updated" and result.version == 1 and result.facts_added == 2
    profile = world.profiles.current("ana")
    assert profile is not None and profile.turn_count == 2 and profile.source == "consolidation"
    assert parse_body(profile.body)["Work Context"] == "- Employer: Globex"
    facts = world.facts.list_facts("ana", 10).items
    assert sorted(f.text for f in facts) == ["User knows Python", "User works at Globex"]
    assert all(f.thread_id == "t1" and f.source_seqs == [1] for f in facts)
    assert world.events() == [(PROFILE_UPDATED, {
        "tenant": TENANT, "userId": "ana", "version": 1, "source": "consolidation", "threadId": "t1",
        "fromSeq": 1, "toSeq": 2, "factsAdded": 2, "factsSuperseded": 0,
    })]


def test_noop_keeps_the_profile_and_says_unchanged(make_world):
    world = make_world()
    world.consolidate("ana", "t1", ("user", "I work at Globex."))
    result = world.consolidate("ana", "t1", ("user", "Thanks, that is all."))

    assert result.status == "unchanged" and result.reason == "noop" and result.version == 1
    assert world.profiles.current("ana").version == 1
    assert world.events()[-1] == (PROFILE_UNCHANGED, {
        "tenant": TENANT, "userId": "ana", "threadId": "t1", "fromSeq": 2, "toSeq": 2, "version": 1,
        "factsAdded": 0, "factsSuperseded": 0,
    })


def test_assistant_turns_alone_cost_no_model_call(make_world):
    model = ScriptedModel(lambda system, user: pytest.fail("the model was called"))
    world = make_world(model)
    result = world.consolidate("ana", "t1", ("assistant", "How can I help?"))
    assert result.status == "unchanged" and result.reason == "no user turns" and model.calls == 0


@pytest.mark.parametrize(
    "answer",
    [
        "Sure! Here is the updated profile: the user works at Globex.",
        "## Identity\n- Works at Globex",
        "---\nuser_id: ana\n---\n" + empty_body(),
    ],
)
def test_an_answer_out_of_format_is_rejected_and_the_profile_kept(make_world, answer):
    world = make_world()
    world.consolidate("ana", "t1", ("user", "I work at Globex."))
    before = world.profiles.current("ana")

    world.consolidation.llm = world.facts.llm = ScriptedModel(lambda system, user: answer)
    result = world.consolidate("ana", "t1", ("user", "I work at Initech."))

    assert result.status == "failed" and result.reason.startswith("out_of_format") and result.retry is None
    assert world.profiles.current("ana") == before
    detail_type, detail = world.events()[-1]
    assert detail_type == PROFILE_UPDATE_FAILED
    assert detail["reason"] == "out_of_format" and detail["retrying"] is False and detail["version"] == 1


def test_a_model_that_is_down_fails_the_run_for_a_retry_and_the_retry_succeeds(make_world):
    world = make_world(DownModel())
    first, last = world.say("ana", "t1", ("user", "I work at Globex."))

    result = world.consolidation.consolidate("ana", "t1", first, last)

    assert result.status == "failed" and result.retry is not None and result.retry.part == "llm"
    assert world.profiles.current("ana") is None
    assert world.events()[-1][1]["retrying"] is True

    world.consolidation.llm = world.facts.llm = OfflineRuleModel()
    again = world.consolidation.consolidate("ana", "t1", first, last)
    assert again.status == "updated" and again.facts_added == 1


def test_the_same_turns_consolidated_twice_add_no_duplicate_facts(make_world):
    world = make_world()
    first, last = world.say("ana", "t1", ("user", "I work at Globex. I know Python and Rust."))
    world.consolidation.consolidate("ana", "t1", first, last)
    again = world.consolidation.consolidate("ana", "t1", first, last)

    assert again.status == "skipped" and again.reason == "already consolidated" and again.facts_added == 0
    assert len(world.facts.list_facts("ana", 50, include_superseded=True).items) == 3


def test_a_replayed_event_folds_and_counts_nothing_again_and_says_nothing(make_world):
    model = RecordingModel(OfflineRuleModel())
    world = make_world(model)
    first, last = world.say("ana", "t1", ("user", "I work at Globex."), ("assistant", "Noted."))
    world.consolidation.consolidate("ana", "t1", first, last)
    profile, events, calls = world.profiles.current("ana"), world.events(), len(model.calls)

    replay = world.consolidation.consolidate("ana", "t1", first, last)

    assert replay.status == "skipped" and replay.version == profile.version
    assert world.profiles.current("ana") == profile and profile.turn_count == 2
    assert profile.consolidated == {"t1": 2}
    assert world.events() == events
    # Only fact extraction asks the model again (its facts are idempotent per batch); the profile does not.
    rewrites = [c for c in model.calls[calls:] if "profile" in c.system.lower()]
    assert rewrites == [] and len(model.calls) - calls <= 1


def test_an_event_overlapping_folded_turns_folds_only_the_new_ones(make_world):
    model = RecordingModel(OfflineRuleModel())
    world = make_world(model)
    world.consolidate("ana", "t1", ("user", "I work at Globex."), ("assistant", "Noted."))
    first, last = world.say("ana", "t1", ("user", "I live in Lisbon."), ("assistant", "Noted."))
    sent_before = len(model.calls)

    result = world.consolidation.consolidate("ana", "t1", 1, last)

    assert result.status == "updated"
    profile = world.profiles.current("ana")
    assert profile.turn_count == 4 and profile.consolidated == {"t1": last}
    rewrite = model.calls[-1].text
    assert "I live in Lisbon." in rewrite and "I work at Globex." not in rewrite
    assert len(model.calls) > sent_before
    assert first == 3


def test_the_watermark_of_each_thread_survives_edits_and_restores(make_world):
    world = make_world()
    world.consolidate("ana", "t1", ("user", "I work at Globex."))
    world.consolidate("ana", "t2", ("user", "I live in Lisbon."), ("assistant", "Noted."))
    current = world.profiles.current("ana")
    assert current.consolidated == {"t1": 1, "t2": 2}

    edited = world.profiles.edit("ana", current.body.replace("Lisbon", "Porto"), current.version)
    world.profiles.restore("ana", 1, edited.version)

    restored = world.profiles.current("ana")
    assert restored.source == "restore" and restored.consolidated == {"t1": 1, "t2": 2}
    assert world.consolidation.consolidate("ana", "t2", 1, 2).status == "skipped"


def test_a_rewrite_over_the_budget_is_stored_cut_to_the_budget(make_world):
    topics = "\n".join(f"- a long remembered topic number {i} with many words in it" for i in range(200))
    world = make_world(ScriptedModel(lambda system, user: (
        render_body({"Recent Topics": topics}) if "rewrite-profile" in system else '{"facts": []}'
    )), budget=500)

    result = world.consolidate("ana", "t1", ("user", "Tell me about many things."))

    assert result.status == "updated"
    body = world.profiles.current("ana").body
    assert get_token_counter().count(body) <= 500
    assert parse_body(body)["Recent Topics"].startswith("- a long remembered topic number 0 ")


def test_concurrent_consolidations_of_one_user_lose_no_update(make_world):
    offline = OfflineRuleModel()
    skills = ["Python", "Rust", "Haskell", "Erlang", "Fortran", "Julia"]
    # The first rewrite of each consolidation waits for all of them: every one has read the same
    # version before any writes, so all but one must detect the conflict and retry.
    first_rewrites = threading.Barrier(len(skills))
    rewrites = {"count": 0}
    lock = threading.Lock()

    def model(system: str, user: str) -> str:
        if "rewrite-profile" in system:
            with lock:
                rewrites["count"] += 1
                first_round = rewrites["count"] <= len(skills)
            if first_round:
                first_rewrites.wait(timeout=60)
        return offline.complete(system, [{"role": "user", "content": user}], max_tokens=100)

    world = make_world(ScriptedModel(model))
    seqs = {skill: world.say("ana", f"t-{skill}", ("user", f"I know {skill}.")) for skill in skills}
    barrier = threading.Barrier(len(skills))
    results: dict[str, Any] = {}

    def consolidate(skill: str) -> None:
        barrier.wait()
        first, last = seqs[skill]
        results[skill] = world.consolidation.consolidate("ana", f"t-{skill}", first, last)

    world.consolidation.max_attempts = len(skills) + 1
    threads = [threading.Thread(target=consolidate, args=(s,)) for s in skills]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert all(r.status == "updated" for r in results.values()), results
    profile = world.profiles.current("ana")
    assert profile.version == len(skills) and profile.turn_count == len(skills)
    assert sorted(parse_body(profile.body)["Skills & Expertise"].splitlines()) == sorted(f"- {s}" for s in skills)


def test_a_write_that_loses_the_race_reads_the_new_profile_and_asks_again(make_world):
    world = make_world()
    offline = OfflineRuleModel()
    prompts: list[str] = []

    def racing(system: str, user: str) -> str:
        prompts.append(user)
        if "rewrite-profile" in system and len(prompts) == 2:
            # Another consolidation commits while this one waits for its model.
            world.profiles.commit("ana", render_body({"Identity": "- Name: Ana"}), 0, turns_added=1,
                                  source="consolidation")
        return offline.complete(system, [{"role": "user", "content": user}], max_tokens=100)

    world.consolidation.llm = world.facts.llm = ScriptedModel(racing)
    result = world.consolidate("ana", "t1", ("user", "I work at Globex."))

    assert result.status == "updated" and result.version == 2
    body = parse_body(world.profiles.current("ana").body)
    assert body["Identity"] == "- Name: Ana" and body["Work Context"] == "- Employer: Globex"
    assert "- Name: Ana" in prompts[-1]


def test_a_user_erased_while_consolidation_runs_stays_erased(make_world):
    world = make_world()
    offline = OfflineRuleModel()

    def erasing(system: str, user: str) -> str:
        if "rewrite-profile" in system:
            # DELETE /v1/users/ana lands while the model is thinking.
            world.transcripts.delete_user(TENANT, "ana")
            world.profiles.erase_user(TENANT, "ana")
            world.facts.erase_user(TENANT, "ana")
        return offline.complete(system, [{"role": "user", "content": user}], max_tokens=100)

    world.consolidation.llm = world.facts.llm = ScriptedModel(erasing)
    result = world.consolidate("ana", "t1", ("user", "I work at Globex."))

    assert result.status == "skipped" and result.reason == "user erased meanwhile"
    assert world.profiles.current("ana") is None
    assert world.facts.list_facts("ana", 10, include_superseded=True).items == []
    query = world.facts.embedder.embed(["Where does the user work?"])[0]
    assert world.facts.facts_for("ana", query, 5) == []


def test_personal_data_that_reached_a_transcript_unmasked_never_reaches_the_model(make_world):
    recorder = RecordingModel(OfflineRuleModel())
    world = make_world(recorder)
    world.consolidate("ana", "t1", ("user", "I work at Globex, mail me at ana.lopez@example.com or "
                                            "call +44 20 7946 0958. My card is 4111 1111 1111 1111."))

    sent = recorder.sent()
    assert len(recorder.calls) == 2
    for value in ("ana.lopez@example.com", "7946 0958", "4111 1111 1111 1111"):
        assert value not in sent
    assert "[EMAIL withheld]" in sent and "[PHONE withheld]" in sent and "[CREDIT_CARD withheld]" in sent
    assert "Globex" in sent


# Profiles: the user's own edit, versions, restore


def test_a_user_edit_needs_the_version_it_was_based_on(make_world):
    world = make_world()
    body = render_body({"Identity": "- Name: Ana"})
    with pytest.raises(Conflict):
        world.profiles.edit("ana", body, if_match=3)
    first = world.profiles.edit("ana", body, if_match=0)
    assert first.version == 1 and first.source == "user"
    with pytest.raises(Conflict):
        world.profiles.edit("ana", render_body({"Identity": "- Name: Ana B."}), if_match=0)
    assert world.profiles.edit("ana", "---\nuser_id: \"x\"\n---\n" + body, if_match=1).version == 1  # no change


def test_a_user_edit_must_keep_the_schema_and_fit_the_budget(make_world):
    world = make_world(budget=500)
    with pytest.raises(InvalidInput) as caught:
        world.profiles.edit("ana", "## Identity\n- Name: Ana\n## Hobbies\n- chess", if_match=0)
    assert [d["field"] for d in caught.value.details] == ["markdown", "markdown"]
    with pytest.raises(TooLarge):
        world.profiles.edit("ana", render_body({"Identity": "- " + "word " * 2000}), if_match=0)
    assert world.profiles.current("ana") is None


def test_a_user_edit_is_masked_before_it_is_stored(make_world):
    world = make_world()
    view = world.profiles.edit("ana", render_body({"Identity": "- Email: ana@example.com"}), if_match=0)
    assert "ana@example.com" not in world.profiles.current("ana").body
    assert "{{PII_EMAIL_" in view.document and "ana@example.com" not in view.document


def test_restoring_an_old_version_makes_a_new_one_with_its_body(make_world):
    world = make_world()
    one = render_body({"Identity": "- Name: Ana"})
    world.profiles.edit("ana", one, if_match=0)
    world.profiles.edit("ana", render_body({"Identity": "- Name: Bea"}), if_match=1)

    restored = world.profiles.restore("ana", 1, if_match=2)

    assert restored.version == 3 and restored.body == one and restored.restored_from == 1
    assert [v.version for v in world.profiles.versions("ana", 10).items] == [3, 2, 1]
    with pytest.raises(NotFound):
        world.profiles.restore("ana", 9)
    with pytest.raises(Conflict):
        world.profiles.restore("ana", 1, if_match=2)


def test_a_profile_is_capped_on_load_when_the_budget_shrank(make_world):
    world = make_world(budget=8000)
    big = render_body({"Recent Topics": "\n".join(f"- topic {i} " + "detail " * 20 for i in range(100))})
    world.profiles.edit("ana", big, if_match=0)
    world.profiles.token_budget = 500

    body = world.profiles.profile_for("ana")

    assert body is not None and get_token_counter().count(body) <= 500
    assert world.profiles.view("ana").body == body


def test_a_new_user_sees_the_empty_profile_at_version_zero(make_world):
    view = make_world().profiles.view("nobody")
    assert view.version == 0 and view.updated_at is None and view.body.count(EMPTY) == 6
    assert "last_updated: null" in view.document


# Facts


def test_a_contradicting_fact_from_another_thread_supersedes_the_old_one(make_world):
    world = make_world()
    world.consolidate("ana", "t1", ("user", "I work at Globex. I know Python."))
    result = world.consolidate("ana", "t2", ("user", "I work at Initech now."))

    assert result.facts_added == 1 and result.facts_superseded == 1
    everything = {f.text: f for f in world.facts.list_facts("ana", 10, include_superseded=True).items}
    old, new = everything["User works at Globex"], everything["User works at Initech"]
    assert old.status == "superseded" and old.superseded_by == new.fact_id and old.valid_to == new.valid_from
    assert new.thread_id == "t2"
    query = world.facts.embedder.embed(["Where does the user work?"])[0]
    recalled = [f["text"] for f in world.facts.facts_for("ana", query, 5)]
    assert recalled[0] == "User works at Initech" and "User works at Globex" not in recalled


def test_facts_are_recalled_by_meaning_from_every_thread_of_the_user_only(make_world):
    world = make_world()
    world.consolidate("ana", "t1", ("user", "I live in Lisbon."))
    world.consolidate("ana", "t2", ("user", "I know Kubernetes."))
    world.consolidate("bob", "t1", ("user", "I live in Oslo."))

    query = world.facts.embedder.embed(["Which city is the user's home?"])[0]
    recalled = world.facts.facts_for("ana", query, 2)

    assert [f["text"] for f in recalled] == ["User lives in Lisbon", "User knows Kubernetes"]
    assert recalled[0]["score"] > recalled[1]["score"]
    assert world.facts.facts_for("ana", None, 5) == []


def test_a_deleted_fact_is_never_recalled_and_erasing_a_user_removes_facts_and_profile(make_world):
    world = make_world()
    world.consolidate("ana", "t1", ("user", "I live in Lisbon. I know Python."))
    lisbon = next(f for f in world.facts.list_facts("ana", 10).items if "Lisbon" in f.text)

    world.facts.delete("ana", lisbon.fact_id)

    query = world.facts.embedder.embed(["Where does the user live?"])[0]
    assert all(f["factId"] != lisbon.fact_id for f in world.facts.facts_for("ana", query, 5))
    with pytest.raises(NotFound):
        world.facts.delete("ana", lisbon.fact_id)

    world.profiles.erase_user(TENANT, "ana")
    world.facts.erase_user(TENANT, "ana")
    assert world.profiles.current("ana") is None
    assert world.facts.list_facts("ana", 10, include_superseded=True).items == []
    assert world.facts.facts_for("ana", query, 5) == []


def test_a_profile_store_from_before_the_watermark_opens_and_keeps_its_versions(tmp_path):
    import sqlite3

    path = tmp_path / "profiles.db"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE profile_versions (tenant TEXT NOT NULL, user_id TEXT NOT NULL, version INTEGER NOT NULL,"
        " body TEXT NOT NULL, updated_at REAL NOT NULL, turn_count INTEGER NOT NULL,"
        " schema_version INTEGER NOT NULL, source TEXT NOT NULL, restored_from INTEGER,"
        " PRIMARY KEY (tenant, user_id, version))"
    )
    old.execute("INSERT INTO profile_versions VALUES ('acme','ana',1,'## body\n',1.0,2,1,'consolidation',NULL)")
    old.commit()
    old.close()

    store = SqliteProfileStore(path)
    opened: list[Any] = []
    try:
        assert store.current("acme", "ana").consolidated == {}
        transcripts = SqliteTranscriptStore(tmp_path / "transcripts.db")
        opened.append(transcripts)
        profiles = ProfileService(TENANT, store, token_budget=2000, masker=vault_masker(tmp_path, transcripts, opened))
        saved = profiles.commit("ana", "## body 2\n", 1, turns_added=1, source="consolidation", folded=("t1", 3))
        assert store.current("acme", "ana") == saved and saved.consolidated == {"t1": 3}
    finally:
        store.close()
        for part in opened:
            part.close()
