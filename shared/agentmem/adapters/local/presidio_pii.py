"""The local detector for names, places, addresses, organisations, ages: Microsoft Presidio over spaCy.

Presidio's ``AnalyzerEngine`` runs with an NLP engine built here around the pinned spaCy pipeline (see
``spacy_pipeline``), so it never calls ``spacy.cli.download``, and with a registry of Presidio's spaCy
recognizer and agentmem's own: people's names spaCy misses (``person_names``, with the gazetteer of
``name_gazetteer``), street addresses (``street_address``), organisations by their form
(``organization_names``), ages (``age``), postal codes (``postal_code``) and dates of birth
(``date_of_birth``). Structured identifiers are
left to ``RegexPiiDetector``, which validates them. ``LocalPiiDetector`` is the two together, the
default detector of the local backend.

spaCy labels dates and times too (DATE_TIME), but its precision on them is low (0.17 on pii-dev) and a
masked date takes the timeline out of a conversation's memory, so they are not reported by default; a
date of birth is (``dates_of_birth=False`` turns that off).
spaCy's organisations are not reported by default either (precision 0.43 / recall 0.62 on pii-dev with
the other recognizers): it reads ordinary capitalised words as organisations ("Flag real cliches
only." in an editor's comment), which would mask the words lessons are made of; organisations found by
their form ("Civic Impulse LLC") are. ``PresidioPiiDetector(entities=..., spacy_organizations=True)``
turns either back on.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Collection
from typing import TYPE_CHECKING

from agentmem.adapters.local import (
    age,
    date_of_birth,
    noun_phrases,
    organization_names,
    person_names,
    place_names,
    postal_code,
    script_names,
    street_address,
    thing_names,
)
from agentmem.adapters.local.combining_marks import without_marks
from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words
from agentmem.adapters.local.name_gazetteer import shared_gazetteer
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.presidio_analysis import requested_analysis
from agentmem.adapters.local.spacy_pipeline import shared_pipeline
from agentmem.adapters.local.thing_names import DEMONYM
from agentmem.adapters.local.word_case import case_ratio
from agentmem.domain.pii import PiiSpan, drop_overlapping, resolve_overlaps
from agentmem.ports.pii import PiiDetector

if TYPE_CHECKING:
    from presidio_analyzer import AnalyzerEngine

PERSON = "PERSON"
LOCATION = "LOCATION"
ORGANIZATION = "ORGANIZATION"
NRP = "NRP"
DATE_TIME = "DATE_TIME"

STREET_ADDRESS = street_address.STREET_ADDRESS
AGE = age.AGE
ZIP_CODE = postal_code.ZIP_CODE

DEFAULT_NER_ENTITIES: frozenset[str] = frozenset({PERSON, LOCATION, NRP, STREET_ADDRESS, ORGANIZATION, AGE, ZIP_CODE})
# spaCy's OntoNotes labels under Presidio's names (Presidio's own mapping).
SPACY_TO_PRESIDIO: dict[str, str] = {
    "PERSON": PERSON,
    "GPE": LOCATION,
    "LOC": LOCATION,
    "ORG": ORGANIZATION,
    "NORP": NRP,
    "DATE": DATE_TIME,
    "TIME": DATE_TIME,
}
SUPPORTED_ENTITIES: frozenset[str] = frozenset({*SPACY_TO_PRESIDIO.values(), STREET_ADDRESS, AGE, ZIP_CODE})
_LANGUAGE = "en"
_SPACY_RECOGNIZER = "SpacyRecognizer"

_analyzer_lock = threading.Lock()
_analyzer: AnalyzerEngine | None = None
# spaCy's Language is not documented as safe to call from two threads at once; one NER call at a time.
_analyze_lock = threading.Lock()


def _build_analyzer() -> AnalyzerEngine:
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine
    from presidio_analyzer.predefined_recognizers import SpacyRecognizer

    class PinnedSpacyNlpEngine(SpacyNlpEngine):
        """Presidio's spaCy engine over the process's pinned pipeline: ``load`` never downloads."""

        def load(self) -> None:
            self.nlp = {_LANGUAGE: shared_pipeline()}  # type: ignore[assignment]

    # spaCy's other labels (CARDINAL, MONEY ...) map to themselves: Presidio keeps an unmapped entity as it
    # is anyway, but logs a warning for each one, i.e. for every number in every text.
    labels = getattr(shared_pipeline().get_pipe("ner"), "labels", ())
    engine = PinnedSpacyNlpEngine(
        models=[{"lang_code": _LANGUAGE, "model_name": "pinned"}],
        ner_model_configuration=NerModelConfiguration(
            model_to_presidio_entity_mapping={**{label: label for label in labels}, **SPACY_TO_PRESIDIO}
        ),
    )
    engine.load()
    registry = RecognizerRegistry(supported_languages=[_LANGUAGE])
    registry.add_recognizer(
        SpacyRecognizer(supported_language=_LANGUAGE, supported_entities=sorted(set(SPACY_TO_PRESIDIO.values())))
    )
    registry.add_recognizer(person_names.build_recognizer())
    registry.add_recognizer(script_names.build_recognizer())
    registry.add_recognizer(street_address.build_recognizer())
    registry.add_recognizer(age.build_recognizer())
    registry.add_recognizer(postal_code.build_recognizer())
    registry.add_recognizer(date_of_birth.build_recognizer())
    for recognizer in organization_names.build_recognizers():
        registry.add_recognizer(recognizer)
    # Read with the pipeline, not on the first text a rule needs it for (0.9 s that one turn would wait).
    case_ratio("the")
    return AnalyzerEngine(nlp_engine=engine, registry=registry, supported_languages=[_LANGUAGE])


def shared_analyzer() -> AnalyzerEngine:
    """The process's Presidio analyzer, built (and the spaCy pipeline loaded) on first call."""
    global _analyzer
    if _analyzer is not None:
        return _analyzer
    with _analyzer_lock:
        if _analyzer is None:
            _analyzer = _build_analyzer()
        return _analyzer


class PresidioPiiDetector:
    """Names, places, organisations and nationalities found by Presidio's spaCy recognizer.

    Construction is free; the shared analyzer is built on the first ``detect``. Spans are trimmed of
    surrounding whitespace and punctuation spaCy sometimes includes.
    """

    def __init__(
        self,
        entities: Collection[str] = DEFAULT_NER_ENTITIES,
        min_score: float = 0.5,
        spacy_organizations: bool = False,
        dates_of_birth: bool = True,
    ) -> None:
        unknown = set(entities) - SUPPORTED_ENTITIES
        if unknown:
            raise ValueError(f"spaCy's recognizer does not find {sorted(unknown)}")
        self.entities = sorted(entities)
        self.min_score = min_score
        self.spacy_organizations = spacy_organizations
        # A date of birth is a DATE_TIME whatever ``entities`` says of spaCy's other dates.
        self._requested = sorted({*self.entities, DATE_TIME}) if dates_of_birth else self.entities

    def detect(self, text: str) -> list[PiiSpan]:
        """Spans of ``text``, sorted and not overlapping.

        A text with combining accents after letters ("Fọlákẹ́") is read without them and the spans mapped
        back (``combining_marks``): spaCy's recognizer misses the words that hold them.
        """
        folded = without_marks(text)
        if folded is None:
            return self._detect(text)
        spans = []
        for span in self._detect(folded.text):
            start, end = folded.original(span.start, span.end)
            spans.append(dataclasses.replace(span, start=start, end=end, value=text[start:end]))
        return spans

    def _detect(self, text: str) -> list[PiiSpan]:
        if not text.strip():
            return []
        analyzer = shared_analyzer()
        analysis = requested_analysis(analyzer, _LANGUAGE, self._requested)
        with _analyze_lock:
            results = analysis(text)
        # spaCy's organisations, reported or not: a maker before a model's name ("Chrysler Pacifica").
        makers = [
            (result.start, result.end) for result in results
            if result.entity_type == ORGANIZATION
            and (result.recognition_metadata or {}).get("recognizer_name") == _SPACY_RECOGNIZER
        ]
        # The ends of spaCy's nationalities: a dish's name may follow one ("Greek alice springs chicken").
        nationality_ends = [result.end for result in results if result.entity_type == NRP]
        streets = [(result.start, result.end) for result in results if result.entity_type == STREET_ADDRESS]
        spans = []
        for result in results:
            if result.score < self.min_score:
                continue
            recognizer = (result.recognition_metadata or {}).get("recognizer_name")
            if result.entity_type == DATE_TIME and DATE_TIME not in self.entities and recognizer == _SPACY_RECOGNIZER:
                continue
            if (
                result.entity_type == ORGANIZATION
                and not self.spacy_organizations
                and recognizer == _SPACY_RECOGNIZER
                and not place_names.a_destination(text, *_trimmed(text, result.start, result.end))
            ):
                continue
            start, end = _trimmed(text, result.start, result.end)
            if result.entity_type != STREET_ADDRESS:
                start, end = _first_line(text, start, end)
            if result.entity_type in _WORD_TYPES and _POSSESSIVE_LAST.search(text, start, end) and end - start > 4:
                end -= 2  # "Mccullough's song": the name without its possessive, as Presidio's labels have it
            introduced = _SELF_INTRODUCTION.match(text, start, end) if result.entity_type == PERSON else None
            start = introduced.end() if introduced is not None and introduced.end() < end else start
            if result.entity_type == PERSON and recognizer == _SPACY_RECOGNIZER:
                end = thing_names.without_a_trailing_noun(text, start, end)
                article = _ARTICLE_FIRST.match(text, start, end)
                start = article.end() if article is not None and article.end() < end else start
                start = _NAME_FINDER.name_start(text, start, end)
                # A name holds no colon nor double quote: spaCy's 'Answer:"Tube Snake Boogie' is a label and a
                # title, its 'tracy:"i'm roberto' a speaker and her words.
                inside = _LABEL_OR_QUOTE.search(text, start, end)
                end = _trimmed(text, start, inside.start())[1] if inside is not None else end
            person_before_a_noun = thing_names.a_person_before_a_noun(text[start:end])
            if result.entity_type in _WORD_TYPES and (
                _inside_identifier(text, start, end)
                or _POSSESSIVE_FIRST.match(text, start) is not None
                or _opens_with_a_common_noun(text, start, end)
                or (result.entity_type == NRP and noun_phrases.describes_a_thing(text, start, end))
                or (result.entity_type == PERSON and thing_names.names_a_thing(text, start, end, makers))
                or (result.entity_type == PERSON and thing_names.ends_in_a_common_word(text[start:end]))
                or (result.entity_type == PERSON and " " not in text[start:end] and not person_before_a_noun
                    and noun_phrases.after_a_determiner(text, start))
                or (result.entity_type in (PERSON, LOCATION) and noun_phrases.modifies_a_noun(
                    text, start, end, result.entity_type == PERSON and person_before_a_noun))
                or (result.entity_type in (LOCATION, PERSON) and DEMONYM.fullmatch(text, start, end) is not None
                    and (result.entity_type == LOCATION or thing_names.a_nationality(text[start:end]))
                    and noun_phrases.describes_a_thing(text, start, end))
                or (result.entity_type == LOCATION and thing_names.before_a_nationality_of_a_thing(text, start, end))
                or (result.entity_type == LOCATION and thing_names.a_make_after_an_article(text, start, end))
                or (result.entity_type == LOCATION and thing_names.a_thing_handled(text, start, end))
                or (result.entity_type == LOCATION and thing_names.after_a_maker(text, start, makers))
                or (result.entity_type in (PERSON, LOCATION) and thing_names.a_thing_of_a_nationality(text, start, end))
                or (text[start:end].islower() and noun_phrases.within_a_dish_name(text, start, nationality_ends))
                or (recognizer == _SPACY_RECOGNIZER and _common_lower_case_word(text, start, end, result.entity_type))
                or (recognizer == _SPACY_RECOGNIZER and result.entity_type == PERSON
                    and thing_names.a_common_word(text[start:end]))
                or _a_lone_lower_case_word(text, start, end)
            ):
                continue
            entity_type = result.entity_type
            if (
                recognizer == _SPACY_RECOGNIZER and (
                    (entity_type == PERSON and place_names.reads_as_a_place(text, start, end, streets))
                    or (entity_type == ORGANIZATION and not self.spacy_organizations)  # a destination, above
                )
            ) or (
                entity_type == PERSON
                and (
                    place_names.on_an_address_line(text, start, end, streets)
                    or place_names.where_someone_lives(text, start, end)
                )
            ):
                # "flew to Coles", "flew to Kuressaare", ">Valencia 42940", "grew up in Shelly Park": a place
                entity_type = LOCATION
            if entity_type == PERSON and organization_names.a_firm_line(text, start, end):
                entity_type = ORGANIZATION  # ">Flightaware" between a letter's name and its street
            if start < end:
                spans.append(PiiSpan(entity_type, start, end, text[start:end], result.score))
        return resolve_overlaps(spans)


_TRIM = " \t\r\n.,;:!?\"'()[]{}"
# Types whose values are words; a word glued into an identifier, or a nationality describing a dish, is none.
_WORD_TYPES = frozenset({PERSON, LOCATION, NRP, ORGANIZATION})
# The run of characters an identifier is made of ("marker-2-0-ec3190", "ridge_v2", "run/7f3a").
_IDENTIFIER_RUN = re.compile(r"[\w\-/.@:+#=]+")
# spaCy's person sometimes takes a sentence's opening word in too: "Dear Giorgos Papadakis", "Ring Tomasz".
_NAME_FINDER = person_names.PersonNameFinder()
# spaCy's person sometimes takes the article in: "The Aston Martin arrived" ("A" may be an initial).
_ARTICLE_FIRST = re.compile(r"[Tt]he[ \t]+(?=\w)")
# ... and "I'm" before the name it introduces: "Hi, I'm Órfhlaith Ní Bhraonáin".
_SELF_INTRODUCTION = re.compile(r"I['’]m[ \t]+(?=\w)")
# No name or place starts with a possessive: spaCy's "My Eircode", "Your Honour".
_POSSESSIVE_FIRST = re.compile(r"(?i:my|your|our|his|her|their|its)\b")
_POSSESSIVE_LAST = re.compile(r"['’]s$")
_LABEL_OR_QUOTE = re.compile(r"[:\"“”]")
_NEXT_LOWER_WORD = re.compile(r"[ \t]+([a-z][a-z'’\-]*)")


def _inside_identifier(text: str, start: int, end: int) -> bool:
    """True when the span holds a digit or reaches into a run of word characters and ``-_/.@:`` that is
    an identifier: one holding a digit, ``_``, ``/``, ``@``, ``=`` or ``#`` ("marker-2-0-ec3190")."""
    if any(char.isdigit() for char in text[start:end]):
        return True
    for edge in (start, end - 1):
        run_start = edge
        while run_start > 0 and _IDENTIFIER_RUN.fullmatch(text[run_start - 1]):
            run_start -= 1
        run = _IDENTIFIER_RUN.match(text, run_start)
        if run is None:
            continue
        token = run.group().rstrip(".:")
        if any(char.isdigit() or char in "_/@=#" for char in token):
            return True
    return False


def _common_lower_case_word(text: str, start: int, end: int, entity_type: str) -> bool:
    """True for one lower-case English word spaCy took for a place ("the landlord") or for a person when it
    is no name of the gazetteer ("Captain basket") or, before another noun, any ("ridge runner", "st. paul
    sandwich"). WordNet's nouns hold names too ("selma"), so a lower-case name alone stays a person."""
    value = text[start:end]
    if not value.islower() or " " in value or entity_type == NRP:
        return False
    nouns = wordnet_words(NOUN)
    if entity_type == LOCATION and "." in value:
        return True  # an abbreviation: "d.o.b", "p.s"
    if entity_type == LOCATION:
        return value in nouns or value in wordnet_words(VERB, ADJECTIVE, ADVERB)
    if not shared_gazetteer().is_name(value) and value in wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB):
        return True  # "Captain basket is back in stock": an English word that is nobody's name
    following = _NEXT_LOWER_WORD.match(text, end)
    return value in nouns and following is not None and following.group(1) in nouns


def _a_lone_lower_case_word(text: str, start: int, end: int) -> bool:
    """True when the whole text is one lower-case word: a JSON object key, a namespace label or a tag
    ("meta", "notes"), not a name someone wrote; a name of the user's vault is still masked there by
    consistent masking."""
    value = text[start:end]
    return value.islower() and value.isalpha() and text.strip() == value


# After an imperative ("Mark the calendar", "Chase the invoice"), not after a name's verb ("Mark is").
_OPENING_FUNCTION_WORDS = frozenset({"the", "a", "an", "to", "your", "my", "our", "this", "that", "these", "via"})


def _opens_with_a_common_noun(text: str, start: int, end: int) -> bool:
    """True for one capitalised English noun opening a sentence before a noun or a function word:
    "Miller moths everywhere", "Mark the calendar", "Baker's yeast". "Mark called" stays a name."""
    value = text[start:end]
    opens = noun_phrases.opens_a_sentence(text, start)
    if " " in value or not value[:1].isupper() or not opens or value.casefold() not in wordnet_words(NOUN):
        return False
    following = _NEXT_LOWER_WORD.match(text, end + 2 if text.startswith("'s", end) else end)
    if following is None:
        return False
    word = following.group(1)
    return word in _OPENING_FUNCTION_WORDS or noun_phrases.noun_lemma(word) or noun_phrases.plural_noun(word)


def _first_line(text: str, start: int, end: int) -> tuple[int, int]:
    """A name ends at a line break: spaCy sometimes runs one on into the next line ("Noelle Martinsson\\n 1593")."""
    newline = text.find("\n", start, end)
    return _trimmed(text, start, newline) if newline != -1 else (start, end)


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in _TRIM:
        start += 1
    while end > start and text[end - 1] in _TRIM:
        # A closing bracket or the period of an initial ("Faina D.") stays when it belongs to the name.
        if text[end - 1] == "." and end - start >= 2 and text[end - 2].isupper() and (
            end - start == 2 or not text[end - 3].isalpha()
        ):
            break
        end -= 1
    return start, end


class LocalPiiDetector:
    """The local backend's detector: validated structured identifiers, then names and places.

    A name or place that overlaps a structured identifier is dropped (an e-mail address is not an
    organisation), so what the validators found is always masked with its own type.
    """

    def __init__(self, structured: PiiDetector | None = None, ner: PiiDetector | None = None) -> None:
        self.structured = structured if structured is not None else RegexPiiDetector()
        self.ner = ner if ner is not None else PresidioPiiDetector()

    def detect(self, text: str) -> list[PiiSpan]:
        """Spans of ``text``, sorted and not overlapping."""
        structured = self.structured.detect(text)
        return resolve_overlaps([*structured, *drop_overlapping(self.ner.detect(text), structured)])
