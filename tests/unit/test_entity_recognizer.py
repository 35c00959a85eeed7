"""The greedy entity recognizer finds what spaCy's own NER component finds, from the same weights."""

from __future__ import annotations

import numpy as np
import pytest
from agentmem.adapters.local.entity_recognizer import (
    SPACY_NER,
    GreedyEntityRecognizer,
    UnsupportedModel,
    use_greedy_recognizer,
)
from agentmem.adapters.local.spacy_pipeline import CompactKeyTable, shared_pipeline

TEXTS = [
    "Ana Lopez moved to Lisbon with her dog.",
    "Barack Obama visited New York City with Michelle on Monday, then flew to the United Kingdom.",
    "Call Dr. Maria Fernanda de la Cruz at the Royal Free Hospital in London",
    "I met Jo",  # an entity on the last word
    "Paris",  # a one-word text
    "The address is 6750 Koskikatu 25 Apt. 864\nArtilleros\n, CO\n Uruguay 64677",
    "  \n\n Tom   and\tJerry  went to   Berlin \n",  # whitespace tokens, where no entity may open
    "Audit this outdoor gear article for brand voice issues: hype words, clichés and stacked exclamation marks.",
    "Caroline went to the LGBTQ support group on 7 May 2023 and told Melanie about it at 3pm.",
    "Apple, Google and the European Union argued for $5 billion over 30% of the Chinese market in 2019.",
    "hey mel! good to see you! how have you been? i'm off to rome with john next week",
]


def entities(doc) -> tuple[list[tuple[int, int, str]], list[tuple[str, str]]]:
    return [(e.start, e.end, e.label_) for e in doc.ents], [(t.ent_iob_, t.ent_type_) for t in doc]


@pytest.fixture(scope="module")
def components():
    nlp = shared_pipeline()
    greedy = nlp.get_pipe("ner")
    assert isinstance(greedy, GreedyEntityRecognizer)
    return nlp, greedy, greedy.spacy_component


def test_the_pipeline_runs_the_greedy_recognizer_as_ner_and_keeps_spacys_disabled(components) -> None:
    nlp, _, spacy_ner = components
    assert nlp.pipe_names == ["ner"]
    assert SPACY_NER in nlp.disabled
    assert nlp.get_pipe(SPACY_NER) is spacy_ner


@pytest.mark.parametrize("text", TEXTS)
def test_the_greedy_recognizer_sets_the_entities_and_tags_spacys_component_sets(components, text: str) -> None:
    nlp, greedy, spacy_ner = components
    expected = entities(spacy_ner(nlp.make_doc(text)))
    assert entities(greedy(nlp.make_doc(text))) == expected
    assert entities(nlp(text)) == expected


def test_the_texts_hold_multi_word_entities_and_entities_at_both_ends(components) -> None:
    nlp, _, _ = components
    found = [entities(nlp(text))[0] for text in TEXTS]
    assert any(end - start >= 3 for ents in found for start, end, _ in ents)
    assert found[0] == [(0, 2, "PERSON"), (4, 5, "GPE")]
    assert found[3][-1][1] == 3 and found[4] == [(0, 1, "GPE")]


def test_a_doc_with_preset_entities_or_sentence_starts_gets_spacys_own_answer(components) -> None:
    nlp, greedy, spacy_ner = components
    from spacy.tokens import Span

    text = "Tom Hanks and Rita Wilson live in Los Angeles. Their son Chet sings."
    preset, reference = nlp.make_doc(text), nlp.make_doc(text)
    for doc in (preset, reference):
        doc.set_ents([Span(doc, 3, 5, label="ORG")], default="unmodified")
    assert entities(greedy(preset)) == entities(spacy_ner(reference))
    assert (3, 5, "ORG") in entities(preset)[0]
    split, reference = nlp.make_doc(text), nlp.make_doc(text)
    for doc in (split, reference):
        doc[1].is_sent_start = True
    assert entities(greedy(split)) == entities(spacy_ner(reference))


def test_an_empty_text_has_no_entities(components) -> None:
    nlp, greedy, _ = components
    assert list(greedy(nlp.make_doc("")).ents) == []


def test_pipe_gives_each_doc_its_own_entities(components) -> None:
    nlp, _, spacy_ner = components
    expected = [entities(spacy_ner(nlp.make_doc(text))) for text in TEXTS]
    assert [entities(doc) for doc in nlp.pipe(TEXTS, batch_size=4)] == expected


def test_another_architecture_is_refused_and_left_to_spacy() -> None:
    import spacy

    nlp = spacy.blank("en")
    ner = nlp.add_pipe("ner")
    ner.add_label("PERSON")
    nlp.initialize()
    with pytest.raises(UnsupportedModel):
        GreedyEntityRecognizer(ner)
    assert use_greedy_recognizer(nlp) is False
    assert nlp.pipe_names == ["ner"] and nlp.get_pipe("ner") is ner


def test_the_compact_table_finds_rows_of_a_key_array_as_get_does() -> None:
    table = CompactKeyTable({2**64 - 1: 3, 7: 0, 123456789012345678: 2, 42: 1})
    keys = np.array([7, 8, 0, 2**64 - 1, 42, 2**64 - 2, 123456789012345678], dtype=np.uint64)
    assert table.rows(keys).tolist() == [table.get(int(key), -1) for key in keys]
    assert table.rows(keys).tolist() == [0, -1, -1, 3, 1, -1, 2]


_MIX = [
    "Ana", "Lopez", "moved", "to", "Lisbon", "with", "her", "dog", "Rex", "on", "3", "May", "2024", ".", "Call",
    "+1", "555", "0100", "or", "mail", "ana@example.com", ";", "Dr.", "Smith", ",", "Acme", "Corp.", "in", "New",
    "York", "City", "\n", "\t", "🙂", "Zoë", "O'Brien-Smith", "São", "Paulo", "42nd", "Street", "the", "of", "and",
]


def test_random_mixes_of_names_places_numbers_and_whitespace_get_spacys_entities(components) -> None:
    nlp, greedy, spacy_ner = components
    rng = np.random.default_rng(21)
    texts = [" ".join(rng.choice(_MIX, size=int(rng.integers(1, 40)))) for _ in range(200)]
    found = [entities(greedy(nlp.make_doc(text))) for text in texts]
    assert found == [entities(spacy_ner(nlp.make_doc(text))) for text in texts]
    assert sum(len(ents) for ents, _ in found) > 200  # the mixes do hold entities


def test_the_dense_graph_is_kept_in_the_cache_folder_and_read_back_without_building(
    components, tmp_path, monkeypatch
) -> None:
    from agentmem.adapters.local import entity_recognizer

    nlp, _, spacy_ner = components
    monkeypatch.setenv("AGENTMEM_CACHE_DIR", str(tmp_path))
    built = GreedyEntityRecognizer(spacy_ner)
    (graph,) = tmp_path.glob("spacy-ner-dense-*.onnx")

    def no_build(*args, **kwargs):
        raise AssertionError("the graph was built again although its file is in the cache folder")

    monkeypatch.setattr(entity_recognizer, "_dense_graph", no_build)
    read = GreedyEntityRecognizer(spacy_ner)
    assert list(tmp_path.glob("spacy-ner-dense-*.onnx")) == [graph]
    for text in TEXTS:
        assert entities(read(nlp.make_doc(text))) == entities(built(nlp.make_doc(text)))
