"""Whether a name-like span spaCy or the gazetteer found names a thing rather than a person or a place.

The rules ``PresidioPiiDetector`` drops a PERSON, LOCATION or NRP span by, when the words around it show
it is part of a product's, a model's or a dish's name (the phrase-level rules, with WordNet's words,
are in ``noun_phrases``):

- one word before a noun is a person only when it is a surname mostly written capitalised or a word no
  dictionary holds (``word_case``: "the Thompson bowl", "the Johnson novel"; not "Wolf jam", "a
  Georgia tile");
- a name heading a phrase after an article, after a possessive, or opening a sentence before a noun
  when a model's number, letters or maker show it is a product ("Returned the Bentley today", "My
  Chrysler Pacifica", "Lexus GX support ends");
- a place after a maker ("The Hyundai Tucson"), or a make after an article ("the Opel");
- lower-case words after a nationality, and a nationality's first word spaCy took for a place
  ("Argentinian dulce de leche", "Puerto Rican baba ghanoush");
- a name a year describes ("Zoolander is a 2017 Polish action-comedy film"): a person is no "2017 ...";
- one capitalised word that is no name of the gazetteer and is mostly written in lower case, a common
  word spaCy took for a person ("Capitalized words like Wisdom and Discipline");
- words ending in a common word that is no surname, after a first word that is no given name: a tool's or a
  service's name ("Docker Compose", "Kafka Streams", "serde json"), not "Rose Baker" nor "Tomoko Tyler".
"""

from __future__ import annotations

import re

from agentmem.adapters.local import noun_phrases
from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words
from agentmem.adapters.local.name_gazetteer import shared_gazetteer
from agentmem.adapters.local.word_case import case_ratio, usually_lower_case, written_in_lower_case

# A one-word span written like a nationality ("Guatemalan", "Thai").
DEMONYM = re.compile(r"[A-Z][a-z]+(?:an|ese|ish|i)")


def a_person_before_a_noun(value: str) -> bool:
    """One word that stays a person's name before a noun: a surname mostly written capitalised ("the Johnson
    novel", "the Thompson bowl", a PERSON in Presidio's labels) or a word no English dictionary knows ("the
    Dratchev novel"). A given name alone ("a Georgia tile", "Eugenia pillows") or a surname mostly written
    in lower case, a common word (``word_case``: "Wolf jam", "a Baker chair"), names a kind of thing."""
    if " " in value:
        return False
    if value.casefold() not in wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB):
        return True
    return shared_gazetteer().is_last(value) and not usually_lower_case(value)


# "is a 2017 Polish action-comedy film", "was an 1890s design": a year before the noun the name is.
_DESCRIBED_BY_A_YEAR = re.compile(r"[ \t]+(?:is|was)[ \t]+an?[ \t]+(?:1[5-9]|20)[0-9]{2}s?\b")
# A common word is written in lower case at least e^1.0 times as often as capitalised ("wisdom" +2.0,
# "discipline" +2.7); a common word that is also a surname sits lower ("baker" -0.55) and is left to the
# gazetteer's rules.
_COMMON_WORD = 1.0


def a_common_word(value: str) -> bool:
    """True for one capitalised word that no locale of the gazetteer holds as a name and that English mostly
    writes in lower case (``word_case``): "Wisdom", "Discipline" are words spaCy may take for a person;
    "Hope", "Hunter", "Baker" are names of the gazetteer and stay."""
    if " " in value or not value[:1].isupper() or shared_gazetteer().is_name(value):
        return False
    ratio = case_ratio(value)
    return ratio is not None and ratio >= _COMMON_WORD


def ends_in_a_common_word(value: str) -> bool:
    """True for two words whose last is no name of the gazetteer and a word English writes in lower case
    or its plural (``word_case``: "Compose", "Streams"), and whose first is a word and no given name: "Docker
    Compose", "Kafka Streams", "Nginx Ingress" name tools. A surname that is also a word is the gazetteer's ("Rose
    Baker", "Ivan Hammer"), a given name keeps the rest ("Mark Hunter"), and a longer span may be a name and
    a title ("Ayna Khadzhiyev's Cautionary Tales")."""
    words = value.split()
    if len(words) != 2:
        return False
    gazetteer = shared_gazetteer()
    last = re.sub(r"['’]s$", "", words[-1].rstrip(".,"))
    return (
        len(last) > 4  # a short one is as often a surname the gazetteer lacks: "Alım Tok", "Tutya Kunt"
        and not gazetteer.is_name(last)
        and not gazetteer.is_first(words[0])
        # and a first word that is a word too, of a dictionary or one people write ("Docker", "Kafka", "nginx"):
        # a given name the gazetteer lacks keeps a surname that is a word ("Émeric Cabana", "Kelemen Szell")
        and (words[0].casefold() in wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB) or written_in_lower_case(words[0]))
        # a common word or its plural ("Streams", "Pipelines"); not a word only the frequency table holds,
        # which is as often a surname ("Asya Godina")
        and any(usually_lower_case(form) for form in (last, last.removesuffix("s"), last.removesuffix("es")))
    )


def described_by_a_year(text: str, end: int) -> bool:
    """True when "is a" / "was an" and a year follow the name ending at ``end``: "Zoolander is a 2017 Polish
    action-comedy film" names a work. A person's age is no year ("is a 35-year-old")."""
    return _DESCRIBED_BY_A_YEAR.match(text, end) is not None


def names_a_thing(text: str, start: int, end: int, makers: list[tuple[int, int]]) -> bool:
    """True when the name ``text[start:end]``, with the capitalised words before it ("Toyota Yaris"), is a
    thing's: the head of a phrase after an article ("Returned the Bentley today"; not a family, "the
    Johnsons"), after a possessive ("My Chrysler Pacifica"), or opening a sentence before a noun when it is
    one word no gazetteer holds, holds a maker spaCy calls an organisation or comes before a noun only a
    product has ("Lancia support ends", "Ford Transit support", "Fiat Croma support ends")."""
    run = noun_phrases.name_start(text, start)
    value = text[start:end]
    if value.endswith("s") and shared_gazetteer().is_last(value[:-1]):
        return False
    if noun_phrases.heads_a_phrase_after_an_article(text, run, end) or noun_phrases.after_a_possessive(text, run):
        return True
    if described_by_a_year(text, end):
        return True
    # Opening a sentence before a noun, a person's full name may head a line of notes: only one word that
    # the gazetteer does not hold as a name names a thing there ("Lancia support ends next year").
    run_end = noun_phrases.name_end(text, end)
    value = text[run:run_end]
    following = _FOLLOWING_WORD.match(text, run_end)
    # a model's body or kind in lower case may come between ("Suzuki Baleno kombi support ends next year")
    second = _FOLLOWING_WORD.match(text, following.end()) if following is not None else None
    if (
        following is not None
        and second is not None
        and second.group(1) in noun_phrases.PRODUCT_NOUNS
        and following.group(1) not in wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)
        and noun_phrases.opens_a_sentence(text, run)
    ):
        return True
    a_thing = (
        (" " not in value and not shared_gazetteer().is_name(value))
        # before a noun only a product has ("Fiat Croma support ends next year")
        or (following is not None and following.group(1) in noun_phrases.PRODUCT_NOUNS)
        or any(run <= maker_start and maker_end <= run_end for maker_start, maker_end in makers)
        # a model's number or letters: "Porsche 911 Carrera", "Lexus GX", "MINI Cooper"
        or any(char.isdigit() for char in value)
        or any(len(word) > 1 and word.isupper() for word in value.split())
    )
    return a_thing and noun_phrases.opens_before_a_noun(text, run, run_end)


def a_make_after_an_article(text: str, start: int, end: int) -> bool:
    """True for one word spaCy took for a place that heads a phrase after an article and that no dictionary
    holds: "Comparing the Lada with the older one", "Returned the Opel today". Places WordNet lists keep
    their article ("the Netherlands", "the Bronx")."""
    value = text[start:end]
    return (
        " " not in value
        and value.casefold() not in wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)
        and noun_phrases.heads_a_phrase_after_an_article(text, start, end)
    )


# A verb that handles a thing, then "the": "Returned the Opel today", "Comparing the Lada with the older one".
# One is not returned, bought or charged a place (one returns *to* it).
_HANDLED = re.compile(
    r"\b(?i:return(?:s|ed|ing)?|compar(?:e|es|ed|ing)|b(?:uy|uys|ought|uying)|s(?:ell|ells|old|elling)"
    r"|park(?:s|ed|ing)?|fix(?:es|ed|ing)?|repair(?:s|ed|ing)?|servic(?:e|es|ed|ing)|charg(?:e|es|ed|ing)"
    r"|crash(?:es|ed|ing)?|wash(?:es|ed|ing)?|order(?:s|ed|ing)?|unbox(?:es|ed|ing)?|upgrad(?:e|es|ed|ing)"
    r"|replac(?:e|es|ed|ing)|rent(?:s|ed|ing)?|leas(?:e|es|ed|ing)|trad(?:e|es|ed|ing)[ \t]+in)[ \t]+the[ \t]+$"
)


def a_thing_handled(text: str, start: int, end: int) -> bool:
    """True for one capitalised word spaCy took for a place that heads a phrase after "the" and a verb that
    handles things: "Returned the Opel today" ("opel" is a WordNet noun, the industrialist, so
    ``a_make_after_an_article`` keeps it)."""
    return (
        " " not in text[start:end]
        and _HANDLED.search(text, max(0, start - 30), start) is not None
        and noun_phrases.heads_a_phrase_after_an_article(text, start, end)
    )


def after_a_maker(text: str, start: int, makers: list[tuple[int, int]]) -> bool:
    """True for a place spaCy found right after an organisation in one run of capitalised words, a model of
    a maker: "The Hyundai Tucson", "the Fiat Scudo Kombi"."""
    run = noun_phrases.name_start(text, start)
    return any(run <= maker_start and maker_end < start for maker_start, maker_end in makers)


_FOLLOWING_WORD = re.compile(r"[ \t]+([a-z]+)\b")
_NEXT_CAPITALISED_WORD = re.compile(r"[ \t]([A-Z][a-z]+)\b")
_PREVIOUS_WORD = re.compile(r"([A-Z][a-z]+)[ \t]+$")
_PREVIOUS_LOWER_WORD = re.compile(r"\b([a-z]+)[ \t]+$")


_SLAVIC_SURNAME_END = re.compile(r"(?:[sc]k|dzk|zk)[iy]$")


def a_nationality(word: str) -> bool:
    """A capitalised word written like a nationality that WordNet lists as an adjective ("Cameroonian") or
    that is no name of the gazetteer ("Salvadorian"; "Brian", "Julian" are names) nor a Slavic surname
    ("Zembrowski")."""
    return DEMONYM.fullmatch(word) is not None and (
        word.casefold() in wordnet_words(ADJECTIVE)
        # a Slavic surname ends in "-ski" / "-cki" like "Pakistani" ends in "-i": "Zembrowski" is no nationality
        or (not shared_gazetteer().is_name(word) and _SLAVIC_SURNAME_END.search(word) is None)
    )


def before_a_nationality_of_a_thing(text: str, start: int, end: int) -> bool:
    """True when a place is the first word of a nationality that describes a thing: spaCy's "Puerto" of
    "Puerto Rican baba ghanoush"."""
    following = _NEXT_CAPITALISED_WORD.match(text, end)
    return (
        following is not None
        and DEMONYM.fullmatch(following.group(1)) is not None
        and noun_phrases.describes_a_thing(text, start, following.end())
    )


def a_thing_of_a_nationality(text: str, start: int, end: int) -> bool:
    """True for lower-case words after a nationality, spaCy's person in "Argentinian banh mi viêt", or the
    nationality and them ("Cameroonian goji"), or one lower-case word after a plural noun ("potatoes
    o'brien"): a dish, not a person."""
    words = text[start:end].split()
    if len(words) > 1 and a_nationality(words[0]) and all(word.islower() for word in words[1:]):
        return True
    if not text[start:end].islower():
        return False
    previous = _PREVIOUS_WORD.search(text, max(0, start - 30), start)
    if previous is not None and a_nationality(previous.group(1)):
        return True  # after a nationality spaCy split ("Puerto Rican baba ghanoush") as well
    # One lower-case word after a lower-case noun that is no verb names the dish: "potatoes o'brien".
    noun = _PREVIOUS_LOWER_WORD.search(text, max(0, start - 30), start)
    return (
        " " not in text[start:end]
        and noun is not None
        and noun.group(1) not in wordnet_words(VERB)
        and noun_phrases.plural_noun(noun.group(1))
        and noun.group(1)[:-1] not in wordnet_words(VERB)
    )


def without_a_trailing_noun(text: str, start: int, end: int) -> int:
    """The end of spaCy's person without a lower-case noun it ran on into: "Kale mug" -> "Kale", "paul
    sandwich" -> "paul", "john tonight" -> "john"; "Kevin smith" (a surname) stays."""
    value = text[start:end]
    head, _, last = value.rpartition(" ")
    if (
        head
        and last.islower()
        and (noun_phrases.noun_lemma(last) or noun_phrases.plural_noun(last) or last in noun_phrases.ADVERBIAL_NOUNS)
        and not shared_gazetteer().is_last(last)
    ):
        return start + len(head.rstrip())
    return end
