"""What every DynamoDB adapter of the tenant table shares: the client, value conversion, errors and retries.

The stores (records, transcripts, vault, profiles, facts) keep their own key layouts and items;
`DynamoDbTable` holds the calls they all make the same way: consistent reads, paginated queries,
BatchGetItem/BatchWriteItem with what DynamoDB leaves unprocessed retried, single transactions,
and botocore failures turned into BackendUnavailable named after the store's part.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Literal

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError, NoCredentialsError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agentmem.adapters.aws.lazy import LazyClient
from agentmem.backoff import backoff
from agentmem.domain.errors import BackendUnavailable

BATCH_GET_LIMIT = 100  # DynamoDB's own limit on keys per BatchGetItem
BATCH_WRITE_LIMIT = 25  # DynamoDB's own limit on requests per BatchWriteItem
MAX_BATCH_ATTEMPTS = 6
# Per-item reasons of a cancelled transaction.
CONDITION_FAILED = "ConditionalCheckFailed"
TRANSACTION_CONFLICT = "TransactionConflict"

# Codes that mean "DynamoDB could not serve this now", whatever the call. botocore has
# already retried them (standard mode) by the time they reach us.
UNAVAILABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "TransactionInProgressException",
        "ResourceNotFoundException",  # the table is missing: a deployment fault, not the caller's
        "AccessDeniedException",
        "UnrecognizedClientException",
        "ExpiredTokenException",
    }
)

CLIENT_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 4},
    connect_timeout=2,
    read_timeout=5,
)

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    """Plain values to DynamoDB attribute values; None is left out, floats become exact Decimals."""
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, float):
            # repr is the shortest text that reads back as the same float, so the round trip is exact.
            value = Decimal(repr(value))
        out[name] = _serializer.serialize(value)
    return out


def from_attributes(item: Mapping[str, Any]) -> dict[str, Any]:
    """DynamoDB attribute values to plain values (numbers come back as Decimal)."""
    return {name: _deserializer.deserialize(value) for name, value in item.items()}


def error_code(exc: ClientError) -> str:
    """The error code DynamoDB answered with ("" when there is none): errors are told apart by it."""
    return str(exc.response.get("Error", {}).get("Code", ""))


def cancellation_codes(exc: ClientError) -> list[str]:
    """The per-item reasons of a cancelled transaction, in the order of its items."""
    return [str(reason.get("Code", "None")) for reason in exc.response.get("CancellationReasons") or []]


class DynamoDbTable:
    """The tenant table's client (built on first use) and the calls every DynamoDB store makes alike.

    `part` names the store in BackendUnavailable; `backoff_base`/`backoff_cap` bound its retry waits.
    """

    def __init__(
        self,
        table_name: str,
        part: str,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        *,
        backoff_base: float = 0.05,
        backoff_cap: float = 1.0,
    ):
        self.table_name = table_name
        self.part = part
        self._client = LazyClient(lambda: boto3.client("dynamodb", config=CLIENT_CONFIG), client)
        self.sleep = sleep
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap

    @property
    def client(self) -> Any:
        """The DynamoDB client, built on first use (not at import: cold starts stay short)."""
        return self._client()

    def back_off(self, attempt: int) -> None:
        """Sleep before retry `attempt + 1`, within this table's bounds."""
        self.sleep(backoff(attempt, self.backoff_base, self.backoff_cap))

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Turn "DynamoDB is unreachable or overloaded" into BackendUnavailable(part); let everything else through."""
        try:
            yield
        except ClientError as exc:
            if error_code(exc) in UNAVAILABLE_CODES:
                raise BackendUnavailable(self.part, f"DynamoDB: {error_code(exc)}") from exc
            raise
        except (BotocoreConnectionError, HTTPClientError, NoCredentialsError) as exc:
            # Connect/read timeouts and dropped connections, after botocore's own retries.
            raise BackendUnavailable(self.part, f"DynamoDB unreachable: {type(exc).__name__}") from exc

    def get(self, key: Mapping[str, Any]) -> dict[str, Any] | None:
        """The item at `key` (a strongly consistent read), or None."""
        response = self.client.get_item(TableName=self.table_name, Key=dict(key), ConsistentRead=True)
        item: dict[str, Any] | None = response.get("Item")
        return item

    def pages(self, operation: Literal["query", "scan"], request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every response of a paginated "query" or "scan", each page starting where the last one stopped."""
        call = getattr(self.client, operation)
        while True:
            response: dict[str, Any] = call(**request)
            yield response
            if "LastEvaluatedKey" not in response:
                return
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def query(self, **request: Any) -> Iterator[dict[str, Any]]:
        """Every item a query matches, page after page (strongly consistent unless on an index)."""
        request = {"TableName": self.table_name, **request}
        if "IndexName" not in request:
            request.setdefault("ConsistentRead", True)
        for response in self.pages("query", request):
            yield from response.get("Items", [])

    def scan(self, **request: Any) -> Iterator[dict[str, Any]]:
        """Every item a (strongly consistent) scan returns, page after page."""
        request = {"TableName": self.table_name, "ConsistentRead": True, **request}
        for response in self.pages("scan", request):
            yield from response.get("Items", [])

    def keys_with_prefix(self, pk: str, sk_prefix: str | None = None) -> list[dict[str, Any]]:
        """The keys of every item of a partition (optionally only those whose sk starts with a prefix)."""
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ProjectionExpression": "pk, sk",
        }
        if sk_prefix is not None:
            request["KeyConditionExpression"] += " AND begins_with(sk, :prefix)"
            request["ExpressionAttributeValues"][":prefix"] = {"S": sk_prefix}
        return [{"pk": item["pk"], "sk": item["sk"]} for item in self.query(**request)]

    def batch_get(self, keys: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The items at `keys` (strongly consistent; missing ones left out), 100 keys per call.

        Each key must be named once: BatchGetItem rejects a request that names one twice.
        """
        found: list[dict[str, Any]] = []
        for start in range(0, len(keys), BATCH_GET_LIMIT):
            chunk = {"Keys": [dict(k) for k in keys[start : start + BATCH_GET_LIMIT]], "ConsistentRead": True}
            request = {self.table_name: chunk}
            for response in self._until_processed("batch_get_item", request, "UnprocessedKeys", what="keys"):
                found.extend(response.get("Responses", {}).get(self.table_name, []))
        return found

    def batch_delete(self, keys: Sequence[Mapping[str, Any]]) -> None:
        """Delete the items at `keys`, 25 per call."""
        for start in range(0, len(keys), BATCH_WRITE_LIMIT):
            deletes = [{"DeleteRequest": {"Key": dict(k)}} for k in keys[start : start + BATCH_WRITE_LIMIT]]
            self._until_processed("batch_write_item", {self.table_name: deletes}, "UnprocessedItems", what="deletes")

    def batch_put(self, items: Sequence[Mapping[str, Any]]) -> None:
        """Put (or replace) `items`, 25 per call."""
        for start in range(0, len(items), BATCH_WRITE_LIMIT):
            puts = [{"PutRequest": {"Item": dict(item)}} for item in items[start : start + BATCH_WRITE_LIMIT]]
            self._until_processed("batch_write_item", {self.table_name: puts}, "UnprocessedItems", what="puts")

    def _until_processed(
        self,
        operation: Literal["batch_get_item", "batch_write_item"],
        request: dict[str, Any],
        unprocessed: Literal["UnprocessedKeys", "UnprocessedItems"],
        *,
        what: str,
    ) -> list[dict[str, Any]]:
        """Every response of a batch call, then of the calls for what DynamoDB left unprocessed.

        A batch call succeeds while skipping part of its request (throttling), so the rest is sent
        again after a backoff, up to MAX_BATCH_ATTEMPTS calls in all; then BackendUnavailable
        ("DynamoDB left {what} unprocessed").
        """
        call = getattr(self.client, operation)
        responses: list[dict[str, Any]] = []
        for attempt in range(MAX_BATCH_ATTEMPTS):
            response: dict[str, Any] = call(RequestItems=request)
            responses.append(response)
            request = response.get(unprocessed) or {}
            if not request:
                return responses
            if attempt + 1 < MAX_BATCH_ATTEMPTS:
                self.back_off(attempt)
        raise BackendUnavailable(self.part, f"DynamoDB left {what} unprocessed after retries")

    def transact(self, items: list[dict[str, Any]], client_request_token: str | None = None) -> list[str]:
        """Run a transaction once: [] when it committed, else the per-item cancellation codes (never empty).

        With `client_request_token`, DynamoDB runs the transaction at most once for 10 minutes: the SDK's
        own retry after a lost response succeeds without writing again.
        """
        extra = {"ClientRequestToken": client_request_token} if client_request_token else {}
        try:
            self.client.transact_write_items(TransactItems=items, **extra)
            return []
        except ClientError as exc:
            if error_code(exc) != "TransactionCanceledException":
                raise
            return cancellation_codes(exc) or ["Unknown"]


class DynamoDbStore:
    """Base of the record, profile and fact stores: their table's name and client, as attributes of the store."""

    table: DynamoDbTable

    @property
    def table_name(self) -> str:
        """The name of the tenant's table."""
        return self.table.table_name

    @property
    def client(self) -> Any:
        """The DynamoDB client, built on first use (not at import: cold starts stay short)."""
        return self.table.client
