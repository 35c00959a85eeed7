"""The PII vault on DynamoDB, in the tenant's single table (the data keys are in the key table).

Keys:

- token counter: pk `T#{tenant}#U#{user}#VAULT`, sk `CTR#{thread}`: `lastCounter` (atomic ADD)
- entry:         pk `T#{tenant}#U#{user}#VAULT`, sk `TOK#{token}`: ciphertext, type, thread, fingerprint
- value index:   pk `T#{tenant}#U#{user}#VAULT`, sk `FP#{thread}#{fingerprint}`: the token of that value

An entry and its value-index item are written in one transaction, each only where none exists, so
a value gets one token per scope even when two writers mask it at once. Erasing the user destroys
the data keys first (dynamodb_keys.py), then deletes the whole `#VAULT` partition.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentmem.adapters.aws.dynamodb_table import CONDITION_FAILED, TRANSACTION_CONFLICT, DynamoDbTable
from agentmem.adapters.aws.dynamodb_transcripts import BACKOFF_BASE_SECONDS, BACKOFF_CAP_SECONDS
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vault import VaultEntry

MAX_ENTRY_ATTEMPTS = 4


def vault_pk(tenant: str, user_id: str) -> str:
    return f"T#{tenant}#U#{user_id}#VAULT"


def entry_key(tenant: str, user_id: str, token: str) -> dict[str, Any]:
    return {"pk": {"S": vault_pk(tenant, user_id)}, "sk": {"S": f"TOK#{token}"}}


def value_index_key(tenant: str, user_id: str, thread_id: str, fingerprint: str) -> dict[str, Any]:
    return {"pk": {"S": vault_pk(tenant, user_id)}, "sk": {"S": f"FP#{thread_id}#{fingerprint}"}}


def counter_key(tenant: str, user_id: str, thread_id: str) -> dict[str, Any]:
    return {"pk": {"S": vault_pk(tenant, user_id)}, "sk": {"S": f"CTR#{thread_id}"}}


class DynamoDbVaultStore:
    """VaultStore on the tenant's DynamoDB table (see the module docstring for the keys)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table = DynamoDbTable(
            table_name, "vault", client, sleep, backoff_base=BACKOFF_BASE_SECONDS, backoff_cap=BACKOFF_CAP_SECONDS
        )

    # Tokens and entries

    def tokens_for_fingerprints(
        self, tenant: str, user_id: str, thread_id: str, fingerprints: Sequence[str]
    ) -> dict[str, str]:
        keys = [value_index_key(tenant, user_id, thread_id, fp) for fp in dict.fromkeys(fingerprints)]
        with self.table.errors():
            items = self.table.batch_get(keys)
        return {item["fingerprint"]["S"]: item["token"]["S"] for item in items}

    def allocate_counters(self, tenant: str, user_id: str, thread_id: str, count: int) -> list[int]:
        if count <= 0:
            return []
        with self.table.errors():
            response = self.table.client.update_item(
                TableName=self.table.table_name, Key=counter_key(tenant, user_id, thread_id),
                UpdateExpression="ADD lastCounter :n",
                ExpressionAttributeValues={":n": {"N": str(count)}},
                ReturnValues="UPDATED_NEW",
            )
        last = int(response["Attributes"]["lastCounter"]["N"])
        return list(range(last - count + 1, last + 1))

    def last_counter(self, tenant: str, user_id: str, thread_id: str) -> int:
        with self.table.errors():
            item = self.table.get(counter_key(tenant, user_id, thread_id))
        return int(item["lastCounter"]["N"]) if item else 0

    def value_index(self, tenant: str, user_id: str, thread_id: str) -> dict[str, str]:
        # One query of the partition's value-index items (about 150 bytes each), page after page.
        with self.table.errors():
            items = self.table.query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={
                    ":pk": {"S": vault_pk(tenant, user_id)}, ":prefix": {"S": f"FP#{thread_id}#"},
                },
                ProjectionExpression="sk, fingerprint, #token",
                ExpressionAttributeNames={"#token": "token"},
            )
            prefix_length = len(f"FP#{thread_id}#")
            # A scope named like this one plus "#..." shares the prefix: its sort keys hold a "#" more.
            return {item["fingerprint"]["S"]: item["token"]["S"] for item in items
                    if "#" not in item["sk"]["S"][prefix_length:]}

    def add_entry(self, entry: VaultEntry) -> str:
        index_item = {
            **value_index_key(entry.tenant, entry.user_id, entry.thread_id, entry.fingerprint),
            "fingerprint": {"S": entry.fingerprint},
            "token": {"S": entry.token},
        }
        entry_item = {
            **entry_key(entry.tenant, entry.user_id, entry.token),
            "type": {"S": "vault"},
            "threadId": {"S": entry.thread_id},
            "entityType": {"S": entry.entity_type},
            "fingerprint": {"S": entry.fingerprint},
            "ciphertext": {"B": entry.ciphertext},
            "keyVersion": {"N": str(entry.key_version)},
            "createdAt": {"N": repr(entry.created_at)},
        }
        table = self.table
        reasons: list[str] = []
        with table.errors():
            for attempt in range(MAX_ENTRY_ATTEMPTS):
                reasons = table.transact([
                    {"Put": {"TableName": table.table_name, "Item": index_item,
                             "ConditionExpression": "attribute_not_exists(pk)"}},
                    {"Put": {"TableName": table.table_name, "Item": entry_item,
                             "ConditionExpression": "attribute_not_exists(pk)"}},
                ])
                if not reasons:
                    return entry.token
                if reasons[0] == CONDITION_FAILED:
                    index_key = value_index_key(entry.tenant, entry.user_id, entry.thread_id, entry.fingerprint)
                    winner = table.get(index_key)
                    if winner is not None:
                        return str(winner["token"]["S"])
                if TRANSACTION_CONFLICT not in reasons:
                    break
                table.back_off(attempt)
        raise BackendUnavailable("vault", f"vault entry not stored: {reasons}")

    def get_entries(self, tenant: str, user_id: str, tokens: Sequence[str]) -> list[VaultEntry]:
        keys = [entry_key(tenant, user_id, token) for token in dict.fromkeys(tokens)]
        with self.table.errors():
            items = self.table.batch_get(keys)
        return [_entry(tenant, user_id, item) for item in items]

    def delete_user(self, tenant: str, user_id: str) -> None:
        with self.table.errors():
            self.table.batch_delete(self.table.keys_with_prefix(vault_pk(tenant, user_id)))


def _entry(tenant: str, user_id: str, item: Mapping[str, Any]) -> VaultEntry:
    return VaultEntry(
        tenant=tenant, user_id=user_id, thread_id=item["threadId"]["S"],
        token=item["sk"]["S"].removeprefix("TOK#"), entity_type=item["entityType"]["S"],
        fingerprint=item["fingerprint"]["S"], ciphertext=bytes(item["ciphertext"]["B"]),
        key_version=int(item["keyVersion"]["N"]), created_at=float(item["createdAt"]["N"]),
    )
