"""When the words around a capitalised word show it is part of a thing's name, not a person or a place.

English puts a name before a noun to name a kind of thing ("Hunter boots", "the Thompson bowl",
"Thai curry", "Georgia tile"); a person's name before a lower-case word is almost always the subject
of a verb ("Kevin works", "Maria said"). Without a part-of-speech tagger (the pinned pipeline runs
only its NER, see ``spacy_pipeline``) these rules read the words themselves, with WordNet's lemmas
(``english_words``):

- words after a possessive ("My Fiat Multipla") are no person's name, nor one word after an article
  ("the Lemon", "a Bristol"),
  and one word before a singular noun lemma ("Lemon pie", "Bristol jacket") modifies it, unless an
  auxiliary or a verb that takes a bare infinitive comes before ("Did Kevin call?", "let Maria know"),
  when the word is no common name: a surname before a noun is still a person ("the Johnson novel", "a
  Melissa Oliveira concert" are people in Presidio's labels), so these two apply to words that are a
  name in fewer than three of Faker's locales or in none (``name_gazetteer``), as the caller decides;
- one word before a plural noun and "are" / "were" ("Hunter boots are on sale") modifies it;
- a nationality before a noun, or before a participle or an adjective and a noun, that is not a person
  ("Thai curry", "Cambodian fried chicken", "Swiss dirty rice"; "a Thai woman", "Thai family" stay
  nationalities);
- names after an article that no noun follows are the head of the phrase, a thing's name, never a
  person's: English puts no article before a person's name ("Is the Abarth worth it?", "Returned the
  Mitsubishi Lancer today"; "the Johnson novel" stays a person), and neither does a sentence open with
  a person's name before a singular noun ("Lancia support ends next year").
"""

from __future__ import annotations

import functools
import re

from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words
from agentmem.adapters.local.name_gazetteer import ordinary_words
from agentmem.adapters.local.person_names import ROLE_WORD

# After a nationality, these nouns are a person or people ("a Thai woman"); other nouns are things ("Thai curry").
PEOPLE_NOUNS = frozenset(
    {"man", "men", "woman", "women", "people", "person", "persons", "citizen", "citizens", "national", "nationals",
     "guy", "guys", "girl", "girls", "boy", "boys", "lady", "ladies", "family", "families", "friend", "friends",
     "wife", "husband", "mother", "father", "parents", "descent", "origin", "heritage", "roots", "ancestry",
     "passport", "nationality", "immigrant", "immigrants", "refugee", "refugees", "student", "students",
     "couple", "kid", "kids", "child", "children", "family's", "living", "born", "speaker", "speakers"}
)  # fmt: skip
# Nouns of time and place that follow a person as adverbs do: "ask Maria tomorrow", "bring Kevin home".
ADVERBIAL_NOUNS = frozenset(
    {"today", "tomorrow", "yesterday", "tonight", "morning", "evening", "afternoon", "night", "week", "weekend",
     "home", "now", "later", "soon", "again", "too", "back", "first", "last", "next", "tho", "thanks", "please"}
)  # fmt: skip
_DETERMINER_BEFORE = re.compile(
    r"(?:^|[^\w'’])(?i:the|a|an|my|your|our|their|its|every|each|some|any|no)[ \t]+$"
)
# A bare infinitive follows these, so the noun after a name may be a verb: "Did Kevin call?", "let Maria cook".
_BARE_INFINITIVE_BEFORE = re.compile(
    r"(?i:\b(?:do|does|did|will|would|can|could|should|shall|may|might|must|let|lets|make|makes|made|help|helps"
    r"|helped|see|saw|watch|watched|hear|heard|have|has|had|ca|wo)(?:n['’]?t)?)[ \t]+$"
)
_NEXT_WORD = re.compile(r"[ \t]+([a-z][a-z'’\-]*)")
_PREVIOUS_WORD = re.compile(r"([a-z][a-z'’\-]*)[ \t]+$")
_INDEFINITE_BEFORE = re.compile(r"(?:^|[^\w'’])(?i:a|an)[ \t]+(?:\d+[ \t]+)?$")
_OBJECTS = frozenset({"it", "them", "me", "you", "us", "him", "her", "this", "that", "the", "a", "an"})
_CLAUSE_BEFORE = re.compile(r"(?:,|;|:|\b(?i:and|or|but|when|if|because|that))[ \t]*$")


@functools.cache
def _nouns() -> frozenset[str]:
    return wordnet_words(NOUN)


@functools.cache
def _every_english_word() -> frozenset[str]:
    return wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)


def noun_lemma(word: str) -> bool:
    """True when ``word`` itself is one of WordNet's nouns ("pillow"), not only an inflection of one."""
    return word in _nouns() and word not in ordinary_words()


def plural_noun(word: str) -> bool:
    """True when ``word`` is an English plural of one of WordNet's nouns ("boots", "dishes", "berries")."""
    if word in ordinary_words() or not word.endswith("s"):
        return False
    stems = {word[:-1], word[:-2] if word.endswith("es") else "", word[:-3] + "y" if word.endswith("ies") else ""}
    return any(stem and stem in _nouns() for stem in stems)


_POSSESSIVE_BEFORE = re.compile(r"(?:^|[^\w'’])(?i:my|your|our|their|its)[ \t]+$")


def after_a_possessive(text: str, start: int) -> bool:
    """True when "my", "your", "our", "their" or "its" comes straight before ``start``: "My Fiat Multipla"
    (a relative in between makes a name: "my cousin Ciarán", which is found after "cousin")."""
    return _POSSESSIVE_BEFORE.search(text[max(0, start - 8) : start]) is not None


def after_a_determiner(text: str, start: int) -> bool:
    """True when an article, a demonstrative or a possessive comes straight before ``start``: "the Abarth"."""
    return _DETERMINER_BEFORE.search(text[max(0, start - 12) : start]) is not None


# "A" is left out: it may be an initial ("A Kowalski called").
_ARTICLE_BEFORE = re.compile(r"(?:^|[^\w'’])(?:[Tt]he|THE|an|An|a)[ \t]+$")
_WORD_CHARACTERS = re.compile(r"[\w'’\-]+")
_NAME_WORD_AFTER = re.compile(r" ([\w'’\-]+)")
_TITLE_BEFORE = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St)\.$")


def name_start(text: str, start: int) -> int:
    """Where the run of words holding a capital or a digit that ``start`` is in begins, one space apart:
    "Yaris" of "the Toyota Yaris" is in a run from "Toyota", "Max" of "the iPhone 13 Pro Max" from "iPhone"."""
    while text.endswith(" ", 0, start) and not text.endswith("  ", 0, start):
        word_start = text.rfind(" ", 0, start - 1) + 1
        word = text[word_start : start - 1]
        if (
            _WORD_CHARACTERS.fullmatch(word) is None
            or not any(char.isupper() or char.isdigit() for char in word)
            or word.casefold() in ordinary_words()
            or ROLE_WORD.fullmatch(word) is not None  # "My Aunt Maria": the name starts after "Aunt"
        ):
            break
        start = word_start
    return start


def name_end(text: str, end: int) -> int:
    """Where the run of words holding a capital or a digit that ends at ``end`` goes on to: "Porsche" of
    "Porsche 911 Carrera support" runs to "Carrera"."""
    while True:
        following = _NAME_WORD_AFTER.match(text, end)
        # a model's capitals are no stop word: "Lexus IS 250 C support"
        model = following is not None and len(following.group(1)) > 1 and following.group(1).isupper()
        if following is None or (following.group(1).casefold() in ordinary_words() and not model):
            return end
        if not any(char.isupper() or char.isdigit() for char in following.group(1)):
            return end
        end = following.end()


def opens_a_sentence(text: str, start: int) -> bool:
    """True when ``start`` begins the text, a line or a sentence (not after a title's period: "Dr. Smith")."""
    before = text[:start].rstrip(" \t")
    return not before or before[-1] in "!?\n" or (before[-1] == "." and not _TITLE_BEFORE.search(before))


def heads_a_phrase_after_an_article(text: str, start: int, end: int) -> bool:
    """True when the name ``text[start:end]`` follows "the", "a" or "an" and no lower-case noun follows it, so
    it is the head of the phrase: "Is the Abarth worth it?", "Returned the Mitsubishi Lancer today". A
    person's name takes no article in English; before a noun it may ("the Johnson novel")."""
    if _ARTICLE_BEFORE.search(text[max(0, start - 6) : start]) is None:
        return False
    following = _NEXT_WORD.match(text, end)
    if following is None or not _a_noun(following.group(1)):
        return True
    # A noun that takes an object is no noun the name modifies: "Is the Abarth worth it?"
    after = _NEXT_WORD.match(text, following.end())
    return after is not None and after.group(1) in _OBJECTS


def opens_before_a_noun(text: str, start: int, end: int) -> bool:
    """True when the name ``text[start:end]`` opens a sentence before a singular noun, which it names a kind
    of: "Lancia support ends next year", "Ford Transit support". A person opening a sentence is followed by
    a verb ("Kevin works", "Maria said")."""
    following = _NEXT_WORD.match(text, end)
    if following is None or not opens_a_sentence(text, start):
        return False
    word = following.group(1)
    return noun_lemma(word) and not word.endswith("s") and word not in ADVERBIAL_NOUNS


def modifies_a_noun(text: str, start: int, end: int, common_name: bool) -> bool:
    """True when the one word ``text[start:end]`` is followed by a noun it names a kind of.

    "Lemon pie", "Georgia tile" (a singular noun lemma, no verb-taking word before; not when
    ``common_name``), "Hunter boots are" (a plural noun and "are" / "were"), "We bought Lemon tiles" (a
    plural noun after a word that is no subject; not when ``common_name``). "Kevin works", "Did Kevin
    call?" and "ask Maria tomorrow" stay.
    """
    if " " in text[start:end] or "-" in text[start:end]:
        return False
    following = _NEXT_WORD.match(text, end)
    if following is None:
        return False
    word = following.group(1)
    if word in ADVERBIAL_NOUNS or word in wordnet_words(ADVERB):
        return False
    if noun_lemma(word) and not word.endswith("s"):
        return not common_name and _BARE_INFINITIVE_BEFORE.search(text[max(0, start - 12) : start]) is None
    if plural_noun(word):
        after = _NEXT_WORD.match(text, following.end())
        if after is not None and after.group(1) in {"are", "were"}:
            return True
        # Not opening a sentence or a clause, the word is no subject, so the plural is no verb of its: "We
        # bought Lemon tiles", "a Haven glove"; "Mark works here" stays, and so does "gave Kevin flowers".
        return not common_name and not opens_a_sentence(text, start) and _CLAUSE_BEFORE.search(
            text[max(0, start - 8) : start]) is None
    return False


def describes_a_thing(text: str, start: int, end: int) -> bool:
    """True when the nationality ``text[start:end]`` is followed by a thing: a noun that is not a person ("Thai
    curry", "Danish pastries"), a lower-case word no dictionary knows ("Portuguese elote"), or a
    participle and such a noun ("Cambodian fried chicken"), or an adjective and one noun, or two after
    anything but "a" / "an" before the nationality at ``start`` ("Swiss dirty rice", "Afghan soft shell
    crab")."""
    following = _NEXT_WORD.match(text, end)
    if following is None:
        return False
    word = following.group(1)
    after = _NEXT_WORD.match(text, following.end())
    if word in ADVERBIAL_NOUNS and after is not None and _a_noun(after.group(1)):
        return True  # "Polish home fries"
    if word in PEOPLE_NOUNS or word in ordinary_words() or word in ADVERBIAL_NOUNS:
        return False
    if word in wordnet_words(ADVERB) and word not in wordnet_words(ADJECTIVE) and not noun_lemma(word):
        return False  # "Thai too", "Danish again"; not "bitter" or "soft", adverbs that are adjectives too
    if noun_lemma(word) or plural_noun(word):
        return True
    if _unknown_word(word):
        return True  # a dish or thing WordNet does not list: "Portuguese elote", "Irish kai-lan"
    if after is None or after.group(1) in PEOPLE_NOUNS:
        return False
    introduced = _INDEFINITE_BEFORE.search(text[max(0, start - 12) : start]) is not None
    if "-" in word and not introduced:
        # A compound of English words before one noun: "Spanish blue-plate special"; not "a 2017 Polish
        # action-comedy film" (NRP in Presidio's labels).
        closing = _NEXT_WORD.match(text, after.end())
        return _a_noun(after.group(1)) and (closing is None or not _a_noun(closing.group(1)))
    head = after.group(1)
    if head.endswith(_STYLE_SUFFIXES) or word.endswith(_STYLE_SUFFIXES):
        return True  # a style of a dish: "Iranian new york-style pizza", "Thai home-style curry"
    if participle(word):
        return noun_lemma(head) or plural_noun(head)
    # An adjective that is no noun ("a Swiss national" is a person), then a noun, two nouns (below) or a word
    # no dictionary knows: "Swiss dirty rice", "Cuban hairless rambutan".
    if word not in wordnet_words(ADJECTIVE) or word in _nouns():
        return False
    nouns = 0
    while after is not None and _a_noun(after.group(1)) and after.group(1) not in PEOPLE_NOUNS:
        nouns += 1
        after = _NEXT_WORD.match(text, after.end())
    if nouns == 2:
        # A compound: a dish ("Polish hot chicken sandwich", "Afghan soft shell crab"), unless "a" or "an"
        # introduces it as one thing of a kind, a firm or a people's ("a Swedish multinational investment bank").
        return not introduced
    return nouns == 1 or (nouns == 0 and _unknown_word(head))


# The end of a compound that names a style or a flavour of a thing, not a people: "new york-style".
_STYLE_SUFFIXES = ("-style", "-flavored", "-flavoured", "-inspired", "-themed")
# Nouns of what a make or a model has and a person does not: "Fiat Croma support ends", "Ford Explorer
# recall". Before one of them even a run of names opens the phrase of a product ("Maren Solberg phone is
# off" stays a person: people have phones).
PRODUCT_NOUNS = frozenset(
    {"support", "warranty", "firmware", "recall", "recalls", "lineup", "drivetrain", "engine", "gearbox",
     "transmission", "specs", "chassis", "bodywork", "facelift", "production", "trim", "variant", "dealership"}
)  # fmt: skip


def within_a_dish_name(text: str, start: int, nationality_ends: list[int]) -> bool:
    """True when up to three lower-case words that are nouns, adjectives or no dictionary's words lead back
    from ``start`` to a nationality ending at one of ``nationality_ends``: spaCy's "alice" in "Greek alice
    springs chicken", "lo mein" in "Puerto Rican beef lo mein". A person noun stops it ("a Russian guy ivan")."""
    position = start
    for _ in range(4):
        before = text[:position]
        if before != before.rstrip(" \t") and len(before.rstrip(" \t")) in nationality_ends:
            return True
        previous = _PREVIOUS_WORD.search(text, max(0, position - 30), position)
        if previous is None:
            return False
        word = previous.group(1)
        if word in PEOPLE_NOUNS or not (_a_noun(word) or word in wordnet_words(ADJECTIVE) or _unknown_word(word)):
            return False
        position = previous.start(1)
    return False


def _unknown_word(word: str) -> bool:
    """A word WordNet does not list, and when it is hyphenated a part it does not list: "elote", "kai-lan";
    not "action-comedy" (of "a Polish action-comedy film", NRP in Presidio's labels)."""
    if word in _every_english_word():
        return False
    return any(part not in _every_english_word() for part in word.split("-"))


def _a_noun(word: str) -> bool:
    return word not in ADVERBIAL_NOUNS and (noun_lemma(word) or plural_noun(word))


def participle(word: str) -> bool:
    """True for a regular past participle of one of WordNet's verbs: "roasted", "baked", "fried"."""
    verbs = wordnet_words(VERB)
    if word.endswith("ied"):
        return word[:-3] + "y" in verbs
    return word.endswith("ed") and (word[:-2] in verbs or word[:-1] in verbs)
