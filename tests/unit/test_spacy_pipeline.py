"""The shared spaCy pipeline: NER alone, its vectors' key table compact, its string table not loaded."""

from __future__ import annotations

import numpy as np
import pytest
from agentmem.adapters.local.spacy_pipeline import CompactKeyTable, shared_pipeline

TABLE = {2**64 - 1: 3, 7: 0, 123456789012345678: 2, 42: 1}


def test_the_compact_table_answers_every_lookup_a_dict_answers() -> None:
    table = CompactKeyTable(TABLE)
    assert len(table) == len(TABLE)
    assert dict(table.items()) == TABLE
    assert sorted(table) == sorted(TABLE)
    for key, row in TABLE.items():
        assert table[key] == row
        assert table.get(key, -1) == row
        assert key in table
        assert table.get(np.uint64(key), -1) == row


@pytest.mark.parametrize("missing", [0, 8, 2**64 - 2, -1, 2**64, "7", None])
def test_the_compact_table_misses_what_a_dict_misses(missing: object) -> None:
    table = CompactKeyTable(TABLE)
    assert missing not in table
    assert table.get(missing, -1) == -1  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        table[missing]  # type: ignore[index]


def test_the_pipeline_runs_ner_alone_with_the_compact_key_table_and_finds_vectors() -> None:
    nlp = shared_pipeline()
    assert nlp.pipe_names == ["ner"]
    vectors = nlp.vocab.vectors
    assert isinstance(vectors.key2row, CompactKeyTable)
    assert len(vectors.key2row) > 600_000  # every key of en_core_web_md, none dropped
    doc = nlp("Ana Lopez moved to Lisbon with her dog.")
    assert doc[0].has_vector and doc[4].has_vector
    assert [(ent.text, ent.label_) for ent in doc.ents] == [("Ana Lopez", "PERSON"), ("Lisbon", "GPE")]


def test_the_vocabulary_string_table_is_not_loaded_but_met_strings_resolve() -> None:
    nlp = shared_pipeline()
    assert len(nlp.vocab.strings) < 100_000  # en_core_web_md ships 709,118
    doc = nlp("Zebulon Quartermaine flew to Reykjavik.")
    assert doc[0].text == "Zebulon"
    assert nlp.vocab.strings[nlp.vocab.strings["Reykjavik"]] == "Reykjavik"
