"""Each Lambda function starts with only the layer's packages: nothing local-only is imported on the way.

What the layer holds is computed, not listed: `infra.bundling.layer_import_names()` walks the layer's
requirements and what they require (Lambda's markers), which is what `make bundle` installs. Every other
installed module (the CLI's, the local model's, the tests') is blocked in the function's interpreter.
The `mcp` function imports the MCP SDK on its first request, so its check answers `tools/list` too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import pytest

from functions.catalog import FUNCTIONS
from infra.bundling import layer_import_names
from tests.conftest import EVENTS

# The function code itself (staged beside the layer) and the interpreter's own packaging tools.
FUNCTION_CODE = {"agentmem", "functions"}

PROGRAM = """
import json, os, sys
for name in {blocked!r}:
    sys.modules[name] = None  # an import of it now fails, as it would in Lambda
os.environ.update({{
    "AGENTMEM_BACKEND": "aws", "AGENTMEM_TENANT": "acme", "AGENTMEM_TABLE_NAME": "t",
    "AGENTMEM_KEY_TABLE_NAME": "k", "AGENTMEM_EVENT_BUS_NAME": "b",
    "AGENTMEM_KMS_KEY_ARN": "arn:aws:kms:us-east-1:1:key/k",
    "AGENTMEM_HMAC_KEY_ARN": "arn:aws:kms:us-east-1:1:key/h", "AGENTMEM_OPENSEARCH_ENDPOINT": "https://x.aoss",
    "AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_TRACE_DISABLED": "true",
}})
import importlib
module = importlib.import_module({module!r})
assert callable(module.lambda_handler)
first_request = {first_request!r}
if first_request is not None:  # a request that calls no AWS service, through everything it imports
    class Context:
        function_name, memory_limit_in_mb, aws_request_id = "f", 512, "r"
        invoked_function_arn = "arn:aws:lambda:us-east-1:1:function:f"
        def get_remaining_time_in_millis(self): return 30000
    answer = module.lambda_handler(first_request, Context())
    assert answer["statusCode"] == 200, answer
    print("answered", len(json.loads(answer["body"])["result"]["tools"]))
from agentmem.wiring import get_services
services = get_services()  # wires every AWS adapter; no client is built, so nothing is called
print("ok", type(services.memory.store).__name__)
"""

# A sample event per function whose first request imports more than its module does.
FIRST_REQUESTS = {"mcp": "mcp/tools_list.json"}


def blocked_modules() -> list[str]:
    allowed = layer_import_names() | FUNCTION_CODE
    return sorted(set(metadata.packages_distributions()) - allowed)


def test_the_layer_holds_the_mcp_sdk_and_mangum_and_the_cli_packages_are_outside_it():
    inside = layer_import_names()
    assert {"mcp", "mcp_types", "mangum", "starlette", "anyio", "pydantic_core", "aws_lambda_powertools"} <= inside
    assert not {"spacy", "presidio_analyzer", "tokenizers", "moto", "aws_cdk", "langgraph", "strands"} & inside
    assert {"spacy", "tokenizers", "moto"} <= set(blocked_modules())


@pytest.mark.parametrize("spec", FUNCTIONS, ids=lambda spec: spec.name)
def test_the_function_imports_and_wires_with_the_layer_packages_only(spec):
    sample = FIRST_REQUESTS.get(spec.name)
    first_request = json.loads((EVENTS / sample).read_text()) if sample else None
    program = PROGRAM.format(blocked=blocked_modules(), module=spec.module, first_request=first_request)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == "ok DynamoDbRecordStore"
    if sample:
        answered = [line for line in lines if line.startswith("answered ")]
        assert answered and int(answered[0].split()[1]) >= 13, result.stdout[-2000:]
