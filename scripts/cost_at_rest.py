#!/usr/bin/env python3
"""What one tenant costs a month, per vector mode: at rest (counted from the synthesised templates)
and what 1M retrieves and 100k lessons a month add.

    .venv/bin/python scripts/cost_at_rest.py

The CDK app is synthesised in-process with one tenant per mode (the real TenantStack and
PlatformStack, cdk-nag off for speed); the resources that cost money at rest are counted by
type in each template. Prices are named constants below, us-east-1, with the date they were
taken; they are assumptions, not a quote: check the current price pages before relying on them.
Usage costs use the per-request assumptions below (durations, sizes, tokens), also constants.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from infra.application import build_app
from infra.bundling import stage_function_code

PRICES_AS_OF = "2026-12-01, us-east-1, list prices as published (assumed; check before relying on them)"
HOURS_A_MONTH = 730

# At rest.
KMS_KEY_MONTH = 1.00  # each customer-managed key, symmetric or HMAC, rotation included
ALARM_MONTH = 0.10  # standard-resolution alarm metric
DASHBOARD_MONTH = 3.00  # beyond the account's first three
OCU_HOUR = 0.24  # OpenSearch Serverless compute unit
OCU_FLOOR_NO_REDUNDANCY = 1.0  # 0.5 indexing + 0.5 search OCU
OCU_FLOOR_REDUNDANCY = 2.0  # 1 + 1 with standby replicas
# An SQS event source mapping long-polls its queue even when idle: 5 pollers at first, a 20 s receive each.
SQS_PER_MILLION = 0.40
IDLE_RECEIVES_PER_MAPPING = 5 * 3 * 60 * HOURS_A_MONTH
SHARED_COLLECTION_TENANTS = 10  # how many tenants the shared collection's floor is split across below

# Per request / per unit.
API_GATEWAY_REST_PER_MILLION = 3.50
LAMBDA_ARM_GB_SECOND = 0.0000133334
LAMBDA_PER_MILLION = 0.20
DYNAMODB_WRITE_PER_MILLION = 0.625
DYNAMODB_READ_PER_MILLION = 0.125
DYNAMODB_GB_MONTH = 0.25
DYNAMODB_PITR_GB_MONTH = 0.20
EVENTBRIDGE_PER_MILLION = 1.00
S3VECTORS_QUERY_PER_MILLION = 2.50
S3VECTORS_QUERY_PER_TB_PROCESSED = 0.004
S3VECTORS_PUT_PER_GB = 0.20
S3VECTORS_GB_MONTH = 0.06
TITAN_V2_PER_1K_TOKENS = 0.00002
LOGS_INGEST_PER_GB = 0.50
XRAY_PER_MILLION_TRACES = 5.00

# Workload assumptions (one month).
RETRIEVES = 1_000_000
LESSONS = 100_000
RETRIEVE_SECONDS, RETRIEVE_GB = 0.15, 1.0  # retrieve: 1,024 MB, warm, the query embedding is a Bedrock call
RETRIEVE_READ_UNITS, RETRIEVE_WRITE_UNITS = 5, 2  # k lessons read, the run written
RETRIEVE_TOKENS = 200
LESSON_API_CALLS = 1  # the feedback POST (the run itself is written by retrieve)
FEEDBACK_SECONDS, FEEDBACK_GB = 0.05, 0.5
INDEXER_SECONDS, INDEXER_GB = 0.30, 0.5
LESSON_READ_UNITS, LESSON_WRITE_UNITS = 2, 4  # run read; feedback, lesson, idempotency written
LESSON_TOKENS = 300
LOG_BYTES_PER_INVOCATION = 1_000
# The S3 Vectors mode's keyword side (per-user BM25 segments in the tenant table), measured by
# scripts/bench_dynamodb_lexical.py for a user of 1k LoCoMo turns: a warm search reads the pending deltas
# and HEAD in one strongly consistent Query (a cold one the base too, once per container and user).
KEYWORD_SEARCH_BYTES = 24_000
KEYWORD_BYTES_PER_TURN = 61  # the partition's bytes a turn (base, deltas and HEAD, keys included)
TURNS_STORED = 1_000_000  # for the storage line: a tenant with 1,000 users of 1,000 turns
DYNAMODB_READ_UNIT_BYTES = 4096
DIMENSION = 1024
VECTOR_BYTES = DIMENSION * 4 + 200  # float32 and its metadata
LESSON_ITEM_BYTES = 2_000  # the lesson's item in the table (digest, ids, scores)

MODES: dict[str, dict[str, Any]] = {
    "s3v-minimal": {"vectorCollection": "s3vectors", "monitoring": "minimal"},
    "s3v-full": {"vectorCollection": "s3vectors", "monitoring": "full"},
    "os-shared": {"vectorCollection": "shared", "monitoring": "full"},
    "os-dedicated": {"vectorCollection": "dedicated", "monitoring": "full"},
}
LABELS = {
    "s3v-minimal": "`s3vectors`, `monitoring: minimal`",
    "s3v-full": "`s3vectors`, `monitoring: full`",
    "os-shared": f"`shared` OpenSearch (floor split over {SHARED_COLLECTION_TENANTS} tenants)",
    "os-dedicated": "`dedicated` OpenSearch",
}


def synthesise() -> dict[str, dict[str, Any]]:
    """The templates of the platform stack and one tenant stack per mode."""
    context = {
        "tenants": list(MODES),
        "tenantDefaults": {"allowedPrincipals": ["arn:aws:iam::${AWS::AccountId}:role/agentmem-client"]},
        "tenantSettings": MODES,
        "platform": {"sharedVectorCollection": True, "sharedVectorRedundancy": False},
    }
    with tempfile.TemporaryDirectory() as scratch:
        built = build_app(
            context, outdir=scratch, code_dir=stage_function_code(Path(scratch) / "code"), nag=False
        )
        built.app.synth()
        names = [s.stack_name for s in [built.platform, *built.tenants.values()] if s is not None]
        return {name: json.loads((Path(scratch) / f"{name}.template.json").read_text()) for name in names}


def resource_counts(template: dict[str, Any]) -> Counter[str]:
    return Counter(resource["Type"] for resource in template["Resources"].values())


def ocu_floor(template: dict[str, Any]) -> float:
    collections = [r for r in template["Resources"].values() if r["Type"] == "AWS::OpenSearchServerless::Collection"]
    return sum(
        OCU_FLOOR_REDUNDANCY if c["Properties"].get("StandbyReplicas") == "ENABLED" else OCU_FLOOR_NO_REDUNDANCY
        for c in collections
    )


def at_rest(counts: Counter[str], ocus: float, ocu_share: float = 1.0) -> dict[str, float]:
    return {
        "KMS keys": counts["AWS::KMS::Key"] * KMS_KEY_MONTH,
        "alarms": counts["AWS::CloudWatch::Alarm"] * ALARM_MONTH,
        "dashboard": counts["AWS::CloudWatch::Dashboard"] * DASHBOARD_MONTH,
        "OpenSearch OCUs": ocus * OCU_HOUR * HOURS_A_MONTH * ocu_share,
        "idle queue polling": counts["AWS::Lambda::EventSourceMapping"] * IDLE_RECEIVES_PER_MAPPING / 1e6
        * SQS_PER_MILLION,
    }


def usage(mode: str) -> dict[str, float]:
    """What RETRIEVES retrieves and LESSONS lessons a month add, for one tenant."""
    invocations = RETRIEVES + LESSONS * 2  # retrieve; feedback + indexer per lesson
    lambda_cost = (
        invocations / 1e6 * LAMBDA_PER_MILLION
        + RETRIEVES * RETRIEVE_SECONDS * RETRIEVE_GB * LAMBDA_ARM_GB_SECOND
        + LESSONS * (FEEDBACK_SECONDS * FEEDBACK_GB + INDEXER_SECONDS * INDEXER_GB) * LAMBDA_ARM_GB_SECOND
    )
    dynamodb = (
        (RETRIEVES * RETRIEVE_READ_UNITS + LESSONS * LESSON_READ_UNITS) / 1e6 * DYNAMODB_READ_PER_MILLION
        + (RETRIEVES * RETRIEVE_WRITE_UNITS + LESSONS * LESSON_WRITE_UNITS) / 1e6 * DYNAMODB_WRITE_PER_MILLION
        + LESSONS * LESSON_ITEM_BYTES / 1e9 * (DYNAMODB_GB_MONTH + DYNAMODB_PITR_GB_MONTH)
    )
    costs = {
        "API Gateway": (RETRIEVES + LESSONS * LESSON_API_CALLS) / 1e6 * API_GATEWAY_REST_PER_MILLION,
        "Lambda": lambda_cost,
        "DynamoDB": dynamodb,
        "EventBridge": LESSONS / 1e6 * EVENTBRIDGE_PER_MILLION,
        "SQS": LESSONS * 3 / 1e6 * SQS_PER_MILLION,  # send, receive, delete per lesson event
        "Bedrock embeddings": (RETRIEVES * RETRIEVE_TOKENS + LESSONS * LESSON_TOKENS) / 1000 * TITAN_V2_PER_1K_TOKENS,
        "logs": invocations * LOG_BYTES_PER_INVOCATION / 1e9 * LOGS_INGEST_PER_GB,
        "X-Ray": invocations / 1e6 * XRAY_PER_MILLION_TRACES,
    }
    if mode.startswith("s3v"):
        keyword_read_units = -(-KEYWORD_SEARCH_BYTES // DYNAMODB_READ_UNIT_BYTES)
        costs["DynamoDB keyword search"] = RETRIEVES * keyword_read_units / 1e6 * DYNAMODB_READ_PER_MILLION
        index_gb = LESSONS * VECTOR_BYTES / 1e9
        costs["S3 Vectors"] = (
            RETRIEVES / 1e6 * S3VECTORS_QUERY_PER_MILLION
            # a query is charged for the index it searches; on average half the month's lessons are in it
            + RETRIEVES * (index_gb / 2) / 1000 * S3VECTORS_QUERY_PER_TB_PROCESSED
            + index_gb * S3VECTORS_PUT_PER_GB
            + index_gb * S3VECTORS_GB_MONTH
        )
    return costs


def money(value: float) -> str:
    return f"${value:,.2f}"


def main() -> int:
    templates = synthesise()
    platform = templates["AgentMem-Platform"]
    shared_ocus = ocu_floor(platform)
    platform_counts = resource_counts(platform)
    print(f"Prices: {PRICES_AS_OF}. Command: .venv/bin/python scripts/cost_at_rest.py\n")
    print("| mode | KMS keys | alarms | dashboards | queue pollers | at rest a month "
          "| + 1M retrieves and 100k lessons a month |")
    print("|---|---|---|---|---|---|---|")
    for mode in MODES:
        counts = resource_counts(templates[f"AgentMem-{mode}"])
        if mode == "os-shared":
            rest = at_rest(counts, shared_ocus, 1 / SHARED_COLLECTION_TENANTS)
        else:
            rest = at_rest(counts, ocu_floor(templates[f"AgentMem-{mode}"]))
        use = usage(mode)
        details = ", ".join(f"{name} {money(cost)}" for name, cost in use.items())
        print(
            f"| {LABELS[mode]} | {counts['AWS::KMS::Key']} | {counts['AWS::CloudWatch::Alarm']} | "
            f"{counts['AWS::CloudWatch::Dashboard']} | {counts['AWS::Lambda::EventSourceMapping']} | "
            f"**{money(sum(rest.values()))}** | "
            f"{money(sum(use.values()))} ({details}) |"
        )
    platform_rest = at_rest(platform_counts, 0)
    print(
        f"\nAgentMem-Platform, once per account: {platform_counts['AWS::KMS::Key']} KMS key(s) "
        f"({money(sum(platform_rest.values()))} a month, only with the shared collection) and, with "
        f"`sharedVectorCollection`, the collection's floor of {shared_ocus:g} OCU "
        f"({money(shared_ocus * OCU_HOUR * HOURS_A_MONTH)} a month, split across its tenants above)."
    )
    print(
        "Storage at rest is left out above (an empty tenant stores nothing); 100k lessons take "
        f"{LESSONS * VECTOR_BYTES / 1e9:.2f} GB of vectors ({money(LESSONS * VECTOR_BYTES / 1e9 * S3VECTORS_GB_MONTH)} "
        f"a month in S3 Vectors) and {LESSONS * LESSON_ITEM_BYTES / 1e9:.2f} GB in DynamoDB with PITR "
        f"({money(LESSONS * LESSON_ITEM_BYTES / 1e9 * (DYNAMODB_GB_MONTH + DYNAMODB_PITR_GB_MONTH))})."
    )
    keyword_gb = TURNS_STORED * KEYWORD_BYTES_PER_TURN / 1e9
    print(
        f"The S3 Vectors modes' keyword index (per-user BM25 segments in the tenant table) adds no resource: "
        f"{TURNS_STORED:,} turns take {keyword_gb:.2f} GB in DynamoDB with PITR "
        f"({money(keyword_gb * (DYNAMODB_GB_MONTH + DYNAMODB_PITR_GB_MONTH))} a month); each retrieve that recalls "
        f"turns reads ~{KEYWORD_SEARCH_BYTES // 1000} KB of it (counted above as \"DynamoDB keyword search\", "
        f"every retrieve naming a user)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
