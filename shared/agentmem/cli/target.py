"""Where an operator's command acts: a local data folder, a running server, or a deployed stack."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from agentmem.config import DEFAULT_DATA_DIR, ConfigError

F = TypeVar("F", bound=Callable[..., Any])

# CloudFormation outputs of a TenantStack -> the settings the AWS adapters read.
STACK_OUTPUT_SETTINGS = {
    "Tenant": "AGENTMEM_TENANT",
    "TableName": "AGENTMEM_TABLE_NAME",
    "KeyTableName": "AGENTMEM_KEY_TABLE_NAME",
    "EventBusName": "AGENTMEM_EVENT_BUS_NAME",
    "KmsKeyArn": "AGENTMEM_KMS_KEY_ARN",
    "HmacKeyArn": "AGENTMEM_HMAC_KEY_ARN",
    "VectorIndexName": "AGENTMEM_VECTOR_INDEX",
    "EmbeddingModelId": "AGENTMEM_EMBEDDING_MODEL_ID",
    "EmbeddingDimension": "AGENTMEM_EMBEDDING_DIMENSION",
}
# Outputs of one vector mode only: OpenSearch's endpoint, or S3 Vectors' store and bucket.
OPTIONAL_STACK_OUTPUT_SETTINGS = {
    "CollectionEndpoint": "AGENTMEM_OPENSEARCH_ENDPOINT",
    "VectorStore": "AGENTMEM_VECTOR_STORE",
    "VectorBucketName": "AGENTMEM_VECTOR_BUCKET",
}


def target_options(func: F) -> F:
    """--data-dir / --url / --stack: the three places a command over the API can act on."""
    func = _stack_options(func)
    func = click.option("--token", envvar="AGENTMEM_API_TOKEN",
                        help="Bearer token of a local server started with AGENTMEM_API_TOKEN.")(func)
    func = click.option("--url", help="A running agentmem server (e.g. http://127.0.0.1:8765).")(func)
    func = click.option("--data-dir", default=str(DEFAULT_DATA_DIR), show_default=True,
                        type=click.Path(file_okay=False, path_type=Path),
                        help="The local data folder (used when neither --url nor --stack is given). Stop "
                             "`agentmem serve` on it first, or use --url, so its caches see the change.")(func)
    return func


def data_target_options(func: F) -> F:
    """--data-dir / --stack: for a command that works on the stored data itself, which the HTTP API does not
    expose (export, import, reindex, rewrap, redrive, config); so it offers no --url."""
    func = _stack_options(func)
    func = click.option("--data-dir", default=str(DEFAULT_DATA_DIR), show_default=True,
                        type=click.Path(file_okay=False, path_type=Path),
                        help="The local data folder (used when --stack is not given). export only reads and "
                             "works beside a running `agentmem serve`; stop the server before a command that "
                             "writes, so its caches see the change.")(func)
    return func


def _stack_options(func: F) -> F:
    func = click.option("--region", help="AWS region of --stack (default: your AWS configuration).")(func)
    return click.option("--stack", help="A deployed TenantStack's name: its outputs give the endpoint and "
                                        "resources; requests are signed with your AWS credentials.")(func)


@dataclass
class Target:
    data_dir: Path
    url: str | None = None
    token: str | None = None
    stack: str | None = None
    region: str | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Target:
        if options.get("url") and options.get("stack"):
            raise click.UsageError("give --url or --stack, not both")
        return cls(Path(options["data_dir"]), options.get("url"), options.get("token"), options.get("stack"),
                   options.get("region"))

    def client(self) -> Any:
        """A MemoryClient for this target (in-process for a data folder: the same handlers, no socket)."""
        from agentmem.client import MemoryClient

        if self.stack:
            return MemoryClient.for_stack(self.stack, region=self.region)
        if self.url:
            return MemoryClient(self.url, token=self.token)
        app = self._local_app()
        return MemoryClient("http://agentmem.local", transport=InProcessTransport(app))

    def services(self) -> Any:
        """The services wired to this target's backends (data folder, or the stack's AWS resources)."""
        from agentmem.config import load_settings, reset_settings
        from agentmem.wiring import build_services

        if self.stack:
            os.environ.update(stack_settings(self.stack, self.region))
            os.environ["AGENTMEM_BACKEND"] = "aws"
            reset_settings()
            try:
                return build_services(load_settings())
            except ConfigError as exc:
                raise click.ClickException(str(exc)) from None
        return self._local_app().services

    def _local_app(self) -> Any:
        from agentmem.local.server import create_app

        os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
        try:
            return create_app(self.data_dir.resolve(), start_worker=False)
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None


class InProcessTransport:
    """MemoryClient's transport, answered by the local app's handlers in this process."""

    def __init__(self, app: Any):
        self.app = app

    def send(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        status, answer_headers, data = self.app.handle(method, path, dict(headers), body, "127.0.0.1")
        return status, {k.lower(): v for k, v in answer_headers.items()}, data

    def close(self) -> None:
        self.app.close()


def stack_outputs(stack: str, region: str | None) -> dict[str, str]:
    """A stack's CloudFormation outputs."""
    import boto3
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
    )

    try:
        # A session of its own: boto3's default session keeps the credentials it first found.
        cloudformation = boto3.Session(region_name=region).client("cloudformation")
        description = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
    except NoRegionError:
        raise click.ClickException(
            f"cannot read stack {stack}: no AWS region; give --region or set AWS_DEFAULT_REGION"
        ) from None
    except (NoCredentialsError, PartialCredentialsError):
        raise click.ClickException(
            f"cannot read stack {stack}: no AWS credentials; configure them (aws configure, AWS_PROFILE)"
        ) from None
    except (BotoCoreError, ClientError) as exc:
        raise click.ClickException(f"cannot read stack {stack}: {str(exc).splitlines()[0]}") from None
    return {o["OutputKey"]: o["OutputValue"] for o in description.get("Outputs", [])}


def stack_settings(stack: str, region: str | None) -> dict[str, str]:
    """AGENTMEM_* settings read from a TenantStack's outputs."""
    outputs = stack_outputs(stack, region)
    missing = [key for key in STACK_OUTPUT_SETTINGS if key not in outputs]
    if missing:
        raise click.ClickException(f"stack {stack} is not an agentmem TenantStack (missing outputs {missing})")
    settings = {env: outputs[key] for key, env in STACK_OUTPUT_SETTINGS.items()}
    settings.update({env: outputs[key] for key, env in OPTIONAL_STACK_OUTPUT_SETTINGS.items() if key in outputs})
    if region:
        settings["AWS_DEFAULT_REGION"] = region
    return settings
