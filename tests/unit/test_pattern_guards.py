"""Guarded Presidio patterns: an expression runs only where its guard allows, and every guard the detector uses
is true of each text its expression matches in (so skipping changes no span). Every value here is made up."""

from __future__ import annotations

import pytest
import regex
from agentmem.adapters.local import date_of_birth, postal_code, street_address
from agentmem.adapters.local.pattern_guards import GuardedPattern, all_of, has_any_word, has_digit
from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from presidio_analyzer import Pattern, PatternRecognizer

FLAGS = regex.MULTILINE


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def recognizer(pattern: Pattern) -> PatternRecognizer:
    return PatternRecognizer(supported_entity="THING", name="ThingRecognizer", patterns=[pattern],
                             global_regex_flags=FLAGS)


def found(rec: PatternRecognizer, text: str, **kwargs: object) -> list[tuple[int, int]]:
    return [(result.start, result.end) for result in rec.analyze(text, ["THING"], **kwargs)]


def test_a_false_guard_skips_the_expression_and_a_true_one_finds_what_presidio_finds() -> None:
    plain = recognizer(Pattern("code", r"\bX\d{3}\b", 0.8))
    never = recognizer(GuardedPattern("code", r"\bX\d{3}\b", 0.8, flags=FLAGS, could_match=lambda _: False))
    guarded = recognizer(GuardedPattern("code", r"\bX\d{3}\b", 0.8, flags=FLAGS, could_match=has_digit))
    text = "codes X123 and X456"
    assert found(plain, text) == [(6, 10), (15, 19)]
    assert found(never, text) == []
    assert found(guarded, text) == found(plain, text)
    assert found(guarded, "no code here") == []


def test_called_with_other_flags_presidio_compiles_the_expression_again_without_the_guard() -> None:
    never = recognizer(GuardedPattern("code", r"\bx\d{3}\b", 0.8, flags=FLAGS, could_match=lambda _: False))
    assert found(never, "code X123", regex_flags=regex.IGNORECASE) == [(5, 9)]


def test_word_guards_fold_case_as_the_expressions_do() -> None:
    birth = has_any_word(("born", "birth"))
    assert birth("BORN on 3 May 1990") and birth("Birthday: 3 May") and not birth("carried by the wind")
    # The Kelvin sign matches "k" case-insensitively; the long s matches "s".
    assert has_any_word(("kid",))("\u212aID") and has_any_word(("post",))("po\u017ft code")
    assert all_of(has_digit, birth)("born 1990") and not all_of(has_digit, birth)("born yesterday")


def guarded_patterns() -> list[tuple[str, GuardedPattern]]:
    recognizers = [date_of_birth.build_recognizer(), postal_code.build_recognizer(),
                   street_address.build_recognizer()]
    return [(f"{rec.name}: {pattern.name}", pattern) for rec in recognizers for pattern in rec.patterns
            if isinstance(pattern, GuardedPattern)]


# Texts the guarded expressions match in, each of them in a form its guard must still let through: upper
# case, a street with "S/N" for its number, a street word after an underscore, a code after a name in capitals.
MATCHED = [
    "BORN ON 17 APRIL 1986", "my d.o.b. is 02/03/1977", "Birthday: 4th of July", "DOB 11/1979",
    "Please tell me your date of birth. It's 8/12/1991",
    "ZIP CODE: 76400", "postcode SW1A 1AA", "Eircode D02 X285", "PLZ 10115", "CEP 75534-030",
    "Send it to Camino Real, S/N please", "She lives at _Rua do Sol today", "217 Lovers Lane",
    "Baker Street, Springfield", "chemin de Dijoux", "Meet me at the corner of Baker Street and Oak Avenue",
    "Søndergade 52", "Via dei Fiorentini", "30102 Kaevu 94",
]


@pytest.mark.parametrize(("name", "pattern"), guarded_patterns())
def test_every_guard_is_true_where_its_expression_matches(name: str, pattern: GuardedPattern) -> None:
    expression = regex.compile(pattern.regex, flags=pattern.compiled_with_flags)
    matched = [text for text in MATCHED if expression.search(text)]
    assert matched, f"{name}: no text of MATCHED exercises it"
    assert [text for text in matched if not pattern.compiled_regex._could_match(text)] == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("BORN ON 17 APRIL 1986", ("DATE_TIME", "17 APRIL 1986")),
        ("ZIP CODE: 76400", ("ZIP_CODE", "76400")),
        ("Send it to Camino Real, S/N please", ("STREET_ADDRESS", "Camino Real, S/N")),
        ("She lives at _Rua do Sol today", ("STREET_ADDRESS", "Rua do Sol")),
    ],
)
def test_the_detector_still_finds_what_only_a_guard_s_edge_lets_through(
    detector: LocalPiiDetector, text: str, span: tuple[str, str]
) -> None:
    assert span in [(found.entity_type, found.value) for found in detector.detect(text)]
