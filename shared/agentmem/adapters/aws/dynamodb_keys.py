"""Users' wrapped data keys on DynamoDB, in the tenant's key table: a table of their own.

Keys: pk `T#{tenant}#U#{user}`, sk `DATAKEY#{version:06d}`: `wrapped` (the KMS ciphertext blob).

Why a table of its own (infra/constructs/key_store.py): the tenant table has point-in-time
recovery, so a restore from its last 35 days would bring back a wrapped key next to the ciphertexts
it decrypts. The key table has no point-in-time recovery and no stream; it has deletion protection
(the table cannot be deleted by accident, which would make every vault value unreadable). Once
`destroy_data_keys` returns, the user's only wrapped data key is gone from the only place that ever
held it, so a backup of the tenant table taken before the erase decrypts nothing of theirs.
A re-wrap walks the tenant's keys with a scan: the whole table is this tenant's keys.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from botocore.exceptions import ClientError

from agentmem.adapters.aws.dynamodb_table import DynamoDbTable, error_code
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vault import WrappedDataKey

DATA_KEY_PREFIX = "DATAKEY#"
# The key table's schema as infra/constructs/key_store.py declares it (tests/infra checks they agree),
# as boto3 `create_table` arguments less the name: for moto and `agentmem invoke --backend moto`.
KEY_TABLE_SCHEMA: dict[str, Any] = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "AttributeDefinitions": [{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk")],
    "BillingMode": "PAY_PER_REQUEST",
}


def key_pk(tenant: str, user_id: str) -> str:
    return f"T#{tenant}#U#{user_id}"


def data_key_key(tenant: str, user_id: str, version: int) -> dict[str, Any]:
    return {"pk": {"S": key_pk(tenant, user_id)}, "sk": {"S": f"{DATA_KEY_PREFIX}{version:06d}"}}


class DynamoDbKeyStore:
    """KeyStore on the tenant's key table (see the module docstring)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table = DynamoDbTable(table_name, "keys", client, sleep)

    def get_data_key(self, tenant: str, user_id: str) -> WrappedDataKey | None:
        with self.table.errors():
            response = self.table.client.query(
                TableName=self.table.table_name, ConsistentRead=True, ScanIndexForward=False, Limit=1,
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={
                    ":pk": {"S": key_pk(tenant, user_id)}, ":prefix": {"S": DATA_KEY_PREFIX},
                },
            )
        items = response.get("Items", [])
        return _data_key(items[0]) if items else None

    def add_data_key(self, key: WrappedDataKey) -> WrappedDataKey:
        item = {
            **data_key_key(key.tenant, key.user_id, key.version),
            "tenant": {"S": key.tenant},
            "userId": {"S": key.user_id},
            "version": {"N": str(key.version)},
            "wrapped": {"B": key.wrapped},
            "createdAt": {"N": repr(key.created_at)},
        }
        with self.table.errors():
            try:
                self.table.client.put_item(
                    TableName=self.table.table_name, Item=item, ConditionExpression="attribute_not_exists(pk)"
                )
                return key
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise
            stored = self.table.get(data_key_key(key.tenant, key.user_id, key.version))
        if stored is None:  # created and erased in between: nothing to share
            raise BackendUnavailable("keys", "the user's data key changed during the request; retry")
        return _data_key(stored)

    def replace_wrapped_key(self, tenant: str, user_id: str, version: int, old: bytes, new: bytes) -> bool:
        with self.table.errors():
            try:
                self.table.client.update_item(
                    TableName=self.table.table_name, Key=data_key_key(tenant, user_id, version),
                    UpdateExpression="SET #wrapped = :new",
                    ConditionExpression="#wrapped = :old",
                    ExpressionAttributeNames={"#wrapped": "wrapped"},
                    ExpressionAttributeValues={":new": {"B": new}, ":old": {"B": old}},
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    return False
                raise
        return True

    def iter_data_keys(self, tenant: str, user_id: str | None = None) -> Iterator[WrappedDataKey]:
        with self.table.errors():
            if user_id is not None:
                items = list(self.table.query(
                    KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                    ExpressionAttributeValues={
                        ":pk": {"S": key_pk(tenant, user_id)}, ":prefix": {"S": DATA_KEY_PREFIX},
                    },
                ))
            else:
                items = list(self.table.scan(
                    FilterExpression="tenant = :tenant",
                    ExpressionAttributeValues={":tenant": {"S": tenant}},
                ))
        return iter(sorted((_data_key(item) for item in items), key=lambda k: (k.user_id, k.version)))

    def destroy_data_keys(self, tenant: str, user_id: str) -> None:
        with self.table.errors():
            self.table.batch_delete(self.table.keys_with_prefix(key_pk(tenant, user_id), DATA_KEY_PREFIX))


def _data_key(item: Mapping[str, Any]) -> WrappedDataKey:
    return WrappedDataKey(
        tenant=item["tenant"]["S"], user_id=item["userId"]["S"], version=int(item["version"]["N"]),
        wrapped=bytes(item["wrapped"]["B"]), created_at=float(item["createdAt"]["N"]),
    )
