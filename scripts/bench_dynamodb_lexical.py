#!/usr/bin/env python3
"""The S3 Vectors mode's keyword search (DynamoDbLexicalIndex) for one user of 1k and 10k turns, under moto.

    .venv/bin/python scripts/bench_dynamodb_lexical.py [--sizes 1000 10000] [--queries 200]

The user's turns are LoCoMo's (../shared/eval/locomo-dev.json), indexed as the turn search indexes them
(each turn after the one before it), appended a session (~20 turns) at a time as consolidate does,
renumbered past the file's ~3k turns; the queries are the file's questions. Per search it prints the
DynamoDB requests and the bytes they returned (what AWS latency and read cost follow), the CPU time in
the function outside the DynamoDB calls (decoding and scoring: the part that is the same on AWS; moto's own
work inside the calls is left out) and the wall time under moto, cold
(a new container: the base segment read and decoded) and warm (the base cached: deltas and HEAD only).
moto's wall time is not DynamoDB's latency: read the request count and the bytes instead. Also: the
storage the user's keyword partition takes, and the requests the writes made (merges included).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "shared")]
REGION = "us-east-1"
TABLE = "agentmem-bench-lexical"
SESSION = 20


def turn_documents(path: Path, size: int) -> list[tuple[str, str]]:
    from agentmem.eval.locomo import load_samples, read_conversation
    from agentmem.service.turn_search import lexical_text

    sessions = [s for sample in load_samples(path) for s in read_conversation(sample).sessions if s]
    documents: list[tuple[str, str]] = []
    round_number = 0
    while len(documents) < size:
        for number, session in enumerate(sessions):
            for previous, turn in zip([None, *session[:-1]], session, strict=True):
                documents.append((f"r{round_number}-s{number}#{turn.turn_id}", lexical_text(turn, previous)))
        round_number += 1
    return documents[:size]


def questions(path: Path, count: int) -> list[str]:
    from agentmem.eval.locomo import load_samples

    texts = [str(item["question"]) for sample in load_samples(path) for item in sample.get("qa", [])]
    return texts[:: max(1, len(texts) // count)][:count]


class Meter:
    """The requests an adapter's client sends and the bytes of the items they return."""

    def __init__(self, client: Any):
        self.requests: list[str] = []
        self.bytes = 0
        self.call_cpu = 0.0  # CPU seconds inside the calls: moto's own work, which AWS does elsewhere
        self._began = 0.0
        client.meta.events.register("before-call.dynamodb", self._call)
        client.meta.events.register("after-call.dynamodb", self._answer)

    def _call(self, model: Any, **_: Any) -> None:
        self.requests.append(model.name)
        self._began = time.process_time()

    def _answer(self, parsed: dict[str, Any], **_: Any) -> None:
        self.call_cpu += time.process_time() - self._began
        for item in parsed.get("Items", []):
            self.bytes += sum(len(v.get("B", b"")) + len(v.get("S", "")) for v in item.values())

    def reset(self) -> None:
        self.requests.clear()
        self.bytes = 0
        self.call_cpu = 0.0


def partition_bytes(client: Any, pk: str) -> tuple[int, int]:
    """(items, bytes of their payloads and keys) of one partition."""
    items = size = 0
    request: dict[str, Any] = {"TableName": TABLE, "KeyConditionExpression": "pk = :pk",
                               "ExpressionAttributeValues": {":pk": {"S": pk}}}
    while True:
        page = client.query(**request)
        for item in page["Items"]:
            items += 1
            size += sum(
                len(k) + len(v.get("B", b"")) + len(v.get("S", "")) + len(v.get("N", "")) for k, v in item.items()
            )
        if "LastEvaluatedKey" not in page:
            return items, size
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def bench(size: int, path: Path, queries: list[str]) -> dict[str, Any]:
    import boto3
    from agentmem.adapters.aws.dynamodb_lexical import DynamoDbLexicalIndex, lexical_pk

    owner = f"user-{size}"
    client = boto3.client("dynamodb", region_name=REGION)
    writer = DynamoDbLexicalIndex(TABLE, client=client)
    meter = Meter(client)
    documents = turn_documents(path, size)
    for start in range(0, len(documents), SESSION):
        writer.upsert("bench", "turn", owner, documents[start : start + SESSION])
    writes = len(range(0, len(documents), SESSION))
    write_requests = len(meter.requests)
    merges = sum(1 for name in meter.requests if name == "BatchWriteItem")
    items, stored = partition_bytes(boto3.client("dynamodb", region_name=REGION), lexical_pk("bench", "turn", owner))

    out: dict[str, Any] = {"turns": size, "writes": writes, "write_requests": write_requests,
                           "write_requests_per_write": round(write_requests / writes, 2),
                           "batch_writes_of_merges": merges, "partition_items": items,
                           "partition_bytes": stored, "bytes_per_turn": round(stored / size, 1)}
    for mode in ("cold", "warm"):
        out[mode] = searches(owner, queries, cold=mode == "cold")
    # One merge of the whole user, timed: what a write past the threshold (or a delete) adds to consolidate.
    writer.upsert("bench", "turn", owner, documents[:1])
    meter.reset()
    began_cpu = time.process_time()
    writer.merge(lexical_pk("bench", "turn", owner))
    merge_cpu_ms = round((time.process_time() - began_cpu - meter.call_cpu) * 1000, 1)
    merge_requests = len(meter.requests)
    out["merge_cpu_ms"] = merge_cpu_ms
    out["merge_requests"] = merge_requests
    out["warm, just merged"] = searches(owner, queries, cold=False)
    return out


def searches(owner: str, queries: list[str], *, cold: bool) -> dict[str, Any]:
    """Requests, bytes and time per search, each from a new container (`cold`) or one warmed up."""
    import boto3
    from agentmem.adapters.aws.dynamodb_lexical import DynamoDbLexicalIndex

    cpu, wall, requests, read = [], [], [], []
    warm = DynamoDbLexicalIndex(TABLE, client=boto3.client("dynamodb", region_name=REGION))
    meter = Meter(warm.client)
    if not cold:
        warm.search("bench", "turn", owner, "warm up", 10)
    for query in queries:
        index = DynamoDbLexicalIndex(TABLE, client=warm.client) if cold else warm  # cold: nothing cached
        meter.reset()
        began_cpu, began = time.process_time(), time.perf_counter()
        index.search("bench", "turn", owner, query, 100)
        cpu.append((time.process_time() - began_cpu - meter.call_cpu) * 1000)
        wall.append((time.perf_counter() - began) * 1000)
        requests.append(len(meter.requests))
        read.append(meter.bytes)
    return {
        "requests_per_search": statistics.mean(requests),
        "bytes_read_per_search": round(statistics.mean(read)),
        "cpu_ms_p50": round(statistics.median(cpu), 2),
        "cpu_ms_p95": round(sorted(cpu)[int(0.95 * (len(cpu) - 1))], 2),
        "moto_wall_ms_p50": round(statistics.median(wall), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=REPO.parent / "shared" / "eval" / "locomo-dev.json")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION}.items():
        os.environ[name] = value
    import boto3
    from moto import mock_aws

    from infra.template_schema import table_key_schema_from_template

    schema = table_key_schema_from_template()
    queries = questions(args.path, args.queries)
    with mock_aws():
        boto3.client("dynamodb", region_name=REGION).create_table(TableName=TABLE, **schema)
        results = [bench(size, args.path, queries) for size in args.sizes]
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"results": results, "load_average": load}, indent=2))
        return 0
    print(f"DynamoDbLexicalIndex under moto, {len(queries)} LoCoMo questions per size, k=100; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")
    print("moto's wall time is not DynamoDB's latency: requests and bytes per search are what AWS latency follows.")
    print("| turns | search | requests | bytes read | function CPU p50 / p95 ms | moto wall p50 ms |")
    print("|---|---|---|---|---|---|")
    for result in results:
        for mode in ("cold", "warm", "warm, just merged"):
            row = result[mode]
            print(f"| {result['turns']:,} | {mode} | {row['requests_per_search']:g} | "
                  f"{row['bytes_read_per_search']:,} | {row['cpu_ms_p50']} / {row['cpu_ms_p95']} | "
                  f"{row['moto_wall_ms_p50']} |")
    print()
    for result in results:
        print(f"{result['turns']:,} turns: keyword partition {result['partition_items']} items, "
              f"{result['partition_bytes']:,} bytes ({result['bytes_per_turn']} a turn); {result['writes']} writes "
              f"of {SESSION} turns took {result['write_requests']} requests "
              f"({result['write_requests_per_write']} a write, merges included); one merge of the whole user: "
              f"{result['merge_requests']} requests, {result['merge_cpu_ms']} ms CPU in the function")
    return 0


if __name__ == "__main__":
    sys.exit(main())
