"""What an erase leaves behind, seen from outside: a user id and values made up at test time are written
through the real handlers (turns with an Idempotency-Key, items), the user is erased, and then the
keyed append is sent again and every file of the data folder is searched for the id and the values."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentmem.domain.pii import find_tokens
from agentmem.wiring import Services

from tests.integration.conversations_harness import HandlerCaller, local_services
from tests.integration.privacy_values import MadeUpPerson, files_holding, made_up_person, raw_values


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def services(data_dir: Path) -> Iterator[Services]:
    with local_services(data_dir) as built:
        yield built


@pytest.fixture
def call(services: Services) -> HandlerCaller:
    return HandlerCaller(services)


@pytest.fixture
def person() -> MadeUpPerson:
    return made_up_person()


@pytest.fixture
def user_id() -> str:
    return f"u-{secrets.token_hex(8)}"


def keyed_append(call: HandlerCaller, user_id: str, person: MadeUpPerson, key: str) -> tuple[int, dict]:
    body = {"turns": [{"role": "user", "content": f"Write to {person.email} or call {person.phone_text}."}]}
    return call("POST", f"/v1/users/{user_id}/threads/t-1/turns", body, headers={"Idempotency-Key": key})


def test_a_keyed_append_sent_again_after_the_erase_never_answers_with_the_erased_turns(call, user_id, person):
    status, first = keyed_append(call, user_id, person, "k-1")
    assert status == 201
    erased_tokens = {t.token for t in find_tokens(first["turns"][0]["content"])}
    assert call("DELETE", f"/v1/users/{user_id}")[0] == 204

    status, replay = keyed_append(call, user_id, person, "k-1")

    # As for a user never seen: the turns are appended again, masked with tokens of a new scope.
    assert status == 201
    replayed_tokens = {t.token for t in find_tokens(replay["turns"][0]["content"])}
    assert replayed_tokens and not replayed_tokens & erased_tokens
    _, listed = call("GET", f"/v1/users/{user_id}/threads/t-1/turns")
    assert [turn["seq"] for turn in listed["items"]] == [1]


def test_after_an_erase_no_file_of_the_data_folder_holds_the_user_id_or_a_value_of_theirs(
    call, data_dir, user_id, person
):
    assert keyed_append(call, user_id, person, "k-1")[0] == 201
    assert keyed_append(call, user_id, person, "k-1")[0] == 201  # a replay, answered from its record
    item = {"namespace": ["contacts"], "key": person.phone_text, "value": {"card": person.card}}
    assert call("PUT", f"/v1/users/{user_id}/items", item)[0] == 200
    assert files_holding(data_dir, raw_values(person)) == {}  # masked before anything was stored

    assert call("DELETE", f"/v1/users/{user_id}")[0] == 204

    assert files_holding(data_dir, [user_id.encode(), *raw_values(person)]) == {}
