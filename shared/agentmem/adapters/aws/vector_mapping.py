"""The OpenSearch Serverless index that holds agentmem's memory vectors.

One definition, read by the CDK app (which creates the index at deploy time)
and by the AWS vector adapter (which writes and queries it), so the two cannot
disagree about a field name or the distance function.

The index holds vectors, ids and filter fields, and one `text` field: the
keyword side of turn recall (`opensearch_lexical`) stores each turn's
already-masked text there, analysed by `agentmem_english`, so a `match`
query scores it with OpenSearch's BM25. That analyser does what the local
BM25 index's does (`adapters/local/bm25_index.py`): typographic apostrophes
read as "'", the standard tokenizer (a personal-data token stays one term:
its underscores join), lower case, the same English stop words
(`domain/stop_words.py`), then the Snowball English (Porter2) stemmer, the
algorithm the local index runs through `snowballstemmer`. What still differs
is the tokenizer's detail: Lucene's Unicode word rules keep "3.5" and
"snake_case" whole where the local one splits them, and strip a possessive
in the stemmer (Porter2's step 0) where the local one cuts any clitic. Those keyword documents carry no
vector, and their `kind` is the turn kind plus `TEXT_KIND_SUFFIX`, so the
vector adapter never sees them. Other memory text stays in the tenant's
DynamoDB table; a search returns ids, and the caller reads the text there.
"""

from __future__ import annotations

from typing import Any

from agentmem.domain.stop_words import APOSTROPHES, ENGLISH_STOP_WORDS

VECTOR_FIELD = "vector"
# Filter fields: exact-match `keyword`s, so a query can be confined to one
# tenant, agent or user with a `term` filter before the k-NN step.
# `tags` holds a list (a keyword field takes an array; a `term` matches any element): an item vector's
# namespace-prefix digests, so a scoped query filters on them inside the k-NN walk.
KEYWORD_FIELDS: tuple[str, ...] = ("tenant", "agentId", "userId", "kind", "memoryId", "tags")
CREATED_AT_FIELD = "createdAt"
# Full text, for the keyword side: analysed like the local BM25 index's text, BM25-scored.
TEXT_FIELD = "text"
TEXT_ANALYZER = "agentmem_english"
# Appended to a kind for its keyword documents ("turn" -> "turn.text").
TEXT_KIND_SUFFIX = ".text"

# Embedding vectors are L2-normalised before they are written, so the inner
# product equals the cosine similarity; faiss supports `innerproduct` on every
# OpenSearch Serverless version (its `cosinesimil` support is recent).
SPACE_TYPE = "innerproduct"
ENGINE = "faiss"
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
EF_SEARCH = 100
# faiss' limit for a knn_vector field.
MAX_DIMENSION = 16_000


def text_analysis() -> dict[str, Any]:
    """The index's `analysis` settings: the `TEXT_ANALYZER` of the `text` field (see the module docstring)."""
    return {
        "char_filter": {
            "agentmem_apostrophes": {"type": "mapping", "mappings": [f"{mark}=>'" for mark in APOSTROPHES]},
        },
        "filter": {
            "agentmem_stop": {"type": "stop", "stopwords": sorted(ENGLISH_STOP_WORDS)},
            "agentmem_stemmer": {"type": "snowball", "language": "English"},
        },
        "analyzer": {
            TEXT_ANALYZER: {
                "type": "custom",
                "char_filter": ["agentmem_apostrophes"],
                "tokenizer": "standard",
                "filter": ["lowercase", "agentmem_stop", "agentmem_stemmer"],
            },
        },
    }


def index_body(dimension: int) -> dict[str, Any]:
    """The create-index request body (settings and mappings) for `dimension`-long vectors.

    `createdAt` is a `date` holding epoch milliseconds: the default date format
    (`strict_date_optional_time||epoch_millis`) parses a number as epoch
    milliseconds, so no explicit `format` is needed.
    """
    if isinstance(dimension, bool) or not isinstance(dimension, int):
        raise TypeError(f"dimension must be an int, not {type(dimension).__name__}")
    if not 1 <= dimension <= MAX_DIMENSION:
        raise ValueError(f"dimension must be between 1 and {MAX_DIMENSION}, got {dimension}")
    properties: dict[str, Any] = {
        VECTOR_FIELD: {
            "type": "knn_vector",
            "dimension": dimension,
            "method": {
                "name": "hnsw",
                "engine": ENGINE,
                "space_type": SPACE_TYPE,
                "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
            },
        },
        CREATED_AT_FIELD: {"type": "date"},
        TEXT_FIELD: {"type": "text", "analyzer": TEXT_ANALYZER},
    }
    for name in KEYWORD_FIELDS:
        properties[name] = {"type": "keyword"}
    return {
        "settings": {"index": {"knn": True, "knn.algo_param.ef_search": EF_SEARCH}, "analysis": text_analysis()},
        # `dynamic: strict` rejects a document carrying any other field, so
        # memory text can only enter through the one `text` field.
        "mappings": {"dynamic": "strict", "properties": properties},
    }


# OpenSearch's k-NN score for this mapping's space, as documented: "Spaces", the `innerproduct` row,
# NMSLIB and Faiss (https://docs.opensearch.org/latest/mappings/supported-field-types/knn-spaces/;
# source: opensearch-project/documentation-website, _mappings/supported-field-types/knn-spaces.md):
# the distance is d = -(x . y), and the score 1 / (1 + d) when d >= 0, -d + 1 when d < 0.
# Written once: the adapter inverts it (cosine_from_score) and the OpenSearch server double in
# tests/contract scores its matches with it (knn_score), so neither carries a copy of its own.
def knn_score(inner_product: float) -> float:
    """The `_score` OpenSearch (faiss, `innerproduct`) gives a match whose inner product with the query is this."""
    if SPACE_TYPE != "innerproduct" or ENGINE != "faiss":  # pragma: no cover - guards a change of the mapping
        raise RuntimeError(f"no documented score for {ENGINE} {SPACE_TYPE!r} here")
    distance = -inner_product
    return 1.0 / (1.0 + distance) if distance >= 0 else -distance + 1.0


def cosine_from_score(score: float) -> float:
    """The cosine of a match from its `_score` (knn_score inverted), clamped to [-1, 1].

    Every vector the adapter writes or queries with is unit length, so the inner product is the cosine.
    """
    if SPACE_TYPE != "innerproduct" or ENGINE != "faiss":  # pragma: no cover - guards a change of the mapping
        raise RuntimeError(f"no cosine conversion for {ENGINE} {SPACE_TYPE!r}")
    if score <= 0:
        raise ValueError(f"an innerproduct score is always > 0, got {score}")
    inner_product = score - 1.0 if score > 1.0 else 1.0 - 1.0 / score
    return max(-1.0, min(1.0, inner_product))
