"""English words by part of speech, for telling "Love it!" from a woman called Love.

The words are WordNet 3.0's (Princeton's WordNet licence, permissive), as the pinned spaCy pipeline
``en_core_web_md`` ships them for its rule-based lemmatizer: the ``lemma_index`` table of
``lemmatizer/lookups/lookups.bin`` in the model folder (``spacy_pipeline.default_model_dir``): about
8,700 verbs, 21,000 adjectives, 3,800 adverbs and 57,500 nouns, read once on first use (the pipeline
itself loads only its NER, so the lemmatizer's tables are read here directly, from the same pinned
folder). WordNet's nouns and adjectives include thousands of people's and places' names ("john",
"maria", "london"; "caroline" is an adjective), so each rule of ``person_names`` picks the parts of
speech it can afford.
"""

from __future__ import annotations

import functools

from agentmem.adapters.local.spacy_pipeline import default_model_dir

VERB, ADJECTIVE, ADVERB, NOUN = "verb", "adj", "adv", "noun"


@functools.cache
def wordnet_words(*parts_of_speech: str) -> frozenset[str]:
    """WordNet's lower-case one-word lemmas of ``parts_of_speech`` (``VERB``, ``ADJECTIVE``, ...).

    The same parts in any order give the same set object, and every set holds the same string objects:
    the rules ask for seven combinations, which were seven readings of the table and two copies of the
    largest set (12 MiB of a server's memory).
    """
    return _words_of(frozenset(parts_of_speech))


@functools.cache
def _words_of(parts_of_speech: frozenset[str]) -> frozenset[str]:
    by_part = _words_by_part()
    if len(parts_of_speech) == 1:
        return by_part.get(next(iter(parts_of_speech)), frozenset())
    return frozenset().union(*(by_part.get(part, frozenset()) for part in parts_of_speech))


@functools.cache
def _words_by_part() -> dict[str, frozenset[str]]:
    """Each part of speech's words, from one reading of the lemmatizer's ``lemma_index`` table."""
    from spacy.lookups import Lookups

    index = Lookups().from_disk(default_model_dir() / "lemmatizer" / "lookups").get_table("lemma_index")
    return {
        part: frozenset(word for word in index.get(part, ()) if "_" not in word)
        for part in (VERB, ADJECTIVE, ADVERB, NOUN)
    }


@functools.cache
def _verb_tables() -> tuple[frozenset[str], frozenset[str], tuple[tuple[str, str], ...]]:
    from spacy.lookups import Lookups

    lookups = Lookups().from_disk(default_model_dir() / "lemmatizer" / "lookups")
    exceptions = frozenset(lookups.get_table("lemma_exc").get(VERB, {}))
    rules = tuple((old, new) for old, new in lookups.get_table("lemma_rules").get(VERB, ()))
    return wordnet_words(VERB), exceptions, rules


def a_verb_form(word: str) -> bool:
    """True when lower-case ``word`` is an English verb or one of its inflections ("refunded", "emailing",
    "rings", "drove"), by the rules and exceptions of spaCy's English lemmatizer over WordNet's verbs."""
    verbs, exceptions, rules = _verb_tables()
    if word in verbs or word in exceptions:
        return True
    return any(
        word.endswith(old) and len(word) > len(old) and word[: len(word) - len(old)] + new in verbs
        for old, new in rules
    )
