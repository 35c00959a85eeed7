"""Firms, places, French streets and products the local detector used to read as people or leave out, on
the real detector: a firm by its business word or by what a sentence says it is, a firm's line in a letter,
a place someone grew up in, a French or Galician type of way after a house number (not a count of things),
a car handled after "the", a model with capitals or a body word before "support". Every value is made up for
this file (no sentence of pii-dev or of the generated sets)."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def types_of(detector: LocalPiiDetector, text: str, value: str) -> set[str]:
    start = text.index(value)
    return {
        span.entity_type for span in detector.detect(text) if span.start <= start and start + len(value) <= span.end
    }


@pytest.mark.parametrize(
    ("text", "firm"),
    [
        ("Harriet Investments opened an office in the port.", "Harriet Investments"),
        ("We signed with Quenbrith Technologies last spring.", "Quenbrith Technologies"),
        ("Dalvander-Okoro is a Danish multinational investment bank and insurer.", "Dalvander-Okoro"),
        ("Maple Orvaldun is a design agency based in the old mill.", "Maple Orvaldun"),
    ],
)
def test_a_firm_by_its_business_word_or_what_it_is_said_to_be(
    detector: LocalPiiDetector, text: str, firm: str
) -> None:
    assert types_of(detector, text, firm) == {"ORGANIZATION"}


def test_a_person_said_to_be_a_business_owner_stays_a_person(detector: LocalPiiDetector) -> None:
    text = "Jennifer Brastek is a business owner in the town."
    assert types_of(detector, text, "Jennifer Brastek") == {"PERSON"}


def test_a_one_word_line_between_a_letters_name_and_its_street_is_the_firm(detector: LocalPiiDetector) -> None:
    text = "> Jennifer Hall\n> Tradelinko\n> Jennifer Hall\n> 18 Mellemvej 4\n> Apt. 7"
    assert types_of(detector, text, "Tradelinko") == {"ORGANIZATION"}
    assert types_of(detector, text, "Jennifer Hall") == {"PERSON"}


def test_a_surname_alone_above_a_street_stays_a_person(detector: LocalPiiDetector) -> None:
    assert types_of(detector, "Kowalski\n12 Main Street", "Kowalski") == {"PERSON"}


def test_where_someone_grew_up_is_a_place_whatever_given_name_opens_it(detector: LocalPiiDetector) -> None:
    text = "Mrs. Halvorsen is a retired nurse who grew up in Shelly Bay."
    assert types_of(detector, text, "Shelly Bay") == {"LOCATION"}


@pytest.mark.parametrize(
    "street",
    ["117 Place Benoit Frachon", "891 Cours Du Champ De Pierre", "240 Venelle Jean Vilar", "778 Prom. De Monbazillac",
     "1229 Cours Des Anemones", "1250 Place Verlaine"],
)  # fmt: skip
def test_a_french_type_of_way_after_a_house_number_is_a_street(detector: LocalPiiDetector, street: str) -> None:
    assert types_of(detector, f"The viewing is at {street} on Saturday.", street) == {"STREET_ADDRESS"}


def test_a_galician_rua_is_a_street(detector: LocalPiiDetector) -> None:
    text = "We moved to Rúa Madre Soledad de la Cruz, 284 last spring."
    assert "STREET_ADDRESS" in types_of(detector, text, "Rúa Madre Soledad")


@pytest.mark.parametrize(
    "street",
    ["R. de Simões, S/N", "6/75 Phan Văn Trị", "58/131 Độc Lập", "1038 Lazard Av", "Ala Sokağı 821",
     "Laan van het Kwekebos 1005", "Jardines de La Cruz 753"],
)  # fmt: skip
def test_streets_of_other_locales_after_is_at_are_streets(detector: LocalPiiDetector, street: str) -> None:
    """No number ("S/N"), a house number with a slash (no hour), Vietnamese words that spell English ones
    without their accents, Canada's "Av", Turkish, Dutch and Spanish types."""
    assert types_of(detector, f"The viewing is at {street} on Saturday.", street) == {"STREET_ADDRESS"}


def test_an_hour_after_is_at_is_still_no_street(detector: LocalPiiDetector) -> None:
    assert detector.detect("The meeting is at 6 Heathrow.") == []


@pytest.mark.parametrize("text", ["We need 12 Place Cards for the table.", "I bought 3 Square Meals."])
def test_a_count_of_things_after_a_number_is_no_street(detector: LocalPiiDetector, text: str) -> None:
    assert detector.detect(text) == []


@pytest.mark.parametrize(
    "text",
    ["Returned the Opel today.", "Lexus IS 250 C support ends next year.", "Suzuki Baleno kombi support ends soon."],
)
def test_a_car_handled_or_before_support_is_no_person_nor_place(detector: LocalPiiDetector, text: str) -> None:
    assert detector.detect(text) == []


def test_a_place_returned_to_stays_a_place(detector: LocalPiiDetector) -> None:
    assert types_of(detector, "We returned to the Netherlands today.", "Netherlands") == {"LOCATION"}
