"""WordNet's words by part of speech: one reading of the table, one set per combination of parts."""

from __future__ import annotations

from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, a_verb_form, wordnet_words


def test_the_same_parts_in_another_order_are_the_same_set_object() -> None:
    assert wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB) is wordnet_words(VERB, ADJECTIVE, ADVERB, NOUN)
    assert wordnet_words(VERB, ADVERB) is wordnet_words(ADVERB, VERB)


def test_a_combination_holds_each_part_s_words_and_shares_their_strings() -> None:
    nouns, verbs = wordnet_words(NOUN), wordnet_words(VERB)
    both = wordnet_words(NOUN, VERB)
    assert both == nouns | verbs
    assert {"table", "refund", "ring"} <= both and "afraid" not in both and "afraid" in wordnet_words(ADJECTIVE)
    # one reading of the table: the combination holds the very string objects of the single parts
    of_nouns, of_verbs = {word: word for word in nouns}, {word: word for word in verbs}
    assert all(word is of_nouns.get(word) or word is of_verbs.get(word) for word in both)
    assert not any("_" in word for word in both)  # WordNet's multi-word lemmas ("ice_cream") are left out


def test_an_unknown_part_of_speech_has_no_words() -> None:
    assert wordnet_words("interjection") == frozenset()
    assert wordnet_words("interjection", VERB) == wordnet_words(VERB)


def test_verb_forms_are_read_over_the_same_verbs() -> None:
    assert a_verb_form("refunded") and a_verb_form("drove") and not a_verb_form("tablecloth")


def test_words_without_their_diacritics_are_known_beside_the_words_themselves() -> None:
    from agentmem.adapters.local.person_names import _folded_words, _WordsOrFolded

    words = _WordsOrFolded(frozenset({"café", "naïve", "table"}))
    assert {"café", "cafe", "naive", "table"} <= {word for word in ("café", "cafe", "naive", "table") if word in words}
    assert "cafes" not in words and words.folded == {"cafe", "naive"}
    every_word = _folded_words()  # WordNet's, as the rules read them: the shared set, not a copy
    assert every_word.words is wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB) and "table" in every_word
