"""What OpenSearchLexicalIndex sends, and the double's BM25 checked against Lucene's formula by hand."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from agentmem.adapters.aws.opensearch_lexical import OpenSearchLexicalIndex
from agentmem.domain.errors import BackendUnavailable

from tests.contract.conftest import COLLECTION_ENDPOINT, INDEX_NAME
from tests.contract.fake_opensearch import FakeOpenSearchServer

# OpenSearch Serverless is tests/contract/fake_opensearch.py, a double written here.
pytestmark = pytest.mark.double


@pytest.fixture
def lexical(aws_credentials: None, opensearch_server: FakeOpenSearchServer) -> OpenSearchLexicalIndex:
    index = OpenSearchLexicalIndex(COLLECTION_ENDPOINT, INDEX_NAME)
    opensearch_server.mount_on(index._index.client)
    return index


def test_search_is_a_match_on_the_text_field_filtered_to_tenant_kind_and_owner(
    lexical: OpenSearchLexicalIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    lexical.search("acme", "turn", "u-1", "Dolomites trip", 5)
    body: dict[str, Any] = json.loads(opensearch_server.requests[-1].body)
    assert body["query"]["bool"]["must"] == [{"match": {"text": {"query": "Dolomites trip"}}}]
    assert body["query"]["bool"]["filter"] == [
        {"term": {"tenant": "acme"}}, {"term": {"kind": "turn.text"}}, {"term": {"userId": "u-1"}},
    ]
    assert opensearch_server.requests[-1].headers["Authorization"].startswith("AWS4-HMAC-SHA256")


def test_documents_carry_text_and_no_vector_or_custom_id(
    lexical: OpenSearchLexicalIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    lexical.upsert("acme", "turn", "u-1", [("t1", "hello {{PII_EMAIL_1}}")])
    bulk = opensearch_server.requests[0].json_lines()
    assert bulk[0] == {"index": {"_index": INDEX_NAME}}
    assert "vector" not in bulk[1] and bulk[1]["text"] == "hello {{PII_EMAIL_1}}" and bulk[1]["memoryId"] == "t1"


def test_the_doubles_score_is_lucenes_bm25(lexical: OpenSearchLexicalIndex) -> None:
    lexical.upsert("acme", "turn", "u-1", [("a", "apple banana"), ("b", "apple"), ("c", "cherry")])
    # N 3 documents, average length 4/3; "banana" in 1 of them; doc a has length 2 and tf 1.
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    expected = idf * 1 / (1 + 1.2 * (1 - 0.75 + 0.75 * 2 / (4 / 3)))
    ((item_id, score),) = lexical.search("acme", "turn", "u-1", "banana", 10)
    assert item_id == "a" and score == pytest.approx(expected)


def test_a_refused_write_raises_backend_unavailable(
    lexical: OpenSearchLexicalIndex, opensearch_server: FakeOpenSearchServer
) -> None:
    opensearch_server.failures.append(403)  # not retried, unlike 502-504
    with pytest.raises(BackendUnavailable):
        lexical.upsert("acme", "turn", "u-1", [("t1", "anything")])


@pytest.mark.parametrize(
    "text",
    [
        "I'm sure Caroline's PUPPIES don't like the rain.",
        "It’s Mel’s adoption agency; we were adopting in the Dolomites",
        "{{PII_PERSON_3f9a1c2b_1}}'s paintings of {{PII_LOCATION_3f9a1c2b_2}}, 2 cats",
        "(1:56 pm on 8 May, 2023) Melanie: Yes! I made a lopsided bowl at pottery class",
    ],
)
def test_the_index_analyses_text_as_the_local_bm25_index_does(
    opensearch_server: FakeOpenSearchServer, text: str
) -> None:
    from agentmem.adapters.local.bm25_index import analyse

    # The double builds its analyzer from the index body CloudFormation creates (vector_mapping.index_body).
    assert opensearch_server.indexes[INDEX_NAME].analyse("text", text) == analyse(text)


def test_a_stemmed_word_finds_its_other_forms_and_stop_words_find_nothing(lexical: OpenSearchLexicalIndex) -> None:
    lexical.upsert("acme", "turn", "u-1", [("a", "We adopted a puppy"), ("b", "The pottery class was fun")])
    assert [item for item, _ in lexical.search("acme", "turn", "u-1", "adoption of puppies", 10)] == ["a"]
    assert lexical.search("acme", "turn", "u-1", "was the", 10) == []
