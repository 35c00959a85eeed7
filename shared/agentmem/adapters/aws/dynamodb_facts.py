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

from botocore.exceptions import ClientError

from agentmem.adapters.aws.dynamodb_table import (
    CONDITION_FAILED,
    DynamoDbStore,
    DynamoDbTable,
    error_code,
    from_attributes,
    to_attributes,
)
from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.facts import Fact
from agentmem.ports.facts import decode_fact_cursor, encode_fact_cursor
from agentmem.ports.records import Page

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


class DynamoDbFactStore(DynamoDbStore):
    """FactStore on the tenant's DynamoDB table (keys in the module docstring)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table = DynamoDbTable(table_name, "store", client, sleep)

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
            with self.table.errors():
                reasons = self.table.transact(items)
            if not reasons:
                return True
            reasons = (reasons + ["None"] * len(items))[: len(items)]
            if reasons[0] == CONDITION_FAILED:
                return False
            # Facts no longer active (superseded or deleted meanwhile) are left alone, as the port says.
            olds = [old for old, r in zip(olds, reasons[1:], strict=True) if r != CONDITION_FAILED]
            if attempt + 1 < MAX_ADD_ATTEMPTS:
                self.table.back_off(attempt)
        raise BackendUnavailable("store", "DynamoDB fact transaction kept conflicting with concurrent writers")

    def get(self, tenant: str, user_id: str, fact_id: str) -> Fact | None:
        with self.table.errors():
            item = self.table.get(fact_key(tenant, user_id, fact_id))
        return item_to_fact(item) if item else None

    def get_many(self, tenant: str, user_id: str, fact_ids: Sequence[str]) -> list[Fact]:
        keys = [fact_key(tenant, user_id, f) for f in dict.fromkeys(fact_ids)]
        with self.table.errors():
            found = self.table.batch_get(keys)
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

    def set_text(self, tenant: str, user_id: str, fact_id: str, text: str) -> Fact | None:
        try:
            with self.table.errors():
                response = self.client.update_item(
                    TableName=self.table_name, Key=fact_key(tenant, user_id, fact_id),
                    UpdateExpression="SET #text = :text", ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeNames={"#text": "text"}, ExpressionAttributeValues={":text": {"S": text}},
                    ReturnValues="ALL_NEW",
                )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return None
            raise
        return item_to_fact(response["Attributes"])

    def delete(self, tenant: str, user_id: str, fact_id: str) -> bool:
        with self.table.errors():
            response = self.client.delete_item(
                TableName=self.table_name, Key=fact_key(tenant, user_id, fact_id), ReturnValues="ALL_OLD"
            )
        return bool(response.get("Attributes"))

    def delete_user(self, tenant: str, user_id: str) -> int:
        with self.table.errors():
            keys = self.table.keys_with_prefix(facts_pk(tenant, user_id))
            self.table.batch_delete(keys)
        return len(keys)

    def _all(self, tenant: str, user_id: str) -> Iterator[Fact]:
        with self.table.errors():
            for item in self.table.query(
                KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": facts_pk(tenant, user_id)}}
            ):
                yield item_to_fact(item)
