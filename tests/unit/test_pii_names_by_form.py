"""People the name gazetteer cannot know, found by the form of the phrase around them, on the real detector:
a name with an initial, who made or played in a work, a firm's founders, a word joined by "and" to a person,
a full name's surname again, lower-case speakers, lists and names alone, the name on top of an address whose
street has two numbers. And what must stay plaintext beside each form. Every value is made up for this file
(no sentence of pii-dev or of the generated sets); the names are chosen outside Faker's lists."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.name_gazetteer import shared_gazetteer
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def people(detector: LocalPiiDetector, text: str) -> set[str]:
    return {span.value for span in detector.detect(text) if span.entity_type == "PERSON"}


def masked_as_a_person(detector: LocalPiiDetector, text: str, name: str) -> bool:
    start = text.index(name)
    return any(
        span.entity_type == "PERSON" and span.start <= start and start + len(name) <= span.end
        for span in detector.detect(text)
    )


def test_the_names_of_this_file_are_unknown_to_the_gazetteer() -> None:
    gazetteer = shared_gazetteer()
    for word in ("Tarvoslav", "Hiiemurd", "Quenbrith", "Orvaldun", "Zdrevmar", "Velmirova", "Brastek"):
        assert not gazetteer.is_name(word), word


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("We saw a Tarvoslav K Hiiemurd retrospective last week.", "Tarvoslav K Hiiemurd"),
        ("The letter was signed by Quenbrith D. Orvaldun himself.", "Quenbrith D. Orvaldun"),
    ],
)
def test_two_unknown_words_around_an_initial_are_a_person(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert name in people(detector, text)


def test_a_capitalised_initial_between_english_words_is_no_person(detector: LocalPiiDetector) -> None:
    assert people(detector, "We chose Plan B Entertainment for the party.") == set()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("The remake was directed by Hiiemurd Brastek in a single summer.", "Hiiemurd Brastek"),
        ("A quiet thriller starring Orvaldun and two dogs.", "Orvaldun"),
        ('Their best track is "Copper Rain" by Velmirova, from the second album.', "Velmirova"),
        ("This ballad by ex-Rustbelt Brastek is the best of the list.", "Brastek"),
        ("Have you been to a Zdrevmar Velmirova concert?", "Zdrevmar Velmirova"),
    ],
)
def test_who_made_or_played_in_a_work_is_a_person(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert masked_as_a_person(detector, text, name)


def test_a_work_by_a_firm_or_a_common_word_names_no_person(detector: LocalPiiDetector) -> None:
    assert people(detector, "The report was written by Support after the outage.") == set()
    assert people(detector, "The app was designed by Quenbrith Labs.") == set()


def test_a_firms_founders_are_people_not_a_firm(detector: LocalPiiDetector) -> None:
    text = "The studio is the brainchild of its founders: Orvaldun, Brastek and Hiiemurd."
    assert {"Orvaldun", "Brastek", "Hiiemurd"} <= people(detector, text)
    firm = "The brief went to Orvaldun, Brastek and Hiiemurd for a quote."
    assert any(span.entity_type == "ORGANIZATION" for span in detector.detect(firm))


def test_a_word_no_dictionary_holds_joined_by_and_to_a_person_is_one(detector: LocalPiiDetector) -> None:
    assert "Brastek" in people(detector, "Brastek and Jennifer were the two engineers.")


def test_a_common_word_joined_to_a_person_stays_plaintext(detector: LocalPiiDetector) -> None:
    assert "Coffee" not in people(detector, "Coffee and Jennifer were all I needed.")


def test_a_full_names_surname_again_is_the_same_person(detector: LocalPiiDetector) -> None:
    text = "The poems of Tarvoslav K Hiiemurd were read aloud. Nobody writes like early Hiiemurd."
    assert {"Tarvoslav K Hiiemurd", "Hiiemurd"} <= people(detector, text)


def test_a_surname_that_is_an_english_word_opening_a_sentence_is_not_spread(detector: LocalPiiDetector) -> None:
    text = "The song is by Zdrevmar L Key. Key findings follow below."
    found = [span for span in detector.detect(text) if span.entity_type == "PERSON"]
    assert all(not text[span.start :].startswith("Key findings") for span in found)


def test_lower_case_speakers_of_a_dialogue_are_people(detector: LocalPiiDetector) -> None:
    assert {"mika", "tracy"} <= people(detector, 'mika: "are you coming?"\ntracy: "in a minute"')


def test_lower_case_labels_of_lines_are_no_speakers(detector: LocalPiiDetector) -> None:
    assert people(detector, "note: buy milk\ntodo: call the plumber\nsummary: fine") == set()


def test_a_lower_case_list_of_names_and_unknown_words_is_people(detector: LocalPiiDetector) -> None:
    text = "we invited brastek, jennifer, orvaldun, maria and thomas."
    assert {"brastek", "orvaldun", "jennifer"} <= people(detector, text)


def test_a_lower_case_list_of_dishes_is_no_people(detector: LocalPiiDetector) -> None:
    assert people(detector, "we ordered tzatziki, hummus, falafel and baklava.") == set()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("the real author of kowalczyk has been argued about for years", "kowalczyk"),
        ("She named him Orvaldun after his grandfather.", "Orvaldun"),
        ("i'm jennifer's daughter, nice to meet you", "jennifer"),
    ],
)
def test_a_name_after_words_that_take_a_person_is_one(detector: LocalPiiDetector, text: str, name: str) -> None:
    assert name in people(detector, text)


def test_a_given_name_opening_an_identifier_is_no_person(detector: LocalPiiDetector) -> None:
    assert detector.detect("meta.tags[*]") == []  # a LangGraph index path


def test_the_name_atop_an_address_whose_street_has_two_numbers_is_a_person(detector: LocalPiiDetector) -> None:
    text = ">Tarvoslav Hiiemurd\n>4418 27 Brook Avenue\n>Apt. 12"
    assert "Tarvoslav Hiiemurd" in people(detector, text)


def test_a_name_holds_no_colon_nor_quote(detector: LocalPiiDetector) -> None:
    text = 'What did he rank first? Answer:"Velvet Thunder Road" by Zdrevmar J Velmirova'
    found = people(detector, text)
    assert "Zdrevmar J Velmirova" in found
    assert all(":" not in value and '"' not in value for value in found)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("We saw a Tarvoslav K Hiiemurd retrospective last week.", "Tarvoslav K Hiiemurd"),
        ("The remake was directed by Hiiemurd Brastek in a single summer.", "Hiiemurd Brastek"),
        ("A quiet thriller starring Orvaldun and two dogs.", "Orvaldun"),
        ('Their best track is "Copper Rain" by Velmirova, from the second album.', "Velmirova"),
        ("This ballad by ex-Rustbelt Brastek is the best of the list.", "Brastek"),
        ("Have you been to a Zdrevmar Velmirova concert?", "Zdrevmar Velmirova"),
        ("The studio is the brainchild of its founders: Orvaldun, Brastek and Hiiemurd.", "Brastek"),
        ("The poems of Tarvoslav K Hiiemurd were read aloud. Nobody writes like early Hiiemurd.", "early Hiiemurd"),
        ("She named him Orvaldun after his grandfather.", "Orvaldun"),
        ("the real author of kowalczyk has been argued about for years", "kowalczyk"),
        (">Tarvoslav Hiiemurd\n>4418 27 Brook Avenue\n>Apt. 12", "Tarvoslav Hiiemurd"),
    ],
)
def test_each_form_finds_the_name_without_spacys_help(text: str, name: str) -> None:
    """The person rules alone (``PersonNameFinder`` given no spaCy entity) find each name by its form."""
    from agentmem.adapters.local.person_names import PersonNameFinder

    value = name.removeprefix("early ")
    start = text.index(name) + (len(name) - len(value))
    spans = PersonNameFinder().find(text, [])
    assert any(span_start <= start and start + len(value) <= span_end for span_start, span_end, _ in spans)


def test_brastek_joined_to_a_person_spacy_found_is_found_too() -> None:
    from agentmem.adapters.local.person_names import PersonNameFinder

    text = "Brastek and Jennifer were the two engineers."
    jennifer = text.index("Jennifer")
    spans = PersonNameFinder().find(text, [("PERSON", jennifer, jennifer + len("Jennifer"))])
    assert (0, len("Brastek")) in {(start, end) for start, end, _ in spans}
