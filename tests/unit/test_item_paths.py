"""LangGraph's `index` field paths: which texts of an item value are embedded."""

from __future__ import annotations

import pytest
from agentmem.domain.errors import InvalidInput
from agentmem.domain.item_paths import parse_path, texts_at_path

VALUE = {
    "title": "Trip",
    "meta": {"author": "Ana", "tags": ["sea", "sun"], "stars": 4, "draft": False},
    "steps": [{"say": "pack"}, {"say": "fly", "note": {"gate": "B2"}}, {"other": 1}],
}


def test_a_path_is_split_into_fields_list_elements_and_field_sets():
    assert parse_path("a.b[*].c") == ["a", "b", "[*]", "c"]
    assert parse_path("a[-1]{x,y.z}") == ["a", "[-1]", "{x,y.z}"]


@pytest.mark.parametrize(
    ("path", "texts"),
    [
        ("title", ["Trip"]),
        ("meta.author", ["Ana"]),
        ("meta.stars", ["4"]),
        ("meta.draft", ["False"]),
        ("meta.tags", ['["sea", "sun"]']),
        ("meta.tags[0]", ["sea"]),
        ("meta.tags[-1]", ["sun"]),
        ("meta.tags[*]", ["sea", "sun"]),
        ("steps[*].say", ["pack", "fly"]),
        ("steps[1].note.gate", ["B2"]),
        ("meta.{author,tags[1]}", ["Ana", "sun"]),
        ("meta.*", ["Ana", '["sea", "sun"]', "4", "False"]),
        ("missing.field", []),
        ("title.deeper", []),
        ("meta.tags[7]", []),
    ],
)
def test_a_path_names_the_texts_langgraph_documents(path, texts):
    assert texts_at_path(VALUE, path) == texts


def test_the_whole_value_path_is_its_json_with_sorted_keys():
    assert texts_at_path({"b": 1, "a": "é"}, "$") == ['{"a": "é", "b": 1}']


def test_a_malformed_path_is_invalid_input():
    with pytest.raises(InvalidInput):
        texts_at_path(VALUE, "steps[*")
    with pytest.raises(InvalidInput):
        texts_at_path(VALUE, "steps[first]")
