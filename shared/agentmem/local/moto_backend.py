"""A throwaway AWS backend under moto, for `agentmem invoke --backend moto` (like `sam local invoke`).

moto provides DynamoDB (the table created from the synthesised template's key
schema), KMS (the tenant's data key and HMAC key), EventBridge and Comprehend.
It has no OpenSearch data plane and its Bedrock returns no embeddings, so the
vector index and the embedder are the local ones: say so to whoever reads the output.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REGION = "us-east-1"
TABLE = "agentmem-moto"
KEY_TABLE = "agentmem-moto-keys"
BUS = "agentmem-moto"
NOT_FROM_MOTO = "vector index and embedder are the local adapters (moto has no OpenSearch data plane nor embeddings)"


@contextmanager
def moto_backend(tenant: str = "local") -> Iterator[dict[str, Any]]:
    """Start moto, create the tenant's resources, point AGENTMEM_* at them; yields the ports moto cannot serve."""
    from moto import mock_aws

    settings = {"AGENTMEM_BACKEND", "AGENTMEM_TENANT", "AGENTMEM_TABLE_NAME", "AGENTMEM_KEY_TABLE_NAME",
                "AGENTMEM_EVENT_BUS_NAME",
                "AGENTMEM_KMS_KEY_ARN", "AGENTMEM_HMAC_KEY_ARN", "AGENTMEM_EMBEDDING_DIMENSION"}
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                            "AWS_DEFAULT_REGION", *settings)}
    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION})
    try:
        with mock_aws(), tempfile.TemporaryDirectory(prefix="agentmem-moto-") as tmp:
            import boto3

            from agentmem.adapters.aws.dynamodb_keys import KEY_TABLE_SCHEMA
            from agentmem.adapters.local.minilm import MiniLMEmbedder
            from agentmem.adapters.local.vector_index import LocalVectorIndex
            from infra.template_schema import table_key_schema_from_template

            dynamodb = boto3.client("dynamodb", region_name=REGION)
            dynamodb.create_table(TableName=TABLE, **table_key_schema_from_template())
            dynamodb.create_table(TableName=KEY_TABLE, **KEY_TABLE_SCHEMA)
            kms = boto3.client("kms", region_name=REGION)
            data_key = kms.create_key(Description=f"agentmem {tenant} data")["KeyMetadata"]["Arn"]
            hmac_key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]["Arn"]
            boto3.client("events", region_name=REGION).create_event_bus(Name=BUS)
            os.environ.update({
                "AGENTMEM_BACKEND": "aws", "AGENTMEM_TENANT": tenant, "AGENTMEM_TABLE_NAME": TABLE,
                "AGENTMEM_KEY_TABLE_NAME": KEY_TABLE,
                "AGENTMEM_EVENT_BUS_NAME": BUS, "AGENTMEM_KMS_KEY_ARN": data_key, "AGENTMEM_HMAC_KEY_ARN": hmac_key,
                "AGENTMEM_EMBEDDING_DIMENSION": "384",
            })
            yield {"vectors": LocalVectorIndex(Path(tmp) / "vectors.db"), "embedder": MiniLMEmbedder()}
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
