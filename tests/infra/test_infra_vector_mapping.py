"""The vector index definition shared by the CDK app and the OpenSearch adapter."""

from __future__ import annotations

import numpy as np
import pytest
from agentmem.adapters.aws.vector_mapping import (
    KEYWORD_FIELDS,
    VECTOR_FIELD,
    cosine_from_score,
    index_body,
    knn_score,
)


def test_index_body_has_the_vector_and_the_filter_fields_only() -> None:
    body = index_body(1024)
    properties = body["mappings"]["properties"]

    assert set(properties) == {VECTOR_FIELD, "createdAt", "text", *KEYWORD_FIELDS}
    assert properties["text"] == {"type": "text", "analyzer": "agentmem_english"}
    analyzer = body["settings"]["analysis"]["analyzer"]["agentmem_english"]
    assert analyzer["tokenizer"] == "standard"
    assert analyzer["filter"] == ["lowercase", "agentmem_stop", "agentmem_stemmer"]
    assert set(KEYWORD_FIELDS) == {"tenant", "agentId", "userId", "kind", "memoryId", "tags"}
    assert all(properties[name] == {"type": "keyword"} for name in KEYWORD_FIELDS)
    assert properties["createdAt"] == {"type": "date"}
    assert body["mappings"]["dynamic"] == "strict"
    assert body["settings"]["index"]["knn"] is True


@pytest.mark.parametrize("dimension", [256, 512, 1024, 1536])
def test_the_vector_field_is_an_hnsw_faiss_inner_product_of_the_given_dimension(dimension: int) -> None:
    vector = index_body(dimension)["mappings"]["properties"][VECTOR_FIELD]
    assert vector["type"] == "knn_vector"
    assert vector["dimension"] == dimension
    assert (vector["method"]["name"], vector["method"]["engine"]) == ("hnsw", "faiss")
    assert vector["method"]["space_type"] == "innerproduct"


def test_only_the_keyword_side_text_field_can_hold_memory_text() -> None:
    properties = index_body(1024)["mappings"]["properties"]
    text_fields = {name for name, p in properties.items() if p["type"] in {"text", "match_only_text", "wildcard"}}
    assert text_fields == {"text"}


@pytest.mark.parametrize("dimension", [0, -1, 16_001])
def test_impossible_dimensions_are_refused(dimension: int) -> None:
    with pytest.raises(ValueError, match="dimension"):
        index_body(dimension)


def test_a_non_integer_dimension_is_refused() -> None:
    with pytest.raises(TypeError):
        index_body(True)


# The documented score (OpenSearch "Spaces", `innerproduct`, Faiss: d = -(x . y); 1 / (1 + d) when
# d >= 0, -d + 1 when d < 0), worked by hand for these inner products: the numbers, not a second copy.
DOCUMENTED_SCORES = [(1.0, 2.0), (0.5, 1.5), (0.2, 1.2), (0.0, 1.0), (-0.25, 0.8), (-0.5, 2 / 3), (-1.0, 0.5)]


@pytest.mark.parametrize(("inner_product", "score"), DOCUMENTED_SCORES)
def test_knn_score_is_the_documented_faiss_innerproduct_score(inner_product: float, score: float) -> None:
    assert knn_score(inner_product) == pytest.approx(score, abs=1e-12)


@pytest.mark.parametrize(("inner_product", "score"), DOCUMENTED_SCORES)
def test_cosine_from_score_inverts_the_documented_score(inner_product: float, score: float) -> None:
    assert cosine_from_score(score) == pytest.approx(inner_product, abs=1e-12)


def test_cosine_from_score_recovers_the_cosine_of_unit_vectors() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        a, b = rng.normal(size=(2, 64))
        a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
        cosine = float(a @ b)
        assert cosine_from_score(knn_score(cosine)) == pytest.approx(cosine, abs=1e-12)


def test_a_score_of_zero_or_less_is_not_an_innerproduct_score() -> None:
    with pytest.raises(ValueError):
        cosine_from_score(0.0)
