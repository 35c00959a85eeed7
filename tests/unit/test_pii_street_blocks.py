"""Address blocks the street recognizer cut short or missed: a city with a link word of its own ("Ostrov nad
Ohří"), a house number before a street whose type ends in a full stop ("808 Kálmán Imre u. 12."), "Str." after
the name, Germanic and Nordic types written apart and capitalised, Mexico's "Eje vial", Vietnam's lanes ("Số
37/515 ..."). Every value here is made up for this file."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.presidio_pii import LocalPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def streets(detector: LocalPiiDetector, text: str) -> list[str]:
    return [span.value for span in detector.detect(text) if span.entity_type == "STREET_ADDRESS"]


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("4412 Vrbova 31\n Suite 117\n Lhota nad Moravou\n Czech Republic 58213",
         "4412 Vrbova 31\n Suite 117\n Lhota nad Moravou\n Czech Republic 58213"),
        ("612 Petőfi Sándor u. 40.\n Apt. 18\n Kiskőrös", "612 Petőfi Sándor u. 40.\n Apt. 18\n Kiskőrös"),
        ("She lives at 41 Ermou Str. near the square.", "41 Ermou Str"),
        ("She grew up at Lindbergs Väg 77 and still owns it.", "Lindbergs Väg 77"),
        ("The viewing is at Brauhauser Gang 19 on Saturday.", "Brauhauser Gang 19"),
        ("my new place is Eje vial Tlalpan 318, second floor", "Eje vial Tlalpan 318"),
        # a lane's house number, after Vietnamese "Số" ("number") or not, and words English only without accents
        ("The viewing is at Số 42/118 Hai Bà Trưng on Saturday.", "Số 42/118 Hai Bà Trưng"),
        ("The viewing is at 61/207 Hai Bà Trưng on Saturday.", "61/207 Hai Bà Trưng"),
        ("She lives at số 9 Nguyễn Thái Học.", "số 9 Nguyễn Thái Học"),
    ],
)
def test_the_whole_street_is_found(detector: LocalPiiDetector, text: str, street: str) -> None:
    assert streets(detector, text) == [street]


@pytest.mark.parametrize(
    "text",
    ["The Str. value is 12", "the Eje 5 plan", "Gang 3 was arrested", "The meeting is at 12/5 Main Hall."],
)
def test_the_same_words_without_a_street_are_none(detector: LocalPiiDetector, text: str) -> None:
    assert streets(detector, text) == []
