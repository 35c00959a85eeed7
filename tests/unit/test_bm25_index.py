"""LocalBm25Index: the analyser, Okapi BM25 ranking, per-owner statistics, persistence and deletes."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentmem.adapters.local.bm25_index import LocalBm25Index, analyse, stem


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LocalBm25Index]:
    bm25 = LocalBm25Index(tmp_path / "lexical.sqlite3")
    yield bm25
    bm25.close()


def ids(hits: list) -> list[str]:
    return [hit.item_id for hit in hits]


@pytest.mark.parametrize(
    ("word", "expected"),
    [("puppies", "puppi"), ("puppy", "puppi"), ("horses", "hors"), ("adoption", "adopt"), ("adopting", "adopt"),
     ("painted", "paint"), ("paintings", "paint"), ("running", "run"), ("glass", "glass"), ("news", "news")],
)
def test_words_are_stemmed_by_snowball_english(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_stemming_from_many_threads_at_once_gives_each_word_its_own_stem() -> None:
    from concurrent.futures import ThreadPoolExecutor

    import snowballstemmer

    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [f"{a}{b}{c}{suffix}" for a in letters[:6] for b in letters for c in letters[:4]
             for suffix in ("ing", "ations", "fulness")]
    with ThreadPoolExecutor(8) as pool:
        stems = list(pool.map(stem, words))
    oracle = snowballstemmer.stemmer("english")
    assert stems == [oracle.stemWord(word) for word in words]
    assert sum(found != word for found, word in zip(stems, words, strict=True)) > len(words) / 2  # really stemmed


def test_analyse_drops_stop_words_and_clitics_and_lowercases() -> None:
    assert analyse("I'm sure Caroline's PUPPIES don't like the rain.") == ["sure", "carolin", "puppi", "like", "rain"]
    assert analyse("It’s Mel’s") == ["mel"]  # typographic apostrophes too


def test_a_personal_data_token_is_one_term_so_two_masked_names_of_a_user_do_not_match() -> None:
    assert analyse("{{PII_PERSON_3f9a1c2b_1}}'s painting, 2 cats") == ["pii_person_3f9a1c2b_1", "paint", "2", "cat"]


def test_a_masked_name_finds_the_turns_with_that_name_and_only_those(index: LocalBm25Index) -> None:
    index.upsert("t", "turn", "u", [("a", "{{PII_PERSON_3f9a1c2b_1}}: I painted a lake"),
                                   ("b", "{{PII_PERSON_3f9a1c2b_2}}: I ran 1 mile")])
    assert [hit.item_id for hit in index.search("t", "turn", "u", "What did {{PII_PERSON_3f9a1c2b_1}} do?", 5)] == ["a"]


def test_a_rarer_term_outweighs_a_common_one(index: LocalBm25Index) -> None:
    index.upsert("t", "turn", "u", [("1", "cake party"), ("2", "cake picnic"), ("3", "cake violin")])
    hits = index.search("t", "turn", "u", "cake violin", 3)
    assert ids(hits)[0] == "3"
    assert len(hits) == 3


def test_scores_are_okapi_bm25_with_lucene_idf(index: LocalBm25Index) -> None:
    index.upsert("t", "turn", "u", [("1", "apple apple pear"), ("2", "pear plum")])
    [hit] = index.search("t", "turn", "u", "apple", 5)
    idf = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    k1, b, length, average = 1.2, 0.75, 3, 2.5
    expected = idf * 2 * (k1 + 1) / (2 + k1 * (1 - b + b * length / average))
    assert hit.item_id == "1"
    assert hit.score == pytest.approx(expected)


def test_only_documents_sharing_a_term_are_returned(index: LocalBm25Index) -> None:
    index.upsert("t", "turn", "u", [("1", "hiking in the mountains"), ("2", "a quiet evening")])
    assert ids(index.search("t", "turn", "u", "mountain hikes?", 10)) == ["1"]
    assert index.search("t", "turn", "u", "the and of", 10) == []


def test_a_search_sees_only_its_own_owner_and_tenant(index: LocalBm25Index) -> None:
    index.upsert("t", "turn", "alice", [("a1", "my cat is called Miso")])
    index.upsert("t", "turn", "bob", [("b1", "my cat is called Tofu")])
    index.upsert("other", "turn", "alice", [("x1", "a cat")])
    assert ids(index.search("t", "turn", "alice", "cat", 10)) == ["a1"]
    assert ids(index.search("t", "fact", "alice", "cat", 10)) == []


def test_another_owners_documents_do_not_change_the_scores(tmp_path: Path) -> None:
    alone = LocalBm25Index(tmp_path / "alone.sqlite3")
    crowded = LocalBm25Index(tmp_path / "crowded.sqlite3")
    documents = [("1", "tennis on sunday"), ("2", "tennis lessons"), ("3", "a new racket")]
    for bm25 in (alone, crowded):
        bm25.upsert("t", "turn", "u", documents)
    crowded.upsert("t", "turn", "someone-else", [(str(i), "tennis every day") for i in range(50)])
    assert alone.search("t", "turn", "u", "tennis racket", 3) == crowded.search("t", "turn", "u", "tennis racket", 3)
    alone.close()
    crowded.close()


def test_upsert_replaces_a_document(index: LocalBm25Index) -> None:
    index.upsert("t", "turn", "u", [("1", "old words"), ("2", "other text")])
    index.upsert("t", "turn", "u", [("1", "new words")])
    assert index.search("t", "turn", "u", "old", 5) == []
    assert ids(index.search("t", "turn", "u", "new", 5)) == ["1"]


def test_delete_and_delete_owner_remove_documents(index: LocalBm25Index) -> None:
    index.upsert("t", "turn", "u", [("1", "red apple"), ("2", "green apple")])
    index.delete("t", "turn", "u", ["1"])
    assert ids(index.search("t", "turn", "u", "apple", 5)) == ["2"]
    index.delete_owner("t", "turn", "u")
    assert index.search("t", "turn", "u", "apple", 5) == []


def test_documents_survive_reopening_the_index(tmp_path: Path) -> None:
    path = tmp_path / "lexical.sqlite3"
    first = LocalBm25Index(path)
    first.upsert("t", "turn", "u", [("1", "sailing in Sweden"), ("2", "skiing in Norway"), ("3", "gone")])
    first.delete("t", "turn", "u", ["3"])
    expected = first.search("t", "turn", "u", "sweden sailing", 5)
    first.close()
    reopened = LocalBm25Index(path)
    assert reopened.search("t", "turn", "u", "sweden sailing", 5) == expected
    assert reopened.search("t", "turn", "u", "gone", 5) == []
    reopened.close()


def test_equal_scores_keep_insertion_order_and_k_limits(index: LocalBm25Index) -> None:
    index.upsert("t", "turn", "u", [(str(i), "same words here") for i in range(5)])
    assert ids(index.search("t", "turn", "u", "words", 3)) == ["0", "1", "2"]


def test_bad_parameters_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        LocalBm25Index(tmp_path / "x.sqlite3", b=1.5)
