"""The Embedder contract: MiniLMEmbedder and BedrockEmbedder agree on shape, norm, determinism and order.

Bedrock runs twice: against a Titan server double (real botocore requests and
responses, vectors that are not semantic) and under moto, whose bedrock-runtime
answers every InvokeModel with `{}`; each skips, with its reason, what its
backend cannot honour (see EmbedderUnderTest in conftest.py).
"""

from __future__ import annotations

import numpy as np

from tests.contract.conftest import EmbedderUnderTest

TEXTS = [
    "Audit this outdoor gear article for brand voice.",
    "Summarise the quarterly tax filing obligations for a limited company.",
    "Translate the release notes into German.",
]


def test_an_empty_batch_is_an_empty_matrix_of_the_models_width(embedder_under_test: EmbedderUnderTest) -> None:
    embedder = embedder_under_test.embedder
    vectors = embedder.embed([])
    assert vectors.shape == (0, embedder.dimension)
    assert vectors.dtype == np.float32
    assert embedder.model_id


def test_one_float32_row_per_text_of_the_models_width(embedder_under_test: EmbedderUnderTest) -> None:
    embedder_under_test.require_vectors()
    embedder = embedder_under_test.embedder
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), embedder.dimension)
    assert vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))


def test_rows_are_unit_length(embedder_under_test: EmbedderUnderTest) -> None:
    embedder_under_test.require_vectors()
    norms = np.linalg.norm(embedder_under_test.embedder.embed(TEXTS), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


def test_the_same_text_always_gives_the_same_vector(embedder_under_test: EmbedderUnderTest) -> None:
    embedder_under_test.require_vectors()
    embedder = embedder_under_test.embedder
    first = embedder.embed([TEXTS[0], TEXTS[1], TEXTS[0]])
    again = embedder.embed([TEXTS[0]])
    np.testing.assert_allclose(first[0], first[2], atol=1e-6)
    np.testing.assert_allclose(first[0], again[0], atol=1e-5)
    assert not np.allclose(first[0], first[1], atol=1e-3)


def test_a_batch_gives_the_rows_of_its_texts_in_order(embedder_under_test: EmbedderUnderTest) -> None:
    embedder_under_test.require_vectors()
    embedder = embedder_under_test.embedder
    batch = embedder.embed(TEXTS)
    singles = np.vstack([embedder.embed([text]) for text in reversed(TEXTS)])[::-1]
    np.testing.assert_allclose(batch, singles, atol=1e-5)


def test_similar_texts_are_closer_than_unrelated_ones(embedder_under_test: EmbedderUnderTest) -> None:
    embedder_under_test.require_semantics()
    anchor, similar, unrelated = embedder_under_test.embedder.embed(
        [
            "Audit this outdoor gear article for brand voice: trail magic moments make every hike special.",
            "Check this hiking article against our brand voice: trail magic keeps every hike special.",
            "Summarise the quarterly tax filing obligations for a limited company in Germany.",
        ]
    )
    assert float(anchor @ similar) > float(anchor @ unrelated) + 0.2
