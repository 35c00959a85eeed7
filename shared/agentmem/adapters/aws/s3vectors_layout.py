"""How agentmem's vectors are laid out in Amazon S3 Vectors: one definition for the CDK app and the adapter.

A tenant in `s3vectors` mode owns one vector bucket (SSE-KMS with the tenant's key) holding one index
per kind of vector (`<tenant>-lesson`, `<tenant>-fact`, `<tenant>-turn`, `<tenant>-item`), so IAM can
confine a tenant's roles to its own index ARNs and a query never scans another kind.

Each vector's key is `<owner>/<item>` (both percent-encoded, so the key is unambiguous): putting the
same key again replaces the vector in place. Its metadata:

- filterable: `owner` (the agent of a lesson, the user of a fact or turn), `createdAt` (epoch
  milliseconds) and `tags` (a list, present when the vector has tags; `$eq` matches any element),
  the things a `VectorQuery` filters on; and `ref`, a 16-character digest of the vector's key, which
  the adapter excludes (`$nin`) to page a query past the service's top-k;
- non-filterable (declared at index creation): `itemId`, returned with every hit and never filtered on.

Limits of the service (https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-vectors-limitations.html,
read 2026-12-01) the adapter lives with: top-k at most 100 per QueryVectors, 500 vectors per PutVectors
and DeleteVectors, 1,000 per ListVectors page, dimension 1-4,096, 2 KB of filterable metadata per
vector, 10 non-filterable keys per index, at most 100 filter constraints on an ENHANCED index.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote, unquote

KINDS: Final = ("lesson", "fact", "turn", "item")
DATA_TYPE: Final = "float32"
# S3 Vectors computes cosine distance itself: `distance = 1 - cosine similarity`.
DISTANCE_METRIC: Final = "cosine"

OWNER_KEY: Final = "owner"
CREATED_AT_KEY: Final = "createdAt"
ITEM_KEY: Final = "itemId"
TAGS_KEY: Final = "tags"
REF_KEY: Final = "ref"
NON_FILTERABLE_KEYS: Final = (ITEM_KEY,)

MAX_TOP_K: Final = 100
MAX_PUT: Final = 500
MAX_DELETE: Final = 500
LIST_PAGE: Final = 1000
MAX_DIMENSION: Final = 4096
MAX_FILTERABLE_BYTES: Final = 2048
MAX_FILTER_CONSTRAINTS: Final = 100


def bucket_name(tenant: str) -> str:
    """The tenant's vector bucket (3-63 characters, unique in the account and region)."""
    return f"agentmem-{tenant}-vectors"


def index_name(tenant: str, kind: str) -> str:
    """The index holding one tenant's vectors of one kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown vector kind {kind!r}; known: {', '.join(KINDS)}")
    return f"{tenant}-{kind}"


def vector_key(owner_id: str, item_id: str) -> str:
    return f"{quote(owner_id, safe='')}/{quote(item_id, safe='')}"


def split_key(key: str) -> tuple[str, str]:
    """`(owner_id, item_id)` of a key written by `vector_key`."""
    owner, _, item = key.partition("/")
    return unquote(owner), unquote(item)
