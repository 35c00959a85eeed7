#!/usr/bin/env python3
"""Each Lambda function's package size (unzipped, code + layer) and its import time, a proxy for init.

    .venv/bin/python scripts/cold_start.py            # 5 fresh interpreters per function, median
    .venv/bin/python scripts/cold_start.py --runs 9

Size: the function code as the CDK app stages it (`infra.bundling.stage_function_code`: the
`agentmem` and `functions` packages) plus the dependency layer `make bundle` builds
(build/lambda-layer.zip, its entries' uncompressed sizes). Lambda's limit is 250 MB for a function
and its layers unzipped. Without a built layer the script says so and counts what the layer would hold
from this venv's installed distributions (this machine's wheels, not arm64's: close, not exact).

Import time: a fresh `python` per run imports the function's handler module with the AWS backend's
environment (no AWS call is made at import: clients and settings are built on the first request),
timed inside the interpreter, with what the first request imports for a function that defers imports to
it (the mcp function's MCP SDK and tools); the interpreter's own start is reported separately. This machine's
CPU is not Lambda's: compare functions with each other, not with a Lambda init duration.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from functions.catalog import FUNCTIONS  # noqa: E402
from infra.bundling import (  # noqa: E402
    LAYER_MAX_UNZIPPED_BYTES,
    LAYER_ZIP,
    find_layer,
    layer_distributions,
    stage_function_code,
)

LAMBDA_UNZIPPED_LIMIT = LAYER_MAX_UNZIPPED_BYTES  # 250 MB, function and layers together
AWS_ENVIRONMENT = {
    "AGENTMEM_BACKEND": "aws",
    "AGENTMEM_TENANT": "acme",
    "AGENTMEM_TABLE_NAME": "agentmem-acme",
    "AGENTMEM_EVENT_BUS_NAME": "agentmem-acme",
    "AGENTMEM_KMS_KEY_ARN": "arn:aws:kms:us-east-1:111122223333:key/example",
    "AGENTMEM_VECTOR_STORE": "s3vectors",
    "AGENTMEM_VECTOR_BUCKET": "agentmem-acme-vectors",
    "AWS_DEFAULT_REGION": "us-east-1",
    "POWERTOOLS_SERVICE_NAME": "agentmem",
    "POWERTOOLS_METRICS_NAMESPACE": "AgentMem",
    "POWERTOOLS_TRACE_DISABLED": "true",  # no X-Ray daemon here
}
TIMED_IMPORT = (
    "import time; t = time.perf_counter(); import {module}; {first_request}"
    "print(time.perf_counter() - t)"
)
# What a function imports on its first request beyond its module (the mcp function loads the MCP SDK
# and builds its tools then): timed with the import, since a cold start pays both.
FIRST_REQUEST = {
    "mcp": "import mangum; from agentmem.integrations.mcp import streamable_http_app; "
           "streamable_http_app({module}._server()); ",
}


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def layer_bytes() -> tuple[int, str]:
    """The layer's unzipped size and where the number comes from."""
    status = find_layer()
    if status.bundle is not None:
        with zipfile.ZipFile(LAYER_ZIP) as archive:
            return sum(i.file_size for i in archive.infolist()), f"{LAYER_ZIP.relative_to(REPO_ROOT)} (arm64 wheels)"
    total = 0
    for name in sorted(layer_distributions()):  # the requirements and what they require, as pip installs them
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # in the lock for Lambda's Python only, so not in this venv: not counted
        for file in distribution.files or []:
            path = Path(str(distribution.locate_file(file)))
            if path.is_file():
                total += path.stat().st_size
    return total, f"NOT BUILT ({status.problem}); counted from this venv's installed distributions instead"


def import_seconds(module: str, runs: int, first_request: str = "") -> list[float]:
    environment = {**os.environ, **AWS_ENVIRONMENT, "PYTHONPATH": str(REPO_ROOT)}
    environment.pop("PYTHONSTARTUP", None)
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", TIMED_IMPORT.format(module=module, first_request=first_request)],
            cwd=REPO_ROOT, env=environment, capture_output=True, text=True, check=True,
        )  # fmt: skip
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return times


def interpreter_seconds(runs: int) -> float:
    import time

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        code = tree_bytes(stage_function_code(Path(scratch) / "code"))
    layer, layer_source = layer_bytes()
    rows = []
    for spec in FUNCTIONS:
        first_request = FIRST_REQUEST.get(spec.name, "").format(module=spec.module)
        times = import_seconds(spec.module, args.runs, first_request)
        rows.append({
            "function": spec.name, "memory_mb": spec.memory_mb, "unzipped_bytes": code + layer,
            "import_ms_median": statistics.median(times) * 1000, "import_ms_max": max(times) * 1000,
        })  # fmt: skip
    if args.json:
        print(json.dumps({"code_bytes": code, "layer_bytes": layer, "layer_source": layer_source, "rows": rows}))
        return 0
    mb = 1024 * 1024
    print(f"code {code / mb:.1f} MB + layer {layer / mb:.1f} MB ({layer_source}); "
          f"Lambda's limit {LAMBDA_UNZIPPED_LIMIT / mb:.0f} MB unzipped")
    print(f"interpreter start (python -c pass): {interpreter_seconds(args.runs) * 1000:.0f} ms, median of {args.runs}")
    print(f"\n| function | memory | unzipped (code + layer) | import, median of {args.runs} | import, max |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['function']} | {row['memory_mb']} MB | {row['unzipped_bytes'] / mb:.1f} MB | "
              f"{row['import_ms_median']:.0f} ms | {row['import_ms_max']:.0f} ms |")
    over = [r["function"] for r in rows if r["unzipped_bytes"] > LAMBDA_UNZIPPED_LIMIT]
    if over:
        print(f"\nOVER Lambda's unzipped limit: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
