"""The recognizers the local detector adds to Presidio's spaCy one: names, street addresses, organisations."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.name_gazetteer import shared_gazetteer
from agentmem.adapters.local.person_names import PersonNameFinder
from agentmem.adapters.local.presidio_pii import LocalPiiDetector, PresidioPiiDetector
from agentmem.domain.pii import PiiSpan


def found(spans: list[PiiSpan]) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in spans}


def test_the_gazetteer_knows_given_names_of_many_languages_but_not_ordinary_words() -> None:
    gazetteer = shared_gazetteer()
    for name in ("Sofie", "Tiffany", "Halldór", "Nikolaj", "Akira"):
        assert gazetteer.is_first(name), name
    assert gazetteer.is_last("Yamada")
    for word in ("will", "May", "June", "Sunday", "the"):
        assert not gazetteer.is_name(word), word


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Timotea lives on Via dei Fiorentini 17 street.", "Timotea"),  # a person's verb after the name
        ("My name appears incorrectly, please correct it to Dr. Cettina Fanucci?", "Cettina Fanucci"),  # title
        ("she was born on 8/5/1989. her maiden name is nyberg", "nyberg"),  # a cue, lower case
        ("follow up with patricia desrosiers in a couple of months.", "patricia desrosiers"),  # gazetteer pair
        ("Sofie, can I please speak to your boss?", "Sofie"),  # a given name spaCy calls a product
    ],
)
def test_names_spacy_misses_are_found(text: str, name: str) -> None:
    assert ("PERSON", name) in found(LocalPiiDetector().detect(text))


def test_a_given_name_spacy_reads_as_a_place_is_a_person() -> None:
    text = "I want to add Tünde Hoffmann as a beneficiary to my account"
    assert ("LOCATION", "Tünde Hoffmann") in found(PresidioPiiDetector(entities={"LOCATION"}).detect(text))
    assert ("PERSON", "Tünde Hoffmann") in found(LocalPiiDetector().detect(text))


def test_the_finder_leaves_words_inside_spacys_events_and_amounts_alone() -> None:
    text = "The last Sunday before Labor Day we paid Sofie 20 dollars."
    finder = PersonNameFinder()
    sofie = text.index("Sofie")
    assert (sofie, sofie + 5) in {(start, end) for start, end, _ in finder.find(text, [])}
    amount = ("MONEY", sofie, text.index(" dollars") + 8)
    assert all(not (start < amount[2] and amount[1] < end) for start, end, _ in finder.find(text, [amount]))


def test_capitalised_words_that_are_not_given_names_stay() -> None:
    text = "Please review the Quarterly Report before Monday and Flag real clichés only."
    assert LocalPiiDetector().detect(text) == []


@pytest.mark.parametrize(
    "address",
    [
        "6750 Koskikatu 25 Apt. 864\nArtilleros\n, CO\n Uruguay 64677",
        "217 Lovers Lane",
        "Rua do Arenque 1634",
        "PSC 6293, Box 8158\nAPO AP 04336",
        "USNS Sekerková\nFPO AA 65728",
        "Magasinsgatan 7",
        "C/ Señores Curas 88",
        # numbered streets: an ordinal or a bare number for the name
        "350 5th Avenue",
        "1216 57 Street",
        "225 W 57th St",
    ],
)
def test_street_addresses_are_one_span(address: str) -> None:
    text = f"Please send it to {address} by Friday."
    assert ("STREET_ADDRESS", address) in found(LocalPiiDetector().detect(text))


def test_a_name_inside_a_street_is_the_address_not_a_person() -> None:
    spans = found(LocalPiiDetector().detect("We met at 14 Crown Street on the corner."))
    assert spans == {("STREET_ADDRESS", "14 Crown Street")}


@pytest.mark.parametrize(
    ("text", "organisation"),
    [
        ("I work for Pixia Corp. since May.", "Pixia Corp"),  # the period is trimmed, as after any name
        ("The address of Civic Impulse LLC is unknown.", "Civic Impulse LLC"),
        ("Owens, Duran and Oneal sent the papers.", "Owens, Duran and Oneal"),
    ],
)
def test_organisations_are_found_by_their_form(text: str, organisation: str) -> None:
    assert ("ORGANIZATION", organisation) in found(LocalPiiDetector().detect(text))


def test_a_list_of_given_names_is_people_not_a_firm() -> None:
    spans = found(LocalPiiDetector().detect("Our founders: Rudi, Jackson and Campos."))
    assert ("PERSON", "Rudi") in spans
    assert not any(entity_type == "ORGANIZATION" for entity_type, _ in spans)


def test_spacys_own_organisations_stay_off_unless_asked_for() -> None:
    text = "She joined Initech last year."
    assert "ORGANIZATION" not in {span.entity_type for span in PresidioPiiDetector().detect(text)}
    assert ("ORGANIZATION", "Initech") in found(PresidioPiiDetector(spacy_organizations=True).detect(text))


def test_a_list_of_lower_case_given_names_is_people() -> None:
    text = "they had 4: silvana, adam, kristina and caleb."
    names = {value for entity_type, value in found(LocalPiiDetector().detect(text)) if entity_type == "PERSON"}
    assert names == {"silvana", "adam", "kristina", "caleb"}
    assert LocalPiiDetector().detect("we bought apples, pears and plums.") == []


def test_one_given_name_after_a_preposition_of_place_is_left_to_spacy() -> None:
    finder = PersonNameFinder()
    text = "Mrs. Schwarz flew to Sofie on Sunday morning."
    assert (text.index("Sofie"), text.index("Sofie") + 5) not in {(s, e) for s, e, _ in finder.find(text, [])}
    text = "Sofie called this morning."
    assert (0, 5) in {(s, e) for s, e, _ in finder.find(text, [])}


def test_a_street_then_its_city_on_the_same_line_leaves_the_city_a_place() -> None:
    spans = found(LocalPiiDetector().detect("Tomomi lives at 86036 Rua do Arenque 1634, Lisbon"))
    assert ("STREET_ADDRESS", "86036 Rua do Arenque 1634") in spans
    assert ("LOCATION", "Lisbon") in spans


def test_a_street_corner_is_one_address() -> None:
    text = "Send it to the corner of Kuusiku 7 and Alexander Flat please."
    spans = LocalPiiDetector().detect(text)
    assert [span.entity_type for span in spans] == ["STREET_ADDRESS"]
    assert spans[0].value.startswith("Kuusiku 7 and Alexander")


@pytest.mark.parametrize(
    ("text", "age"),
    [
        ("Mr. Baader is a 21 year old man", "21"),
        ("Patient is a 62-year-old male", "62"),
        ("and i'm 26 y/o.", "26"),
        ("He just turned 58 years old", "58"),
        ("My father retired at the age of 61", "61"),
        ("I'll turn 65 next spring", "65"),
        ("She is about to turn 30.", "30"),
    ],
)
def test_ages_are_the_number_the_words_around_it_call_an_age(text: str, age: str) -> None:
    assert ("AGE", age) in found(LocalPiiDetector().detect(text))


@pytest.mark.parametrize(
    "text", ["We sold 21 old cars in 2019.", "client 0 turn 12", "It was turn 5 of the game.", "Take the turn 2 exit."]
)
def test_a_number_without_an_age_cue_is_not_an_age(text: str) -> None:
    assert "AGE" not in {span.entity_type for span in LocalPiiDetector().detect(text)}


@pytest.mark.parametrize(
    ("text", "code"),
    [("My zip code is 76400", "76400"), ("ZIP: 75534-030", "75534-030"), ("ZIP: 7412 SL", "7412 SL"),
     ("postcode SW1A 1AA", "SW1A 1AA")],
)
def test_a_postal_code_introduced_as_one_is_found(text: str, code: str) -> None:
    assert ("ZIP_CODE", code) in found(LocalPiiDetector().detect(text))


@pytest.mark.parametrize(
    "text", ["Love the colours of that painting!", "Glad to hear it went well.", "it was a long way home", "Lucky you."]
)
def test_an_english_verb_or_adjective_alone_is_not_a_name(text: str) -> None:
    assert "PERSON" not in {span.entity_type for span in LocalPiiDetector().detect(text)}


def test_a_place_wordnet_knows_stays_a_place() -> None:
    spans = found(LocalPiiDetector().detect("London is lovely in spring."))
    assert ("LOCATION", "London") in spans
    assert ("PERSON", "London") not in spans
