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
- a nationality before a noun, or before a participle and a noun, that is not a person ("Thai curry",
  "Cambodian fried chicken"; "a Thai woman", "Thai family" stay nationalities).
"""

from __future__ import annotations

import functools
import re

from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words
from agentmem.adapters.local.name_gazetteer import ordinary_words

# After a nationality, these nouns are a person or people ("a Thai woman"); other nouns are things ("Thai curry").
PEOPLE_NOUNS = frozenset(
    {"man", "men", "woman", "women", "people", "person", "persons", "citizen", "citizens", "national", "nationals",
     "guy", "guys", "girl", "girls", "boy", "boys", "lady", "ladies", "family", "families", "friend", "friends",
     "wife", "husband", "mother", "father", "parents", "descent", "origin", "heritage", "roots", "ancestry",
     "passport", "nationality", "immigrant", "immigrants", "refugee", "refugees", "student", "students",
     "couple", "kid", "kids", "child", "children", "family's", "living", "born", "speaker", "speakers"}
)  # fmt: skip
# Nouns of time and place that follow a person as adverbs do: "ask Maria tomorrow", "bring Kevin home".
_ADVERBIAL_NOUNS = frozenset(
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


def modifies_a_noun(text: str, start: int, end: int, common_name: bool) -> bool:
    """True when the one word ``text[start:end]`` is followed by a noun it names a kind of.

    "Lemon pie", "Georgia tile" (a singular noun lemma, no verb-taking word before; not when
    ``common_name``), "Hunter boots are" (a plural noun and "are" / "were"). "Kevin works", "Did Kevin
    call?" and "ask Maria tomorrow" stay.
    """
    if " " in text[start:end] or "-" in text[start:end]:
        return False
    following = _NEXT_WORD.match(text, end)
    if following is None:
        return False
    word = following.group(1)
    if word in _ADVERBIAL_NOUNS or word in wordnet_words(ADVERB):
        return False
    if noun_lemma(word) and not word.endswith("s"):
        return not common_name and _BARE_INFINITIVE_BEFORE.search(text[max(0, start - 12) : start]) is None
    if plural_noun(word):
        after = _NEXT_WORD.match(text, following.end())
        return after is not None and after.group(1) in {"are", "were"}
    return False


def describes_a_thing(text: str, end: int) -> bool:
    """True when a nationality ending at ``end`` is followed by a thing: a noun that is not a person ("Thai
    curry", "Danish pastries"), a lower-case word no dictionary knows ("Portuguese elote"), or a
    participle and such a noun ("Cambodian fried chicken")."""
    following = _NEXT_WORD.match(text, end)
    if following is None:
        return False
    word = following.group(1)
    if word in PEOPLE_NOUNS or word in ordinary_words() or word in wordnet_words(ADVERB):
        return False
    if noun_lemma(word) or plural_noun(word):
        return True
    if "-" not in word and word not in _every_english_word():
        return True  # a dish or thing WordNet does not list: "Portuguese elote", "Taiwanese satay"
    after = _NEXT_WORD.match(text, following.end())
    # Only a participle ("fried", "roasted"): before an adjective the nationality may describe a firm or
    # a people ("a Swedish multinational investment bank" is NRP in Presidio's labels).
    describing = word.endswith("ed") and (word[:-2] in wordnet_words(VERB) or word[:-1] in wordnet_words(VERB))
    return (
        describing
        and after is not None
        and after.group(1) not in PEOPLE_NOUNS
        and (noun_lemma(after.group(1)) or plural_noun(after.group(1)))
    )
