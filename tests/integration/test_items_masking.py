"""The items path masks like every other, seen from outside: values made up at test time are written
through the real handlers, then every file of the data folder (WAL included) is searched for them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from agentmem.domain.pii import TOKEN_PATTERN
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


def put_contact(call: HandlerCaller, person: MadeUpPerson, owner: str = "users/u-1") -> dict:
    body = {
        "namespace": ["contacts", person.phone_text],
        "key": f"{person.email} {person.phone_text}",
        "value": {person.email: {"card": person.card, "phone": person.phone, "note": f"call {person.phone_text}"},
                  "count": 3},
    }
    status, answer = call("PUT", f"/v1/{owner}/items", body)
    assert status == 200, answer
    return dict(answer)


@pytest.mark.parametrize("owner", ["users/u-1", "agents/planner"])
def test_no_file_of_the_data_folder_holds_a_namespace_key_object_key_or_number_written_as_an_item(
    call, data_dir, person, owner
):
    stored = put_contact(call, person, owner)

    assert files_holding(data_dir, raw_values(person)) == {}
    assert TOKEN_PATTERN.fullmatch(stored["namespace"][1])
    [object_key] = [k for k in stored["value"] if k != "count"]
    inner = stored["value"][object_key]
    assert TOKEN_PATTERN.fullmatch(object_key)
    assert TOKEN_PATTERN.fullmatch(inner["card"]) and "CREDIT_CARD" in inner["card"]
    assert TOKEN_PATTERN.fullmatch(inner["phone"]) and "PHONE" in inner["phone"]
    assert stored["value"]["count"] == 3  # a number that is no personal data stays a number


def test_an_item_written_with_personal_data_is_read_and_deleted_by_its_original_namespace_and_key(call, person):
    put_contact(call, person)
    namespace, key = quote(f"contacts.{person.phone_text}"), quote(f"{person.email} {person.phone_text}")

    status, got = call("GET", f"/v1/users/u-1/items?namespace={namespace}&key={key}")
    assert status == 200 and got["value"]["count"] == 3
    assert call("DELETE", f"/v1/users/u-1/items?namespace={namespace}&key={key}")[0] == 204
    assert call("GET", f"/v1/users/u-1/items?namespace={namespace}&key={key}")[0] == 404


def test_a_search_query_and_filter_naming_a_value_are_masked_and_find_the_item_holding_its_token(
    call, services, data_dir, person
):
    put_contact(call, person)
    status, found = call("POST", "/v1/users/u-1/items/search", {
        "namespacePrefix": ["contacts", person.phone_text], "query": f"who is {person.email}?",
    })
    assert status == 200 and len(found["items"]) == 1
    status, filtered = call("POST", "/v1/users/u-1/items/search", {"filter": {"count": 3}})
    assert status == 200 and len(filtered["items"]) == 1
    assert files_holding(data_dir, raw_values(person)) == {}


def test_the_users_items_and_their_vault_values_go_with_the_user(call, person):
    put_contact(call, person)
    assert call("DELETE", "/v1/users/u-1")[0] == 204

    status, listed = call("GET", "/v1/users/u-1/items/namespaces")
    assert status == 200 and listed["namespaces"] == []
    _, unmasked = call("POST", "/v1/users/u-1/threads/t-1/unmask", {"text": "x"})
    assert unmasked == {"text": "x"}


def test_a_value_named_only_by_its_key_is_masked_and_a_filter_on_it_still_finds_the_item(call, data_dir):
    # Made up for this test: alone, neither value says what it is; its key does.
    password, account = "Zq9!fresh-Value-7261", "88112233"
    body = {"namespace": ["creds"], "key": "bank", "value": {"password": password, "account_number": account,
                                                           "note": "renew in May"}}
    status, stored = call("PUT", "/v1/users/u-1/items", body)
    assert status == 200, stored
    assert TOKEN_PATTERN.fullmatch(stored["value"]["password"])
    assert TOKEN_PATTERN.fullmatch(stored["value"]["account_number"])
    assert stored["value"]["note"] == "renew in May"  # nothing personal: kept as written
    assert files_holding(data_dir, [password.encode(), account.encode()]) == {}
    status, found = call("POST", "/v1/users/u-1/items/search", {"filter": {"password": password}})
    assert status == 200 and [item["key"] for item in found["items"]] == ["bank"]
    _, unmasked = call("POST", "/v1/users/u-1/threads/t-1/unmask", {"text": stored["value"]["account_number"]})
    assert unmasked == {"text": account}


def test_an_integer_its_key_names_as_an_identifier_becomes_its_token_and_other_numbers_stay(call, data_dir):
    body = {"namespace": ["creds"], "key": "card", "value": {"pin": 4471, "accountNumber": 88112233, "age": 47,
                                                           "limit": 2500, "count": 3}}
    status, stored = call("PUT", "/v1/users/u-1/items", body)
    assert status == 200, stored
    value = stored["value"]
    assert TOKEN_PATTERN.fullmatch(value["pin"]) and TOKEN_PATTERN.fullmatch(value["accountNumber"])
    assert (value["age"], value["limit"], value["count"]) == (47, 2500, 3)  # compared as numbers: kept
    assert files_holding(data_dir, [b"4471", b"88112233"]) == {}
    status, found = call("POST", "/v1/users/u-1/items/search", {"filter": {"pin": 4471}})
    assert status == 200 and [item["key"] for item in found["items"]] == ["card"]
