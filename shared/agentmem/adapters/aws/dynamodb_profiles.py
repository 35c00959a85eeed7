"""The profile store on DynamoDB, in the tenant's single table.

Keys (the table's `pk`/`sk`):

- current:  pk `T#{tenant}#U#{user}#PROFILE`, sk `CURRENT` (a copy of the newest version, with `version`)
- version:  pk `T#{tenant}#U#{user}#PROFILE`, sk `V#{version:010d}`

`save` is one transaction: the current item is put on the condition that its
version is the one the writer read (absent for version 1), and the version item
on the condition that it does not exist. Two consolidations that read the same
version cannot both win; the loser gets Conflict, re-reads and tries again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError, NoCredentialsError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agentmem.adapters.aws.lazy import LazyClient
from agentmem.domain.errors import BackendUnavailable, Conflict
from agentmem.ports.profiles import ProfileVersion, decode_version_cursor, encode_version_cursor
from agentmem.ports.records import Page

CURRENT_SK = "CURRENT"
BATCH_WRITE_LIMIT = 25  # DynamoDB's own limit on requests per BatchWriteItem
MAX_BATCH_ATTEMPTS = 6
CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=2, read_timeout=5)
# Codes meaning "DynamoDB could not serve this now" (botocore has retried them already).
UNAVAILABLE_CODES = frozenset({
    "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
    "InternalServerError", "ServiceUnavailable", "TransactionInProgressException",
    "ResourceNotFoundException", "AccessDeniedException", "UnrecognizedClientException",
    "ExpiredTokenException",
})

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def profile_pk(tenant: str, user_id: str) -> str:
    return f"T#{tenant}#U#{user_id}#PROFILE"


def version_sk(version: int) -> str:
    # Fixed width, so string order is version order.
    return f"V#{version:010d}"


def to_attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    """Plain values to DynamoDB attribute values; None is left out, floats become exact Decimals."""
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, float):
            value = Decimal(repr(value))
        out[name] = _serializer.serialize(value)
    return out


def from_attributes(item: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _deserializer.deserialize(value) for name, value in item.items()}


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def cancellation_codes(exc: ClientError) -> list[str]:
    """The per-item reasons of a cancelled transaction, in the order of its items."""
    return [str(r.get("Code", "None")) for r in exc.response.get("CancellationReasons") or []]


@contextmanager
def store_errors() -> Iterator[None]:
    """Turn "DynamoDB is unreachable or overloaded" into BackendUnavailable("store"); let the rest through."""
    try:
        yield
    except ClientError as exc:
        if error_code(exc) in UNAVAILABLE_CODES:
            raise BackendUnavailable("store", f"DynamoDB: {error_code(exc)}") from exc
        raise
    except (BotocoreConnectionError, HTTPClientError, NoCredentialsError) as exc:
        raise BackendUnavailable("store", f"DynamoDB unreachable: {type(exc).__name__}") from exc


def backoff(attempt: int, base: float = 0.05, cap: float = 1.0) -> float:
    """Exponential backoff with jitter, so retrying writers do not collide again in step."""
    return min(cap, base * 2**attempt) * (0.5 + random.random() / 2)


def profile_to_attributes(profile: ProfileVersion) -> dict[str, Any]:
    return to_attributes({
        "type": "profile", "tenant": profile.tenant, "userId": profile.user_id, "version": profile.version,
        "body": profile.body, "updatedAt": profile.updated_at, "turnCount": profile.turn_count,
        "schemaVersion": profile.schema_version, "source": profile.source, "restoredFrom": profile.restored_from,
    })


def item_to_profile(item: Mapping[str, Any]) -> ProfileVersion:
    v = from_attributes(item)
    restored = v.get("restoredFrom")
    return ProfileVersion(
        tenant=v["tenant"], user_id=v["userId"], version=int(v["version"]), body=v["body"],
        updated_at=float(v["updatedAt"]), turn_count=int(v["turnCount"]), schema_version=int(v["schemaVersion"]),
        source=v["source"], restored_from=None if restored is None else int(restored),
    )


class DynamoDbProfileStore:
    """ProfileStore on the tenant's DynamoDB table (keys in the module docstring)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table_name = table_name
        self._client = LazyClient(lambda: boto3.client("dynamodb", config=CLIENT_CONFIG), client)
        self._sleep = sleep

    @property
    def client(self) -> Any:
        """The DynamoDB client, built on first use."""
        return self._client()

    def current(self, tenant: str, user_id: str) -> ProfileVersion | None:
        with store_errors():
            response = self.client.get_item(
                TableName=self.table_name, ConsistentRead=True,
                Key={"pk": {"S": profile_pk(tenant, user_id)}, "sk": {"S": CURRENT_SK}},
            )
        item = response.get("Item")
        return item_to_profile(item) if item else None

    def get_version(self, tenant: str, user_id: str, version: int) -> ProfileVersion | None:
        if version < 1:
            return None
        with store_errors():
            response = self.client.get_item(
                TableName=self.table_name, ConsistentRead=True,
                Key={"pk": {"S": profile_pk(tenant, user_id)}, "sk": {"S": version_sk(version)}},
            )
        item = response.get("Item")
        return item_to_profile(item) if item else None

    def list_versions(
        self, tenant: str, user_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[ProfileVersion]:
        below = decode_version_cursor(cursor) if cursor else None
        highest = version_sk(below - 1) if below is not None else "V#9999999999"
        with store_errors():
            response = self.client.query(
                TableName=self.table_name, ConsistentRead=True, ScanIndexForward=False, Limit=limit + 1,
                KeyConditionExpression="pk = :pk AND sk BETWEEN :lowest AND :highest",
                ExpressionAttributeValues={
                    ":pk": {"S": profile_pk(tenant, user_id)},
                    ":lowest": {"S": version_sk(1)}, ":highest": {"S": highest},
                },
            )
        rows = response.get("Items", [])
        items = [item_to_profile(i) for i in rows[:limit]]
        # DynamoDB may stop at 1 MB with fewer items than asked: then more may follow too.
        more = len(rows) > limit or ("LastEvaluatedKey" in response and bool(items))
        return Page(items, encode_version_cursor(items[-1].version) if more and items else None)

    def save(self, profile: ProfileVersion) -> None:
        pk = profile_pk(profile.tenant, profile.user_id)
        attributes = profile_to_attributes(profile)
        current_put: dict[str, Any] = {
            "TableName": self.table_name, "Item": {"pk": {"S": pk}, "sk": {"S": CURRENT_SK}, **attributes},
        }
        if profile.version == 1:
            current_put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            current_put["ConditionExpression"] = "#version = :expected"
            current_put["ExpressionAttributeNames"] = {"#version": "version"}
            current_put["ExpressionAttributeValues"] = {":expected": {"N": str(profile.version - 1)}}
        items = [
            {"Put": current_put},
            {"Put": {
                "TableName": self.table_name,
                "Item": {"pk": {"S": pk}, "sk": {"S": version_sk(profile.version)}, **attributes},
                "ConditionExpression": "attribute_not_exists(pk)",
            }},
        ]
        with store_errors():
            try:
                self.client.transact_write_items(TransactItems=items)
            except ClientError as exc:
                if error_code(exc) != "TransactionCanceledException":
                    raise
                reasons = cancellation_codes(exc)
                # A condition failed, or a concurrent transaction held the item: either way another
                # writer is ahead, and the caller must re-read before trying again.
                if any(r in ("ConditionalCheckFailed", "TransactionConflict") for r in reasons):
                    raise Conflict(
                        f"profile of {profile.user_id} is not at version {profile.version - 1} any more"
                    ) from None
                raise BackendUnavailable("store", f"DynamoDB transaction cancelled: {reasons}") from exc

    def delete_user(self, tenant: str, user_id: str) -> None:
        with store_errors():
            keys = list(query_keys(self.client, self.table_name, profile_pk(tenant, user_id)))
            batch_delete(self.client, self.table_name, keys, self._sleep)


def query_keys(client: Any, table_name: str, pk: str) -> Iterator[dict[str, Any]]:
    """The keys of every item in one partition."""
    request: dict[str, Any] = {
        "TableName": table_name, "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": pk}}, "ProjectionExpression": "pk, sk",
        "ConsistentRead": True,
    }
    while True:
        response = client.query(**request)
        yield from response.get("Items", [])
        if "LastEvaluatedKey" not in response:
            return
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def batch_delete(client: Any, table_name: str, keys: list[dict[str, Any]], sleep: Callable[[float], None]) -> None:
    """Delete items by key, 25 per call, retrying what DynamoDB leaves unprocessed."""
    for start in range(0, len(keys), BATCH_WRITE_LIMIT):
        request: dict[str, Any] = {
            table_name: [{"DeleteRequest": {"Key": k}} for k in keys[start:start + BATCH_WRITE_LIMIT]]
        }
        for attempt in range(MAX_BATCH_ATTEMPTS):
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
            if not request:
                break
            if attempt + 1 < MAX_BATCH_ATTEMPTS:
                sleep(backoff(attempt))
        else:
            raise BackendUnavailable("store", "DynamoDB left deletes unprocessed after retries")
