"""Two words where a person is expected ("Ask ... whether", "lunch with ... yesterday", "... and I"), in lower
case, or capitalised when they do not open a sentence: names no locale of the name gazetteer holds were stored
raw. Words a dictionary holds, words people write in lower case ("terraform", "nginx") and places after a verb
of going stay as they were. Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from agentmem.adapters.local.word_case import written_in_lower_case


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def people(detector: LocalPiiDetector, text: str) -> list[str]:
    return [span.value for span in detector.detect(text) if span.entity_type == "PERSON"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Ask vendelkú tarraspöl whether the boiler works.", "vendelkú tarraspöl"),
        ("I had lunch with orvelia quantrump yesterday.", "orvelia quantrump"),
        ("Is bruniva oszkelmeier still your contact?", "bruniva oszkelmeier"),
        ("zeltrana vokkinen and I split the bill.", "zeltrana vokkinen"),
        ("Please send the keys to amriel dostrováková before noon.", "amriel dostrováková"),
        ("did harvelio quintasz reply to the email?", "harvelio quintasz"),
        # capitalised, after a word that takes a person
        ("I had lunch with Orvelia Quantrump yesterday.", "Orvelia Quantrump"),
        ("Please send the keys to Amriel Dostrováková before noon.", "Amriel Dostrováková"),
    ],
)
def test_a_lower_case_pair_where_a_person_is_expected_is_a_person(
    detector: LocalPiiDetector, text: str, name: str
) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize(
    "text",
    [
        "lunch with pad thai today",  # words a dictionary holds
        "deploy with terraform modules today",
        "we drove to vendelkú tarraspöl today",  # a place after a verb of going
        "ask the team whether it works",
        "thanks to nginx, the site is up",  # one word alone
    ],
)
def test_words_a_dictionary_holds_or_people_write_and_places_are_no_one(
    detector: LocalPiiDetector, text: str
) -> None:
    assert people(detector, text) == []


def test_words_people_write_in_lower_case_are_told_from_names() -> None:
    assert written_in_lower_case("terraform") and written_in_lower_case("nginx")
    assert not written_in_lower_case("ratilainen") and not written_in_lower_case("caner")  # absent or too rare


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # what follows the person: an object ("the plan", "my keys"), "in", "as", "to", "last", "next"
        ("i told vendora pallikkaran the plan", "vendora pallikkaran"),
        ("can you send oruvemi adekunbi the invoice", "oruvemi adekunbi"),
        ("i gave bartovik wróbliczak my keys", "bartovik wróbliczak"),
        ("i met vendora pallikkaran in lisbon", "vendora pallikkaran"),
        ("we hired oruvemi adekunbi as a designer", "oruvemi adekunbi"),
        ("ask bartovik wróbliczak to review it", "bartovik wróbliczak"),
        ("i had dinner with oruvemi adekunbi last night", "oruvemi adekunbi"),
        ("I told Vendora Pallikkaran the plan", "Vendora Pallikkaran"),
    ],
)
def test_a_pair_before_what_follows_an_object_is_a_person(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize(
    "text",
    [
        # opening a sentence, two unknown words before "to" / "in" are as often a tool's name
        "kubectl rollout to the cluster",
        "deploy with terraform modules to aws",
        "i paid stripe invoices last month",
        "show ruff diagnostics in the editor",
    ],
)
def test_tools_before_what_follows_an_object_are_no_one(detector: LocalPiiDetector, text: str) -> None:
    assert people(detector, text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I told sorcha ní bhraonlaoich the plan", "sorcha ní bhraonlaoich"),
        ("i had lunch with cathal ó donnghaile yesterday", "cathal ó donnghaile"),
        ("ask dervla nic giolladhé whether it works", "dervla nic giolladhé"),
    ],
)
def test_a_particle_between_the_two_words_is_part_of_the_name(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # an adverb that ends the clause after the person: "too", "twice", "first", "directly"
        ("I told ríonach ó ceallacháin too.", "ríonach ó ceallacháin"),
        ("i called vendora pallikkaran twice", "vendora pallikkaran"),
        ("please ring oruvemi adekunbi first", "oruvemi adekunbi"),
        ("ask bartovik wróbliczak directly", "bartovik wróbliczak"),
    ],
)
def test_a_pair_before_an_adverb_that_ends_the_clause_is_a_person(
    detector: LocalPiiDetector, text: str, name: str
) -> None:
    assert people(detector, text) == [name]


@pytest.mark.parametrize(
    "text", ["kubectl rollout too", "run ruff diagnostics first", "deploy with terraform modules too"]
)
def test_tools_before_the_same_adverbs_are_no_one(detector: LocalPiiDetector, text: str) -> None:
    assert people(detector, text) == []
