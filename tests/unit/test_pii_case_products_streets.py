"""The local detector's third round of issue 20: words that are mostly written in lower case name things
before a noun, products and dishes stay plaintext, people stay masked; streets of locales whose formats
spell whole names, and streets found after "is at" or an address cue without a street word or a number.
Every value here is made up for this file (no sentence of pii-dev or of the generated sets)."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from agentmem.adapters.local.street_words import street_words
from agentmem.adapters.local.word_case import case_ratio, usually_lower_case


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def found(detector: LocalPiiDetector, text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in detector.detect(text)}


def test_common_words_are_written_in_lower_case_more_than_names() -> None:
    # spaCy's cased counts: "wolf" and "lemon" are mostly lower case, "thompson" and "georgia" capitalised.
    assert usually_lower_case("Wolf") and usually_lower_case("lemon") and usually_lower_case("Baker")
    assert not usually_lower_case("Thompson") and not usually_lower_case("Georgia")
    ratio_wolf, ratio_miller = case_ratio("wolf"), case_ratio("Miller")
    assert ratio_wolf is not None and ratio_miller is not None and ratio_wolf > 0 > ratio_miller
    assert case_ratio("Zqxvbrt") is None  # no dictionary word, not counted


@pytest.mark.parametrize(
    "text",
    [
        "Is the Wolf marmalade any good?",  # a surname mostly written in lower case, before a noun
        "We picked up Kale napkins at the fair.",  # a plural noun after a word that is no subject
        "Got a Carolina kettle for the cabin.",  # a given name and a place, before a noun
        "Is the Lancia worth it?",  # a name heading a phrase after an article
        "Returned the Hyundai Kona today.",  # the same with a maker before the model
        "My Peugeot Rifter needs new tyres.",  # a possessive before the maker
        "Lancia support ends in March.",  # one word no gazetteer holds, opening a sentence before a noun
        "The Opel arrived scratched.",  # spaCy's place after an article, a make no dictionary holds
        "We had Swiss creamy polenta for lunch.",  # a nationality, an adjective and one noun
        "Try the Hungarian hot paprika soup there.",  # ... and a compound, not after "a"
        "Argentinian dulce de leche is my favourite.",  # lower-case words after a nationality
        "We walked along the mills for an hour.",  # a stop word is no surname of a lower-case pair
        "We bought Street candles at the fair.",  # a street word after lower-case words and no number
        "My BMW Rad 3 Touring is in the garage.",  # a number and an inflected English word is no street
    ],
)
def test_things_named_like_people_or_places_are_left_alone(detector: LocalPiiDetector, text: str) -> None:
    assert detector.detect(text) == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        # A surname mostly written capitalised stays a person before a noun, as "the Johnson novel" does.
        ("Unlike the Harrington novel, this one ends well.", ("PERSON", "Harrington")),
        ("Is the Robinson pillow still on the bed?", ("PERSON", "Robinson")),
        # After an article before a noun a full name stays (a concert of someone's).
        ("Have you been to a Tove Lindqvist concert?", ("PERSON", "Tove Lindqvist")),
        # A family after the article stays.
        ("We had dinner with the Johnsons yesterday.", ("PERSON", "Johnsons")),
        # A person's full name heading a line before a noun stays (notes, not a product).
        ("Maren Solberg phone is off today.", ("PERSON", "Maren Solberg")),
        # A relative's word before the name is no maker: "My Aunt Maria" is someone.
        ("My Aunt Maria called yesterday.", ("PERSON", "Maria")),
        # A capital "A" before a name may be an initial: no article rule there.
        ("A Kowalski called about the flat.", ("PERSON", "Kowalski")),
        # A lower-case name after a name written like a nationality stays ("Brian" is a name, no nationality).
        ("I told Brian john would call.", ("PERSON", "Brian john")),
        # A nationality before an indefinite article's compound stays (a firm of that country).
        ("She works for a Danish multinational shipping company.", ("NRP", "Danish")),
    ],
)
def test_people_stay_masked_beside_those_rules(detector: LocalPiiDetector, text: str, span: tuple[str, str]) -> None:
    assert span in found(detector, text)


def test_street_types_of_whole_name_locales_are_placed_both_ways() -> None:
    words = street_words()
    assert {"ulica", "cesta"} <= set(words.after)  # Faker's sk_SK / hr_HR list them, no format places them
    assert {"Ulica", "Avenija", "phố"} <= set(words.before)
    assert "Gade" in words.after and "Vej" in words.after  # fused suffixes written apart too
    assert "put" not in words.after  # an English word is no street type on its own


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("We moved to Hviezdoslavova ulica 27 in May.", "Hviezdoslavova ulica 27"),
        ("Post it to Avenija Marina Držića 14 please.", "Avenija Marina Držića 14"),
        ("The office is at 118 Jens Baggesens Vej now.", "118 Jens Baggesens Vej"),
        ("Send it to 7/21 phố Lò Đúc please.", "7/21 phố Lò Đúc"),
        ("The viewing is at Ondrejovičova 731 on Friday.", "Ondrejovičova 731"),
        ("The viewing is at 482 Kvistgårdsbakken on Friday.", "482 Kvistgårdsbakken"),
        ("We moved to Pärnu maantee 142 last year.", "Pärnu maantee 142"),
        ("Send the parcel to 318 Uusikatu please.", "318 Uusikatu"),
        ("We moved to Travessa Rebelo last spring.", "Travessa Rebelo"),
        ("Stop at the corner of Kaivo 12 Rd. and Ilmarin Loop.", "Kaivo 12 Rd. and Ilmarin Loop"),
    ],
)
def test_streets_are_found(detector: LocalPiiDetector, text: str, street: str) -> None:
    assert ("STREET_ADDRESS", street) in found(detector, text)


@pytest.mark.parametrize(
    "text",
    [
        "The standup is at 9 AM.",
        "Dinner is at 7 CET.",  # an acronym
        "My flight is at 6 Heathrow time.",  # an hour first
        "The final is at Wembley 3 weeks from now.",  # a number before a unit
        "Her office is at Level 3.",  # an English word
        "Ask the driver to stop at the corner.",
    ],
)
def test_times_and_rooms_after_is_at_are_no_street(detector: LocalPiiDetector, text: str) -> None:
    assert not {span for span in found(detector, text) if span[0] == "STREET_ADDRESS"}
