"""The fact store on DynamoDB, in the tenant's single table.

Keys: pk `T#{tenant}#U#{user}#FACTS`, sk `F#{fact_id}`. One partition per user,
read whole to list (a user has hundreds of facts, not millions; listing sorts
by learnt time in memory, which keeps one cursor format with the local store).
`add` is one transaction: the new fact on the condition that its id is new,
each superseded fact on the condition that it is still active.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import boto3
from botocore.exceptions import ClientError

from agentmem.adapters.aws.dynamodb_profiles import (
    CLIENT_CONFIG,
    backoff,
    batch_delete,
    cancellation_codes,
    error_code,
    from_attributes,
    query_keys,
    store_errors,
    to_attributes,
)
from agentmem.adapters.aws.lazy import LazyClient
from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.facts import Fact
from agentmem.ports.facts import decode_fact_cursor, encode_fact_cursor
from agentmem.ports.records import Page

BATCH_GET_LIMIT = 100
MAX_BATCH_ATTEMPTS = 6
# TransactWriteItems takes 100 items; one is the new fact.
MAX_SUPERSEDED_PER_ADD = 99
MAX_ADD_ATTEMPTS = 4


def facts_pk(tenant: str, user_id: str) -> str:
    return f"T#{tenant}#U#{user_id}#FACTS"


def fact_key(tenant: str, user_id: str, fact_id: str) -> dict[str, Any]:
    return {"pk": {"S": facts_pk(tenant, user_id)}, "sk": {"S": f"F#{fact_id}"}}


def fact_to_item(fact: Fact) -> dict[str, Any]:
    return {
        **fact_key(fact.tenant, fact.user_id, fact.fact_id),
        **to_attributes({
            "type": "fact", "tenant": fact.tenant, "userId": fact.user_id, "factId": fact.fact_id,
            "text": fact.text, "subject": fact.subject, "threadId": fact.thread_id,
            # A list, not a number set: order is kept and an empty list is allowed.
            "sourceSeqs": [int(s) for s in fact.source_seqs], "createdAt": fact.created_at,
            "validFrom": fact.valid_from, "validTo": fact.valid_to, "status": fact.status,
            "supersededBy": fact.superseded_by,
        }),
    }


def item_to_fact(item: Mapping[str, Any]) -> Fact:
    v = from_attributes(item)
    valid_to = v.get("validTo")
    return Fact(
        tenant=v["tenant"], user_id=v["userId"], fact_id=v["factId"], text=v["text"], subject=v["subject"],
        thread_id=v["threadId"], source_seqs=[int(s) for s in v.get("sourceSeqs", [])],
        created_at=float(v["createdAt"]), valid_from=float(v["validFrom"]),
        valid_to=None if valid_to is None else float(valid_to), status=v["status"],
        superseded_by=v.get("supersededBy"),
    )


class DynamoDbFactStore:
    """FactStore on the tenant's DynamoDB table (keys in the module docstring)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table_name = table_name
        self._client = LazyClient(lambda: boto3.client("dynamodb", config=CLIENT_CONFIG), client)
        self._sleep = sleep

    @property
    def client(self) -> Any:
        """The DynamoDB client, built on first use."""
        return self._client()

    def add(self, fact: Fact, supersedes: Sequence[str] = ()) -> bool:
        olds = [f for f in dict.fromkeys(supersedes) if f != fact.fact_id][:MAX_SUPERSEDED_PER_ADD]
        for attempt in range(MAX_ADD_ATTEMPTS):
            items: list[dict[str, Any]] = [{"Put": {
                "TableName": self.table_name, "Item": fact_to_item(fact),
                "ConditionExpression": "attribute_not_exists(pk)",
            }}]
            items += [{"Update": {
                "TableName": self.table_name, "Key": fact_key(fact.tenant, fact.user_id, old),
                "UpdateExpression": "SET #status = :superseded, validTo = :to, supersededBy = :by",
                "ConditionExpression": "#status = :active",
                "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": {
                    ":superseded": {"S": "superseded"}, ":active": {"S": "active"},
                    ":to": to_attributes({"t": fact.valid_from})["t"], ":by": {"S": fact.fact_id},
                },
            }} for old in olds]
            with store_errors():
                try:
                    self.client.transact_write_items(TransactItems=items)
                    return True
                except ClientError as exc:
                    if error_code(exc) != "TransactionCanceledException":
                        raise
                    reasons = (cancellation_codes(exc) + ["None"] * len(items))[: len(items)]
            if reasons[0] == "ConditionalCheckFailed":
                return False
            # Facts no longer active (superseded or deleted meanwhile) are left alone, as the port says.
            olds = [old for old, r in zip(olds, reasons[1:], strict=True) if r != "ConditionalCheckFailed"]
            if attempt + 1 < MAX_ADD_ATTEMPTS:
                self._sleep(backoff(attempt))
        raise BackendUnavailable("store", "DynamoDB fact transaction kept conflicting with concurrent writers")

    def get(self, tenant: str, user_id: str, fact_id: str) -> Fact | None:
        with store_errors():
            response = self.client.get_item(
                TableName=self.table_name, Key=fact_key(tenant, user_id, fact_id), ConsistentRead=True
            )
        item = response.get("Item")
        return item_to_fact(item) if item else None

    def get_many(self, tenant: str, user_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        keys = [fact_key(tenant, user_id, f) for f in dict.fromkeys(fact_ids)]
        found: list[dict[str, Any]] = []
        with store_errors():
            for start in range(0, len(keys), BATCH_GET_LIMIT):
                request: dict[str, Any] = {
                    self.table_name: {"Keys": keys[start:start + BATCH_GET_LIMIT], "ConsistentRead": True}
                }
                for attempt in range(MAX_BATCH_ATTEMPTS):
                    response = self.client.batch_get_item(RequestItems=request)
                    found.extend(response.get("Responses", {}).get(self.table_name, []))
                    request = response.get("UnprocessedKeys") or {}
                    if not request:
                        break
                    if attempt + 1 < MAX_BATCH_ATTEMPTS:
                        self._sleep(backoff(attempt))
                else:
                    raise BackendUnavailable("store", "DynamoDB left keys unprocessed after retries")
        return [item_to_fact(i) for i in found]

    def list_facts(
        self,
        tenant: str,
        user_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        include_superseded: bool = False,
    ) -> Page[Fact]:
        after = decode_fact_cursor(cursor) if cursor else None
        facts = [f for f in self._all(tenant, user_id) if include_superseded or f.status == "active"]
        facts.sort(key=lambda f: (f.created_at, f.fact_id), reverse=True)
        if after:
            facts = [f for f in facts if (f.created_at, f.fact_id) < after]
        items = facts[:limit]
        more = len(facts) > limit
        last = items[-1] if items else None
        return Page(items, encode_fact_cursor(last.created_at, last.fact_id) if more and last else None)

    def subjects(self, tenant: str, user_id: str) -> list[str]:
        return sorted({f.subject for f in self._all(tenant, user_id) if f.status == "active"})

    def delete(self, tenant: str, user_id: str, fact_id: str) -> bool:
        with store_errors():
            response = self.client.delete_item(
                TableName=self.table_name, Key=fact_key(tenant, user_id, fact_id), ReturnValues="ALL_OLD"
            )
        return bool(response.get("Attributes"))

    def delete_user(self, tenant: str, user_id: str) -> int:
        with store_errors():
            keys = list(query_keys(self.client, self.table_name, facts_pk(tenant, user_id)))
            batch_delete(self.client, self.table_name, keys, self._sleep)
        return len(keys)

    def _all(self, tenant: str, user_id: str) -> Iterator[Fact]:
        request: dict[str, Any] = {
            "TableName": self.table_name, "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": facts_pk(tenant, user_id)}}, "ConsistentRead": True,
        }
        with store_errors():
            while True:
                response = self.client.query(**request)
                for item in response.get("Items", []):
                    yield item_to_fact(item)
                if "LastEvaluatedKey" not in response:
                    return
                request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
