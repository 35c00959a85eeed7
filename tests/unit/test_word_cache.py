"""Word lists derived once and read back from the cache folder; a change to what derived them derives again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentmem.adapters.local import word_cache
from agentmem.adapters.local.name_gazetteer import load_gazetteer, shared_gazetteer
from agentmem.adapters.local.street_words import derive_street_words, street_words


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTMEM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_derived_once_then_read_from_the_file(cache_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "deriving.py"
    source.write_text("RULE = 1\n")
    calls: list[int] = []

    def derive() -> dict[str, list[str]]:
        calls.append(1)
        return {"words": ["Ciarán", "lemon"]}

    first = word_cache.cached_word_lists("test-words", [source], ("faker",), derive)
    second = word_cache.cached_word_lists("test-words", [source], ("faker",), derive)
    assert first == second == {"words": ["Ciarán", "lemon"]}
    assert len(calls) == 1
    (written,) = cache_dir.glob("test-words-*.json")
    assert json.loads(written.read_text(encoding="utf-8")) == {"words": ["Ciarán", "lemon"]}


def test_a_changed_source_derives_again(cache_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "deriving.py"
    source.write_text("RULE = 1\n")
    before = word_cache.cache_path("test-words", [source], ("faker",))
    source.write_text("RULE = 2\n")
    assert word_cache.cache_path("test-words", [source], ("faker",)) != before
    assert word_cache.cache_path("test-words", [source], ("faker", "spacy")) != word_cache.cache_path(
        "test-words", [source], ("faker",)
    )


def test_a_damaged_file_is_derived_again(cache_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "deriving.py"
    source.write_text("RULE = 1\n")
    path = word_cache.cache_path("test-words", [source], ())
    path.parent.mkdir(parents=True)
    path.write_text('{"words": [1, 2]', encoding="utf-8")
    assert word_cache.cached_word_lists("test-words", [source], (), lambda: {"words": ["x"]}) == {"words": ["x"]}
    assert json.loads(path.read_text(encoding="utf-8")) == {"words": ["x"]}


def test_an_unwritable_folder_only_costs_the_derivation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("AGENTMEM_CACHE_DIR", str(blocker / "cache"))
    source = tmp_path / "deriving.py"
    source.write_text("RULE = 1\n")
    assert word_cache.cached_word_lists("test-words", [source], (), lambda: {"words": ["x"]}) == {"words": ["x"]}


def test_the_cached_gazetteer_and_street_words_equal_what_faker_derives(cache_dir: Path) -> None:
    from agentmem.adapters.local import name_gazetteer

    derived = load_gazetteer()
    cached = name_gazetteer._cached_gazetteer()  # writes the file
    again = name_gazetteer._cached_gazetteer()  # reads it
    assert derived == cached == again
    assert list(cache_dir.glob("name-gazetteer-*.json"))
    street_words.cache_clear()
    try:
        assert street_words() == derive_street_words()
        street_words.cache_clear()
        assert street_words() == derive_street_words()  # from the file
        assert list(cache_dir.glob("street-words-*.json"))
    finally:
        street_words.cache_clear()
    assert shared_gazetteer().is_first("ciarán")
