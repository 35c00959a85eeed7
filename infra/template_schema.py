"""The tenant table's schema as the synthesised template has it, for tests that build the table in moto.

    from infra.template_schema import table_key_schema_from_template
    boto3.client("dynamodb").create_table(TableName="t", **table_key_schema_from_template())

Synthesising takes seconds, so the result is cached on disk under
build/cache/, keyed by a hash of every source that can change the template
(infra/, functions/catalog.py); any edit there triggers a fresh synth.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from infra.bundling import BUILD_DIR, REPO_ROOT

CACHE_DIR = BUILD_DIR / "cache"
_SOURCES = (REPO_ROOT / "infra", REPO_ROOT / "functions" / "catalog.py")
# A minimal app: the table does not depend on any tenant setting.
_CONTEXT: dict[str, Any] = {
    "tenants": ["schema"],
    "tenantDefaults": {"allowedPrincipals": ["arn:aws:iam::111122223333:role/agentmem-schema"]},
    "platform": {"apiGatewayCloudWatchRole": False},
}
_TABLE_KEYS = ("KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes", "BillingMode", "TimeToLiveSpecification")


def sources_digest(sources: tuple[Path, ...] = _SOURCES, root: Path = REPO_ROOT) -> str:
    """A hash of the paths (relative to `root`) and contents of every Python source under `sources`."""
    digest = hashlib.sha256()
    files: list[Path] = []
    for source in sources:
        files.extend(sorted(source.rglob("*.py")) if source.is_dir() else [source])
    for path in files:
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _synthesise_table_properties() -> dict[str, Any]:
    # Imported here: a cache hit needs neither the CDK nor its Node.js process.
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from infra.application import build_app
    from infra.bundling import LayerStatus, stage_function_code

    with tempfile.TemporaryDirectory(prefix="agentmem-schema-") as scratch:
        built = build_app(
            _CONTEXT,
            outdir=str(Path(scratch) / "cdk.out"),
            layer_status=LayerStatus(None, "not needed to read the table schema"),
            code_dir=stage_function_code(Path(scratch) / "code"),
            nag=False,
        )
        stack = built.tenants["schema"]
        built.app.synth()
        template = json.loads((Path(scratch) / "cdk.out" / stack.template_file).read_text())
    # The tenant table (construct "Memory"); the key store's table (construct "KeyStore") is apart.
    tables = [
        r for logical_id, r in template["Resources"].items()
        if r["Type"] == "AWS::DynamoDB::Table" and logical_id.startswith("Memory")
    ]
    if len(tables) != 1:
        raise LookupError(f"expected one tenant AWS::DynamoDB::Table in the tenant stack, found {len(tables)}")
    properties: dict[str, Any] = tables[0]["Properties"]
    return {key: properties[key] for key in _TABLE_KEYS if key in properties}


def table_properties_from_template(cache_dir: Path = CACHE_DIR) -> dict[str, Any]:
    """The table's schema properties as written in the template (CloudFormation names)."""
    cache_file = cache_dir / f"table-schema-{sources_digest()[:24]}.json"
    if cache_file.is_file():
        cached: dict[str, Any] = json.loads(cache_file.read_text())
        return cached
    properties = _synthesise_table_properties()
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = cache_file.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(properties, indent=2, sort_keys=True))
    partial.replace(cache_file)
    return properties


def table_key_schema_from_template(cache_dir: Path = CACHE_DIR) -> dict[str, Any]:
    """KeySchema, AttributeDefinitions, GlobalSecondaryIndexes and BillingMode as boto3 `create_table` kwargs.

    CloudFormation and the DynamoDB API spell these the same; add `TableName`.
    """
    properties = table_properties_from_template(cache_dir)
    kwargs: dict[str, Any] = {
        "KeySchema": properties["KeySchema"],
        "AttributeDefinitions": properties["AttributeDefinitions"],
        "BillingMode": properties.get("BillingMode", "PROVISIONED"),
    }
    if properties.get("GlobalSecondaryIndexes"):
        kwargs["GlobalSecondaryIndexes"] = properties["GlobalSecondaryIndexes"]
    return kwargs


def table_ttl_attribute_from_template(cache_dir: Path = CACHE_DIR) -> str | None:
    """The attribute DynamoDB expires items by (for `update_time_to_live`), or None."""
    ttl = table_properties_from_template(cache_dir).get("TimeToLiveSpecification") or {}
    return ttl.get("AttributeName") if ttl.get("Enabled") else None
