#!/usr/bin/env python3
"""LoCoMo recall in the S3 Vectors mode (the README's default AWS mode) beside the local hybrid's.

    .venv/bin/python scripts/eval_locomo_s3vectors.py ../shared/eval/locomo-dev.json [--json]
        [--limit-conversations N] [--max-gap POINTS] [--skip-local]

Both runs are `agentmem eval locomo`'s product path (`agentmem.eval.locomo_api`): each conversation
ingested over the HTTP API, indexed by the consolidate handler, every question asked with `retrieve`.
The S3 Vectors run swaps in the AWS adapters of the turn search:

- vectors: `S3VectorsIndex` on moto's S3 Vectors (bucket, one index per kind, PutVectors, DeleteVectors);
  QueryVectors, which moto lacks, is answered by the double tests/contract/fake_s3vectors_query.py
  (exact search over what moto holds, with the documented filter semantics);
- keywords: `DynamoDbLexicalIndex` on moto's DynamoDB, in a table built from the synthesised template;
- embeddings: the local MiniLM in place of Titan (no Bedrock here), the same model as the local run.

The rest (transcripts, vault, bus) stays on the local adapters: recall depends on the turn search alone.
A dev tool, not `agentmem eval locomo` itself, because it needs the test double for QueryVectors, which
the product never ships. `--max-gap` exits 1 when the S3 Vectors mode's R@5 or R@10 is more than that
many points under the local hybrid's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "shared")]

REGION = "us-east-1"
TABLE = "agentmem-locomo-eval"
BUCKET = "agentmem-locomo-eval-vectors"
TENANT = "local"  # the local app's tenant (Settings.tenant's default)
NOTE = (
    "S3 Vectors mode: S3VectorsIndex and DynamoDbLexicalIndex on moto; QueryVectors answered by the test "
    "double tests/contract/fake_s3vectors_query.py (moto lacks it); the local MiniLM in place of Titan"
)


@contextlib.contextmanager
def aws_world(dimension: int) -> Iterator[dict[str, Any]]:
    """moto with the tenant table and the vector bucket, and the two AWS adapters of the turn search on them."""
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION}.items():
        os.environ[name] = value
    os.environ.pop("AWS_PROFILE", None)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    import boto3
    from agentmem.adapters.aws import s3vectors_layout as layout
    from agentmem.adapters.aws.dynamodb_lexical import DynamoDbLexicalIndex
    from agentmem.adapters.aws.s3vectors_index import S3VectorsIndex
    from moto import mock_aws

    from infra.template_schema import table_key_schema_from_template
    from tests.contract.fake_s3vectors_query import FakeS3VectorsQuery

    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        dynamodb.create_table(TableName=TABLE, **table_key_schema_from_template())
        vectors_client = boto3.client("s3vectors", region_name=REGION)
        FakeS3VectorsQuery().register_on(vectors_client)
        vectors_client.create_vector_bucket(vectorBucketName=BUCKET)
        for kind in layout.KINDS:
            vectors_client.create_index(
                vectorBucketName=BUCKET, indexName=layout.index_name(TENANT, kind), dataType=layout.DATA_TYPE,
                dimension=dimension, distanceMetric=layout.DISTANCE_METRIC,
                metadataConfiguration={"nonFilterableMetadataKeys": list(layout.NON_FILTERABLE_KEYS)},
            )
        yield {
            "vectors": S3VectorsIndex(BUCKET, dimension=dimension, client=vectors_client),
            "lexical": DynamoDbLexicalIndex(TABLE, client=dynamodb),
        }


def gap(local: dict[str, Any], s3vectors: dict[str, Any]) -> dict[str, float]:
    """Local minus S3 Vectors mode, in points, at each k."""
    return {k: round(100 * (local["overall"][k] - s3vectors["overall"][k]), 1) for k in s3vectors["overall"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, nargs="?", default=REPO.parent / "shared" / "eval" / "locomo-dev.json")
    parser.add_argument("--json", action="store_true", help="one JSON object with both results")
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--max-gap", type=float, default=None, metavar="POINTS",
                        help="exit 1 when the S3 Vectors mode's R@5 or R@10 is more than POINTS under the local's")
    parser.add_argument("--skip-local", action="store_true", help="the S3 Vectors mode's figure alone")
    args = parser.parse_args(argv)

    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    from agentmem.adapters.local.minilm import MiniLMEmbedder
    from agentmem.eval.locomo import format_table
    from agentmem.eval.locomo_api import evaluate_through_api, format_extras

    embedder = MiniLMEmbedder(cache_size=0)
    results: dict[str, Any] = {}
    if not args.skip_local:
        results["local"] = evaluate_through_api(
            args.path, embedder=embedder, limit_conversations=args.limit_conversations
        )
        results["local"]["retriever"] = "retrieve, local hybrid (LocalVectorIndex + LocalBm25Index)"
    with aws_world(embedder.dimension) as ports:
        results["s3vectors"] = evaluate_through_api(
            args.path, embedder=embedder, limit_conversations=args.limit_conversations, ports=ports
        )
    results["s3vectors"]["retriever"] = "retrieve, S3 Vectors mode (S3VectorsIndex + DynamoDbLexicalIndex)"
    results["s3vectors"]["note"] = NOTE
    if "local" in results:
        results["gap_points"] = gap(results["local"], results["s3vectors"])
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name in ("local", "s3vectors"):
            if name in results:
                print(format_table(results[name]) + "\n" + format_extras(results[name]) + "\n")
        print(NOTE + ".")
        if "gap_points" in results:
            print("local hybrid minus S3 Vectors mode, points: "
                  + ", ".join(f"R@{k} {value:+.1f}" for k, value in results["gap_points"].items()))
    if args.max_gap is not None and "gap_points" in results:
        worst = max(results["gap_points"]["5"], results["gap_points"]["10"])
        if worst > args.max_gap:
            print(f"S3 Vectors mode is {worst} points under the local hybrid (allowed {args.max_gap})", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
