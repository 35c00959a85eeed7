"""The local detector's second round of issue 20: things named after words that are also names stay
plaintext while people stay masked; street types of Faker's locales; phones named by the words after
them. Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from agentmem.adapters.local.street_words import street_words


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def types(detector: LocalPiiDetector, text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in detector.detect(text)}


@pytest.mark.parametrize(
    "text",
    [
        "Hunter jackets are cheaper in the outlet.",  # a name before a plural noun and "are"
        "Grab a Lemon tart from the bakery.",  # a rare name that is an English noun, after an article
        "My Fiat Panda needs new brakes.",  # words after a possessive
        "River walks from the bridge are lovely.",  # an English noun opening the sentence before a plural noun
        "We tried Peruvian ceviche and Danish pastries.",  # nationalities before things
        "Cambodian grilled fish again tonight.",  # a nationality before a participle and a noun
        "Plaza parking is full on Saturdays.",  # a street word before lower-case words, no number
        "I work for 52 Clearing Ltd now.",  # a number and one English word is no street
    ],
)
def test_common_words_products_and_dishes_are_left_alone(detector: LocalPiiDetector, text: str) -> None:
    assert detector.detect(text) == []


def test_a_person_stays_a_person_before_a_noun_or_beside_a_thing(detector: LocalPiiDetector) -> None:
    # A surname common in many locales may be the author of the novel.
    assert ("PERSON", "Johnson") in types(detector, "Unlike the Johnson novel, this one ends well.")
    assert ("PERSON", "Kevin") in types(detector, "Did Kevin call about the lease?")
    assert ("NRP", "Peruvian") in types(detector, "Our new tenant is a Peruvian woman.")


def test_street_types_are_read_from_fakers_locales_with_where_each_writes_them() -> None:
    words = street_words()
    assert {"Privada", "Loteamento", "aleja"} <= set(words.before)
    assert {"Gully", "Foreshore"} <= set(words.after)
    assert {"faret", "lei"} <= set(words.fused)
    assert {"Studio", "Level"} <= set(words.units)
    assert "Bukit Bintang" not in words.after  # the Malaysian provider's "suffixes" are places


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("Send it to 41 Harkness Gully please.", "41 Harkness Gully"),
        ("The office is at Privada Norte Almagro 218.", "Privada Norte Almagro 218"),
        ("We rent at Halvorsenfaret 12 now.", "Halvorsenfaret 12"),
        ("Deliver to Studio 7\nQuinlan Plaza tomorrow.", "Studio 7\nQuinlan Plaza"),
        ("He stays at 88/412 Brandt Foreshore.", "88/412 Brandt Foreshore"),
        ("address: Zelenohorská 57", "Zelenohorská 57"),
        ("They moved to 204 Kasteelbeemdstraat last year.", "204 Kasteelbeemdstraat"),
        ("Post it to chemin de Vautrin, please.", "chemin de Vautrin"),
    ],
)
def test_streets_of_many_countries_are_one_address(detector: LocalPiiDetector, text: str, street: str) -> None:
    assert ("STREET_ADDRESS", street) in types(detector, text)


def test_a_unit_after_a_name_does_not_take_the_name_into_the_street(detector: LocalPiiDetector) -> None:
    found = types(detector, "Ms. Orla Brennock Suite 12 4410 Lindenhof 8")
    assert any(kind == "PERSON" and value.startswith("Orla Brennock") for kind, value in found), found
    assert any(kind == "STREET_ADDRESS" and value.endswith("Lindenhof 8") for kind, value in found), found


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("73519246 is the number for the vet", "73519246"),
        ("Text me on 481 3 702 after work.", "481 3 702"),
    ],
)
def test_a_number_the_words_around_call_a_phone_is_one(detector: LocalPiiDetector, text: str, phone: str) -> None:
    assert ("PHONE_NUMBER", phone) in types(detector, text)


def test_numbers_without_phone_words_keep_the_old_rules(detector: LocalPiiDetector) -> None:
    assert types(detector, "Order 73519246 is the number you need") == set()
    assert types(detector, "release 4 1 2 is out") == set()
