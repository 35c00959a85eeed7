"""The item store on DynamoDB, in the tenant's single table.

Keys (the table's `pk`/`sk`): pk `T#{tenant}#U#{user}#ITEMS` (an agent's: `#A#{agent}#ITEMS`),
sk `N#{labels joined by \\x1f}\\x1e{key}`. One owner's items are one partition: a listing or the
namespaces read it whole (an owner's key-value memory is small next to the 10 GB partition limit)
and order it by `updatedAt` in memory. The value is kept as JSON text, so floats and nesting
round-trip exactly. `put` reads the previous `createdAt` and writes in one conditional-free update.

An expiring item carries `expiresAt` (exact) and the table's TTL attribute `ttl` (whole epoch seconds,
rounded up), so DynamoDB deletes it some time after it expired; until then every read given a `now`
skips it.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentmem.adapters.aws.dynamodb_table import DynamoDbStore, DynamoDbTable, from_attributes
from agentmem.ports.items import Item, OwnerKind

# The tenant table's TTL attribute (infra/constructs/table.py).
TTL_ATTRIBUTE = "ttl"

LABEL_SEP = "\x1f"
KEY_SEP = "\x1e"


def items_pk(tenant: str, owner_kind: OwnerKind, owner_id: str) -> str:
    return f"T#{tenant}#{'U' if owner_kind == 'users' else 'A'}#{owner_id}#ITEMS"


def item_sk(namespace: Sequence[str], key: str) -> str:
    return f"N#{LABEL_SEP.join(namespace)}{KEY_SEP}{key}"


def _item(row: Mapping[str, Any]) -> Item:
    v = from_attributes(row)
    namespace = tuple(v["namespace"].split(LABEL_SEP)) if v["namespace"] else ()
    kind: OwnerKind = "users" if v["ownerKind"] == "users" else "agents"
    expires = v.get("expiresAt")
    ttl = v.get("ttlMinutes")
    return Item(v["tenant"], kind, v["ownerId"], namespace, v["key"], json.loads(v["value"]),
                float(v["createdAt"]), float(v["updatedAt"]),
                None if expires is None else float(expires), None if ttl is None else float(ttl))


def _live(items: list[Item], now: float | None) -> list[Item]:
    return [item for item in items if not item.expired(now)]


def _expiry_values(expires_at: float) -> dict[str, Any]:
    return {":expires": {"N": repr(expires_at)}, ":ttl": {"N": str(math.ceil(expires_at))}}


class DynamoDbItemStore(DynamoDbStore):
    """ItemStore on the tenant's DynamoDB table (keys in the module docstring)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table = DynamoDbTable(table_name, "store", client, sleep)

    def _key(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str
    ) -> dict[str, Any]:
        return {"pk": {"S": items_pk(tenant, owner_kind, owner_id)}, "sk": {"S": item_sk(namespace, key)}}

    def put(self, item: Item) -> Item:
        key = self._key(item.tenant, item.owner_kind, item.owner_id, item.namespace, item.key)
        values: dict[str, Any] = {
            ":type": {"S": "item"}, ":tenant": {"S": item.tenant}, ":kind": {"S": item.owner_kind},
            ":owner": {"S": item.owner_id}, ":ns": {"S": LABEL_SEP.join(item.namespace)},
            ":key": {"S": item.key}, ":value": {"S": json.dumps(item.value, sort_keys=True)},
            ":at": {"N": repr(item.updated_at)},
        }
        update = (
            "SET #type = :type, tenant = :tenant, ownerKind = :kind, ownerId = :owner, #ns = :ns, #key = :key, "
            "#value = :value, updatedAt = :at, createdAt = if_not_exists(createdAt, :at)"
        )
        if item.expires_at is not None and item.ttl_minutes is not None:
            update += ", expiresAt = :expires, #ttl = :ttl, ttlMinutes = :minutes"
            values |= {**_expiry_values(item.expires_at), ":minutes": {"N": repr(item.ttl_minutes)}}
        else:
            update += " REMOVE expiresAt, #ttl, ttlMinutes"
        with self.table.errors():
            answer = self.client.update_item(
                TableName=self.table_name, Key=key, ReturnValues="ALL_NEW", UpdateExpression=update,
                ExpressionAttributeNames={"#type": "type", "#ns": "namespace", "#key": "key", "#value": "value",
                                          "#ttl": TTL_ATTRIBUTE},
                ExpressionAttributeValues=values,
            )
        return _item(answer["Attributes"])

    def get(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str,
        *, now: float | None = None,
    ) -> Item | None:
        with self.table.errors():
            row = self.table.get(self._key(tenant, owner_kind, owner_id, namespace, key))
        found = _live([_item(row)], now) if row else []
        return found[0] if found else None

    def get_many(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, ids: Sequence[tuple[tuple[str, ...], str]],
        *, now: float | None = None,
    ) -> list[Item]:
        keys = [self._key(tenant, owner_kind, owner_id, ns, key) for ns, key in dict.fromkeys(ids)]
        with self.table.errors():
            return _live([_item(row) for row in self.table.batch_get(keys)], now)

    def set_expiry(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str, expires_at: float
    ) -> None:
        # An item deleted meanwhile has nothing to refresh (the condition keeps it from coming back).
        with self.table.errors(), contextlib.suppress(self.client.exceptions.ConditionalCheckFailedException):
            self.client.update_item(
                TableName=self.table_name, Key=self._key(tenant, owner_kind, owner_id, namespace, key),
                UpdateExpression="SET expiresAt = :expires, #ttl = :ttl", ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#ttl": TTL_ATTRIBUTE},
                ExpressionAttributeValues=_expiry_values(expires_at),
            )

    def delete(self, tenant: str, owner_kind: OwnerKind, owner_id: str, namespace: Sequence[str], key: str) -> bool:
        with self.table.errors():
            answer = self.client.delete_item(
                TableName=self.table_name, Key=self._key(tenant, owner_kind, owner_id, namespace, key),
                ReturnValues="ALL_OLD",
            )
        return "Attributes" in answer

    def _rows(self, tenant: str, owner_kind: OwnerKind, owner_id: str, sk_prefix: str = "N#") -> list[Item]:
        with self.table.errors():
            return [_item(row) for row in self.table.query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={
                    ":pk": {"S": items_pk(tenant, owner_kind, owner_id)}, ":prefix": {"S": sk_prefix},
                },
            )]

    def list_items(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, prefix: Sequence[str], *, limit: int, offset: int,
        now: float | None = None,
    ) -> list[Item]:
        prefix = tuple(prefix)
        rows = _live(self._rows(tenant, owner_kind, owner_id, "N#" + LABEL_SEP.join(prefix)), now)
        kept = [i for i in rows if i.namespace[: len(prefix)] == prefix]
        kept.sort(key=lambda i: (-i.updated_at, i.namespace, i.key))
        return kept[offset : offset + limit]

    def namespaces(
        self, tenant: str, owner_kind: OwnerKind, owner_id: str, *, now: float | None = None
    ) -> list[tuple[str, ...]]:
        # Sorted by the joined text, as SQLite does, so both adapters answer in the same order.
        found = {i.namespace for i in _live(self._rows(tenant, owner_kind, owner_id), now)}
        return sorted(found, key=LABEL_SEP.join)

    def delete_owner(self, tenant: str, owner_kind: OwnerKind, owner_id: str) -> int:
        with self.table.errors():
            keys = self.table.keys_with_prefix(items_pk(tenant, owner_kind, owner_id))
            self.table.batch_delete(keys)
        return len(keys)
