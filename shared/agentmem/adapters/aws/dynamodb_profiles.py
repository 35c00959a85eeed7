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

import time
from collections.abc import Callable, Mapping
from typing import Any

from botocore.exceptions import ClientError

from agentmem.adapters.aws.dynamodb_table import (
    CONDITION_FAILED,
    TRANSACTION_CONFLICT,
    DynamoDbStore,
    DynamoDbTable,
    cancellation_codes,
    error_code,
    from_attributes,
    to_attributes,
)
from agentmem.domain.errors import BackendUnavailable, Conflict
from agentmem.ports.profiles import ProfileVersion, decode_version_cursor, encode_version_cursor
from agentmem.ports.records import Page

CURRENT_SK = "CURRENT"


def profile_pk(tenant: str, user_id: str) -> str:
    return f"T#{tenant}#U#{user_id}#PROFILE"


def version_sk(version: int) -> str:
    # Fixed width, so string order is version order.
    return f"V#{version:010d}"


def profile_to_attributes(profile: ProfileVersion) -> dict[str, Any]:
    return to_attributes({
        "type": "profile", "tenant": profile.tenant, "userId": profile.user_id, "version": profile.version,
        "body": profile.body, "updatedAt": profile.updated_at, "turnCount": profile.turn_count,
        "schemaVersion": profile.schema_version, "source": profile.source, "restoredFrom": profile.restored_from,
        "consolidated": dict(profile.consolidated),
    })


def item_to_profile(item: Mapping[str, Any]) -> ProfileVersion:
    v = from_attributes(item)
    restored = v.get("restoredFrom")
    return ProfileVersion(
        tenant=v["tenant"], user_id=v["userId"], version=int(v["version"]), body=v["body"],
        updated_at=float(v["updatedAt"]), turn_count=int(v["turnCount"]), schema_version=int(v["schemaVersion"]),
        source=v["source"], restored_from=None if restored is None else int(restored),
        consolidated={thread: int(seq) for thread, seq in (v.get("consolidated") or {}).items()},
    )


class DynamoDbProfileStore(DynamoDbStore):
    """ProfileStore on the tenant's DynamoDB table (keys in the module docstring)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table = DynamoDbTable(table_name, "store", client, sleep)

    def current(self, tenant: str, user_id: str) -> ProfileVersion | None:
        with self.table.errors():
            item = self.table.get({"pk": {"S": profile_pk(tenant, user_id)}, "sk": {"S": CURRENT_SK}})
        return item_to_profile(item) if item else None

    def get_version(self, tenant: str, user_id: str, version: int) -> ProfileVersion | None:
        if version < 1:
            return None
        with self.table.errors():
            item = self.table.get({"pk": {"S": profile_pk(tenant, user_id)}, "sk": {"S": version_sk(version)}})
        return item_to_profile(item) if item else None

    def list_versions(
        self, tenant: str, user_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[ProfileVersion]:
        below = decode_version_cursor(cursor) if cursor else None
        highest = version_sk(below - 1) if below is not None else "V#9999999999"
        with self.table.errors():
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
        with self.table.errors():
            try:
                self.client.transact_write_items(TransactItems=items)
            except ClientError as exc:
                if error_code(exc) != "TransactionCanceledException":
                    raise
                reasons = cancellation_codes(exc)
                # A condition failed, or a concurrent transaction held the item: either way another
                # writer is ahead, and the caller must re-read before trying again.
                if any(r in (CONDITION_FAILED, TRANSACTION_CONFLICT) for r in reasons):
                    raise Conflict(
                        f"profile of {profile.user_id} is not at version {profile.version - 1} any more"
                    ) from None
                raise BackendUnavailable("store", f"DynamoDB transaction cancelled: {reasons}") from exc

    def delete_user(self, tenant: str, user_id: str) -> None:
        with self.table.errors():
            self.table.batch_delete(self.table.keys_with_prefix(profile_pk(tenant, user_id)))
