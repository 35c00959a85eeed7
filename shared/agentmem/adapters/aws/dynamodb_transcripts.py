"""Transcripts on DynamoDB, in the tenant's single table.

Keys (`#` cannot occur in an identifier, so no crafted id reaches another partition):

- thread:  pk `T#{tenant}#U#{user}`, sk `THREAD#{thread}`: `lastSeq`, the thread's sequence counter
- turn:    pk `T#{tenant}#U#{user}#TH#{thread}`, sk `TURN#{seq:012d}`

An append is one transaction: the thread item's `lastSeq` moves from the value read to the new
one (conditionally) and every turn is put where none exists, so two writers never share a `seq`
and a failed append writes nothing. Reading the newest turns is a reverse query with a limit:
its cost follows the turns read, not the length of the thread.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.exceptions import ClientError, HTTPClientError, NoCredentialsError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agentmem.adapters.aws.dynamodb_store import CLIENT_CONFIG, UNAVAILABLE_CODES
from agentmem.adapters.aws.lazy import LazyClient
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.records import Page
from agentmem.ports.transcripts import NewTurn, StoredTurn, decode_turn_cursor, encode_turn_cursor

# One transaction holds at most 100 items: the thread item and 99 turns.
MAX_TURNS_PER_APPEND = 99
MAX_APPEND_ATTEMPTS = 8
BATCH_WRITE_LIMIT = 25
BATCH_GET_LIMIT = 100
MAX_BATCH_ATTEMPTS = 6
CONDITION_FAILED = "ConditionalCheckFailed"
TRANSACTION_CONFLICT = "TransactionConflict"


def user_pk(tenant: str, user_id: str) -> str:
    return f"T#{tenant}#U#{user_id}"


def thread_key(tenant: str, user_id: str, thread_id: str) -> dict[str, Any]:
    return {"pk": {"S": user_pk(tenant, user_id)}, "sk": {"S": f"THREAD#{thread_id}"}}


def turns_pk(tenant: str, user_id: str, thread_id: str) -> str:
    return f"T#{tenant}#U#{user_id}#TH#{thread_id}"


def turn_sk(seq: int) -> str:
    # Fixed width, so string order is seq order.
    return f"TURN#{seq:012d}"


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def cancellation_codes(exc: ClientError) -> list[str]:
    """The per-item reasons of a cancelled transaction, in the order of its items."""
    return [str(reason.get("Code", "None")) for reason in exc.response.get("CancellationReasons") or []]


def backoff(attempt: int, base: float = 0.02, cap: float = 0.5) -> float:
    """Exponential backoff with jitter, so retrying writers do not collide again in step."""
    return min(cap, base * 2**attempt) * (0.5 + random.random() / 2)


class DynamoDbTable:
    """The table's client (built on first use) and the query, batch and error handling both stores share."""

    def __init__(self, table_name: str, part: str, client: Any = None, sleep: Callable[[float], None] = time.sleep):
        self.table_name = table_name
        self.part = part
        self._client = LazyClient(lambda: boto3.client("dynamodb", config=CLIENT_CONFIG), client)
        self.sleep = sleep

    @property
    def client(self) -> Any:
        return self._client()

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Turn "DynamoDB is unreachable or overloaded" into BackendUnavailable(part)."""
        try:
            yield
        except ClientError as exc:
            if error_code(exc) in UNAVAILABLE_CODES:
                raise BackendUnavailable(self.part, f"DynamoDB: {error_code(exc)}") from exc
            raise
        except (BotocoreConnectionError, HTTPClientError, NoCredentialsError) as exc:
            raise BackendUnavailable(self.part, f"DynamoDB unreachable: {type(exc).__name__}") from exc

    def get(self, key: Mapping[str, Any]) -> dict[str, Any] | None:
        response = self.client.get_item(TableName=self.table_name, Key=dict(key), ConsistentRead=True)
        item: dict[str, Any] | None = response.get("Item")
        return item

    def query(self, **request: Any) -> Iterator[dict[str, Any]]:
        """Every item a query matches, page after page (strongly consistent unless on an index)."""
        request = {"TableName": self.table_name, **request}
        if "IndexName" not in request:
            request.setdefault("ConsistentRead", True)
        while True:
            response = self.client.query(**request)
            yield from response.get("Items", [])
            if "LastEvaluatedKey" not in response:
                return
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

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
        found: list[dict[str, Any]] = []
        for start in range(0, len(keys), BATCH_GET_LIMIT):
            request: dict[str, Any] = {
                self.table_name: {"Keys": [dict(k) for k in keys[start : start + BATCH_GET_LIMIT]],
                                  "ConsistentRead": True}
            }
            for attempt in range(MAX_BATCH_ATTEMPTS):
                response = self.client.batch_get_item(RequestItems=request)
                found.extend(response.get("Responses", {}).get(self.table_name, []))
                request = response.get("UnprocessedKeys") or {}
                if not request:
                    break
                self.sleep(backoff(attempt))
            else:
                raise BackendUnavailable(self.part, "DynamoDB left keys unprocessed after retries")
        return found

    def batch_delete(self, keys: Sequence[Mapping[str, Any]]) -> None:
        for start in range(0, len(keys), BATCH_WRITE_LIMIT):
            request: dict[str, Any] = {
                self.table_name: [{"DeleteRequest": {"Key": dict(k)}} for k in keys[start : start + BATCH_WRITE_LIMIT]]
            }
            for attempt in range(MAX_BATCH_ATTEMPTS):
                response = self.client.batch_write_item(RequestItems=request)
                request = response.get("UnprocessedItems") or {}
                if not request:
                    break
                self.sleep(backoff(attempt))
            else:
                raise BackendUnavailable(self.part, "DynamoDB left deletes unprocessed after retries")

    def transact(self, items: list[dict[str, Any]]) -> list[str]:
        """Run a transaction once: [] when it committed, else the per-item cancellation codes."""
        try:
            self.client.transact_write_items(TransactItems=items)
            return []
        except ClientError as exc:
            if error_code(exc) != "TransactionCanceledException":
                raise
            return cancellation_codes(exc) or ["Unknown"]


class DynamoDbTranscriptStore:
    """TranscriptStore on the tenant's DynamoDB table (see the module docstring for the keys)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table = DynamoDbTable(table_name, "transcripts", client, sleep)

    def append(
        self, tenant: str, user_id: str, thread_id: str, turns: Sequence[NewTurn], created_at: float
    ) -> list[StoredTurn]:
        if not turns:
            return []
        if len(turns) > MAX_TURNS_PER_APPEND:
            raise ValueError(f"at most {MAX_TURNS_PER_APPEND} turns per append, got {len(turns)}")
        table = self.table
        with table.errors():
            for attempt in range(MAX_APPEND_ATTEMPTS):
                thread = table.get(thread_key(tenant, user_id, thread_id))
                last = int(thread["lastSeq"]["N"]) if thread else 0
                stored = [
                    StoredTurn(tenant, user_id, thread_id, last + 1 + i, t.role, t.content, t.tokens, created_at)
                    for i, t in enumerate(turns)
                ]
                reasons = table.transact([self._advance(stored, last), *(self._put(t) for t in stored)])
                if not reasons:
                    return stored
                if CONDITION_FAILED not in reasons and TRANSACTION_CONFLICT not in reasons:
                    raise BackendUnavailable("transcripts", f"DynamoDB transaction cancelled: {reasons}")
                # Another writer appended to this thread first: read its new last seq and go again.
                table.sleep(backoff(attempt))
        raise BackendUnavailable("transcripts", "the thread kept changing under concurrent appends")

    def list_turns(
        self, tenant: str, user_id: str, thread_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[StoredTurn]:
        after = decode_turn_cursor(cursor, tenant, user_id, thread_id) if cursor else 0
        with self.table.errors():
            response = self.table.client.query(
                TableName=self.table.table_name, ConsistentRead=True, Limit=limit + 1,
                KeyConditionExpression="pk = :pk AND sk > :after",
                ExpressionAttributeValues={
                    ":pk": {"S": turns_pk(tenant, user_id, thread_id)}, ":after": {"S": turn_sk(after)},
                },
            )
        items = response.get("Items", [])
        page = [_turn(tenant, user_id, thread_id, item) for item in items[:limit]]
        # DynamoDB may also stop early at 1 MB (LastEvaluatedKey with fewer items): more may follow.
        more = len(items) > limit or "LastEvaluatedKey" in response
        next_cursor = encode_turn_cursor(tenant, user_id, thread_id, page[-1].seq) if page and more else None
        return Page(page, next_cursor)

    def newest_turns(self, tenant: str, user_id: str, thread_id: str, limit: int) -> list[StoredTurn]:
        if limit <= 0:
            return []
        newest_first: list[StoredTurn] = []
        request: dict[str, Any] = {
            "TableName": self.table.table_name, "ConsistentRead": True, "ScanIndexForward": False,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": turns_pk(tenant, user_id, thread_id)}},
        }
        with self.table.errors():
            while len(newest_first) < limit:
                request["Limit"] = limit - len(newest_first)
                response = self.table.client.query(**request)
                newest_first.extend(_turn(tenant, user_id, thread_id, item) for item in response.get("Items", []))
                if "LastEvaluatedKey" not in response:
                    break
                request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        return list(reversed(newest_first))

    def thread_exists(self, tenant: str, user_id: str, thread_id: str) -> bool:
        with self.table.errors():
            return self.table.get(thread_key(tenant, user_id, thread_id)) is not None

    def delete_user(self, tenant: str, user_id: str) -> None:
        table = self.table
        with table.errors():
            for key in table.keys_with_prefix(user_pk(tenant, user_id), "THREAD#"):
                thread_id = key["sk"]["S"].removeprefix("THREAD#")
                table.batch_delete(table.keys_with_prefix(turns_pk(tenant, user_id, thread_id)))
                # The thread item goes last: an erase interrupted half-way still finds the thread again.
                table.batch_delete([key])

    def _advance(self, stored: list[StoredTurn], last: int) -> dict[str, Any]:
        first = stored[0]
        return {"Update": {
            "TableName": self.table.table_name,
            "Key": thread_key(first.tenant, first.user_id, first.thread_id),
            "UpdateExpression": "SET lastSeq = :new, threadId = :thread, updatedAt = :now",
            "ConditionExpression": "attribute_not_exists(pk) OR lastSeq = :last",
            "ExpressionAttributeValues": {
                ":new": {"N": str(stored[-1].seq)}, ":last": {"N": str(last)},
                ":thread": {"S": first.thread_id}, ":now": {"N": repr(first.created_at)},
            },
        }}

    def _put(self, turn: StoredTurn) -> dict[str, Any]:
        return {"Put": {
            "TableName": self.table.table_name,
            "Item": {
                "pk": {"S": turns_pk(turn.tenant, turn.user_id, turn.thread_id)},
                "sk": {"S": turn_sk(turn.seq)},
                "type": {"S": "turn"},
                "seq": {"N": str(turn.seq)},
                "role": {"S": turn.role},
                "content": {"S": turn.content},
                "tokens": {"N": str(turn.tokens)},
                "createdAt": {"N": repr(turn.created_at)},
            },
            "ConditionExpression": "attribute_not_exists(pk)",
        }}


def _turn(tenant: str, user_id: str, thread_id: str, item: Mapping[str, Any]) -> StoredTurn:
    return StoredTurn(
        tenant=tenant, user_id=user_id, thread_id=thread_id, seq=int(item["seq"]["N"]),
        role=item["role"]["S"], content=item["content"]["S"], tokens=int(item["tokens"]["N"]),
        created_at=float(item["createdAt"]["N"]),
    )
