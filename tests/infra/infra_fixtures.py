"""Helpers and settings shared by the infrastructure tests (imported by name, unlike conftest)."""

from __future__ import annotations

import hashlib
import os
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
# `infra` is the CDK app's package, not an installed distribution.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from infra.bundling import LayerBundle  # noqa: E402

ACME_PRINCIPAL = "arn:aws:iam::111122223333:role/acme-agents"
GLOBEX_ROOT = "arn:aws:iam::444455556666:root"
GLOBEX_ROLE = "arn:aws:iam::${AWS::AccountId}:role/globex-agents"

TEST_CONTEXT: dict[str, Any] = {
    "tenants": ["acme", "globex", "initech"],
    "tenantDefaults": {"allowedPrincipals": [ACME_PRINCIPAL], "logRetentionDays": 14},
    "tenantSettings": {
        "acme": {
            "vectorCollection": "dedicated",
            "enabledAgents": ["support-bot", "sales-assistant"],
            "eligibilityThreshold": 0.42,
            "reservedConcurrency": {"retrieve": 7},
        },
        "globex": {
            "vectorCollection": "shared",
            "embeddingDimension": 512,
            "allowedPrincipals": [GLOBEX_ROOT, GLOBEX_ROLE],
            "removalPolicy": "destroy",
        },
        "initech": {"vectorCollection": "s3vectors", "monitoring": "minimal", "enabledAgents": ["helpdesk"]},
    },
    "platform": {"sharedVectorCollection": True},
}


@dataclass(frozen=True)
class Synthesised:
    outdir: Path
    templates: dict[str, dict[str, Any]]
    layer: LayerBundle

    def template(self, stack_name: str) -> dict[str, Any]:
        return self.templates[stack_name]

    def resources(self, stack_name: str, resource_type: str) -> dict[str, dict[str, Any]]:
        return {
            logical_id: resource
            for logical_id, resource in self.templates[stack_name]["Resources"].items()
            if resource["Type"] == resource_type
        }


def make_layer_zip(directory: Path) -> LayerBundle:
    """A real (tiny) layer zip, standing in for the PyPI-built one the tests cannot download."""
    directory.mkdir(parents=True, exist_ok=True)
    zip_path = directory / "lambda-layer.zip"
    with zipfile.ZipFile(zip_path, "w") as archive:
        archive.writestr("python/agentmem_test_layer.py", "MARKER = 1\n")
    sha256 = hashlib.sha256(zip_path.read_bytes()).hexdigest()
    return LayerBundle(zip_path=zip_path, sha256=sha256, pinned_requirements=("example==1.0",))
