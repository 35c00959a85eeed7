"""Feedback and lessons (memories) on DynamoDB, in the agent's partition, with their listing index.

- feedback:       pk `T#{tenant}#A#{agent}`, sk `FB#{feedback_id}`
- memory:         pk `T#{tenant}#A#{agent}`, sk `MEM#{memory_id}`,
                  gsi1pk `T#{tenant}#A#{agent}#MEM`, gsi1sk `{created_at:020.6f}#{memory_id}`, ttl
- pending marker: pk `T#{tenant}#PENDING`, sk `MEM#{agent}#{memory_id}` (while the memory is pending)
- agent registry: pk `T#{tenant}#AGENTS`, sk `A#{agent}`
- user's lesson:  pk `T#{tenant}#U#{user}#RUNS`, sk `A#{agent}#MEM#{memory_id}` (a lesson made from a run
                  of that user, beside the user's run index: what erasing the user walks)

Listing reads the sparse GSI: a deleted memory has no `gsi1pk`, so it is not in
the index at all and a page of `limit` items needs no filter. The memory keeps
`gsi1sk`, so giving it a live status again restores it with no read.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from botocore.exceptions import ClientError

from agentmem.adapters.aws.dynamodb_records import (
    DEFAULT_MAX_AGE_DAYS,
    DEFAULT_RETENTION_DAYS,
    EXPIRY_GRACE_DAYS,
    SECONDS_PER_DAY,
    DynamoDbRecords,
    agent_pk,
)
from agentmem.adapters.aws.dynamodb_runs import run_feedback_update, user_runs_pk
from agentmem.adapters.aws.dynamodb_table import (
    CONDITION_FAILED,
    error_code,
    from_attributes,
    to_attributes,
)
from agentmem.domain.errors import BackendUnavailable, Conflict, InvalidInput, NotFound
from agentmem.domain.models import Feedback, Memory, MemoryStatus
from agentmem.domain.pii import AGENT_SUBJECT_PREFIX
from agentmem.ports.records import Page

# Keys



def feedback_key(tenant: str, agent_id: str, feedback_id: str) -> dict[str, Any]:
    return {"pk": {"S": agent_pk(tenant, agent_id)}, "sk": {"S": f"FB#{feedback_id}"}}

def memory_key(tenant: str, agent_id: str, memory_id: str) -> dict[str, Any]:
    return {"pk": {"S": agent_pk(tenant, agent_id)}, "sk": {"S": f"MEM#{memory_id}"}}


def memory_list_pk(tenant: str, agent_id: str) -> str:
    return f"{agent_pk(tenant, agent_id)}#MEM"


def memory_list_sk(created_at: float, memory_id: str) -> str:
    # Fixed width, so string order is time order; the id breaks ties like the local store.
    return f"{created_at:020.6f}#{memory_id}"


def pending_key(tenant: str, agent_id: str, memory_id: str) -> dict[str, Any]:
    return {"pk": {"S": f"T#{tenant}#PENDING"}, "sk": {"S": f"MEM#{agent_id}#{memory_id}"}}


def user_memory_key(tenant: str, user_id: str, agent_id: str, memory_id: str) -> dict[str, Any]:
    return {"pk": {"S": user_runs_pk(tenant, user_id)}, "sk": {"S": f"A#{agent_id}#MEM#{memory_id}"}}


def agent_registry_key(tenant: str, agent_id: str) -> dict[str, Any]:
    return {"pk": {"S": f"T#{tenant}#AGENTS"}, "sk": {"S": f"A#{agent_id}"}}


# Records <-> items


def _float(value: Any) -> float | None:
    return None if value is None else float(value)



def feedback_to_item(feedback: Feedback, *, retention_days: int = DEFAULT_RETENTION_DAYS) -> dict[str, Any]:
    return {
        **feedback_key(feedback.tenant, feedback.agent_id, feedback.feedback_id),
        **to_attributes(
            {
                "type": "feedback",
                "tenant": feedback.tenant,
                "agentId": feedback.agent_id,
                "runId": feedback.run_id,
                "feedbackId": feedback.feedback_id,
                "rating": feedback.rating,
                "comment": feedback.comment,
                "createdAt": feedback.created_at,
                "memoryId": feedback.memory_id,
                "idempotencyKey": feedback.idempotency_key,
                "requestHash": feedback.request_hash,
                "ttl": int(feedback.created_at + retention_days * SECONDS_PER_DAY),
            }
        ),
    }


def item_to_feedback(item: Mapping[str, Any]) -> Feedback:
    v = from_attributes(item)
    return Feedback(
        tenant=v["tenant"],
        agent_id=v["agentId"],
        run_id=v["runId"],
        feedback_id=v["feedbackId"],
        rating=v["rating"],
        comment=v.get("comment"),
        created_at=float(v["createdAt"]),
        memory_id=v["memoryId"],
        idempotency_key=v.get("idempotencyKey"),
        request_hash=v.get("requestHash"),
    )


def memory_to_item(memory: Memory, *, max_age_days: int = DEFAULT_MAX_AGE_DAYS) -> dict[str, Any]:
    listed = memory.status != "deleted"
    return {
        **memory_key(memory.tenant, memory.agent_id, memory.memory_id),
        **to_attributes(
            {
                "type": "memory",
                "tenant": memory.tenant,
                "agentId": memory.agent_id,
                "memoryId": memory.memory_id,
                "runId": memory.run_id,
                "feedbackId": memory.feedback_id,
                "rating": memory.rating,
                "comment": memory.comment,
                "digest": memory.digest,
                "importance": float(memory.importance),
                "createdAt": memory.created_at,
                "status": memory.status,
                "injectedCount": memory.injected_count,
                "updatedAt": memory.updated_at,
                "commentVector": memory.comment_vector,
                "subject": memory.subject,
                "groupId": memory.group_id,
                "gsi1pk": memory_list_pk(memory.tenant, memory.agent_id) if listed else None,
                "gsi1sk": memory_list_sk(memory.created_at, memory.memory_id),
                "ttl": int(memory.created_at + (max_age_days + EXPIRY_GRACE_DAYS) * SECONDS_PER_DAY),
            }
        ),
    }


def item_to_memory(item: Mapping[str, Any]) -> Memory:
    v = from_attributes(item)
    return Memory(
        tenant=v["tenant"],
        agent_id=v["agentId"],
        memory_id=v["memoryId"],
        run_id=v["runId"],
        feedback_id=v["feedbackId"],
        rating=v["rating"],
        comment=v.get("comment"),
        digest=v["digest"],
        importance=float(v["importance"]),
        created_at=float(v["createdAt"]),
        status=v["status"],
        injected_count=int(v.get("injectedCount", 0)),
        updated_at=_float(v.get("updatedAt")),
        comment_vector=bytes(v["commentVector"]) if "commentVector" in v else None,
        subject=v.get("subject"),
        group_id=v.get("groupId"),
    )


# Cursors


_CURSOR_KEYS = ("pk", "sk", "gsi1pk", "gsi1sk")


def encode_cursor(last_key: Mapping[str, Any]) -> str:
    """An opaque cursor: urlsafe base64 of the JSON of DynamoDB's LastEvaluatedKey (string keys only)."""
    plain = {name: last_key[name]["S"] for name in _CURSOR_KEYS}
    raw = json.dumps(plain, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *, expected_list_pk: str) -> dict[str, Any]:
    """The ExclusiveStartKey a cursor stands for; InvalidInput unless it is one of this listing's own."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        plain = json.loads(raw)
        valid = (
            isinstance(plain, dict)
            and set(plain) == set(_CURSOR_KEYS)
            and all(isinstance(plain[k], str) for k in _CURSOR_KEYS)
            and plain["gsi1pk"] == expected_list_pk
            and plain["pk"] + "#MEM" == expected_list_pk
        )
    except (ValueError, TypeError, binascii.Error):
        valid = False
    if not valid:
        raise InvalidInput("invalid cursor", [{"field": "cursor", "message": "not a cursor this API returned"}])
    return {name: {"S": plain[name]} for name in _CURSOR_KEYS}


class DynamoDbLessonRecords(DynamoDbRecords):
    """The feedback-and-lessons half of the record store."""

    # Agents known to be in the registry: saves a write per feedback in a warm container.
    _registered_agents: set[tuple[str, str]]

    def add_feedback(self, feedback: Feedback, memory: Memory) -> tuple[Feedback, bool]:
        tenant, agent_id = feedback.tenant, feedback.agent_id
        with self.table.errors():
            # Registered before the transaction, outside it: every feedback of an agent would
            # otherwise write the same item and concurrent transactions would cancel each other.
            # A failed transaction leaves at worst an agent listed with no memory yet.
            self._register_agent(tenant, agent_id)
            items: list[dict[str, Any]] = [
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": feedback_to_item(feedback, retention_days=self.retention_days),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": memory_to_item(memory, max_age_days=self.max_age_days),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {
                    "Update": {
                        "TableName": self.table_name,
                        **run_feedback_update(
                            tenant, agent_id, feedback.run_id, feedback.feedback_id, feedback.rating
                        ),
                    }
                },
            ]
            if memory.status == "pending":
                items.append({"Put": {"TableName": self.table_name, "Item": self._pending_marker(memory)}})
            if memory.subject and not memory.subject.startswith(AGENT_SUBJECT_PREFIX):
                items.append({"Put": {"TableName": self.table_name, "Item": self._user_memory_item(memory)}})
            reasons = self._transact(items)
            if not reasons:
                return feedback, True
            feedback_exists, memory_exists, run_missing = (reasons + ["None"] * 3)[:3]
            if feedback_exists == CONDITION_FAILED:
                stored = self.table.get(feedback_key(tenant, agent_id, feedback.feedback_id))
                if stored is None:  # deleted between the two calls: nothing sensible to return
                    raise Conflict(f"feedback {feedback.feedback_id} changed while being written")
                return item_to_feedback(stored), False
            if run_missing == CONDITION_FAILED:
                raise NotFound(f"run {feedback.run_id} not found")
            if memory_exists == CONDITION_FAILED:
                raise Conflict(f"memory {memory.memory_id} exists already")
            raise BackendUnavailable("store", f"DynamoDB transaction cancelled: {reasons}")

    def get_memory(self, tenant: str, agent_id: str, memory_id: str) -> Memory | None:
        with self.table.errors():
            item = self.table.get(memory_key(tenant, agent_id, memory_id))
        return item_to_memory(item) if item else None

    def get_memories(self, tenant: str, agent_id: str, memory_ids: Sequence[str]) -> list[Memory]:
        # BatchGetItem rejects a request that names one key twice.
        unique_ids = list(dict.fromkeys(memory_ids))
        with self.table.errors():
            items = self.table.batch_get([memory_key(tenant, agent_id, m) for m in unique_ids])
        return [item_to_memory(item) for item in items]

    def list_memories(self, tenant: str, agent_id: str, *, limit: int, cursor: str | None = None) -> Page[Memory]:
        list_pk = memory_list_pk(tenant, agent_id)
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "IndexName": "gsi1",
            "KeyConditionExpression": "gsi1pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": list_pk}},
            "ScanIndexForward": False,
            # One more than asked, so the last page is known to be the last (no empty page after it).
            "Limit": limit + 1,
        }
        if cursor:
            request["ExclusiveStartKey"] = decode_cursor(cursor, expected_list_pk=list_pk)
        with self.table.errors():
            response = self.client.query(**request)
        items = response.get("Items", [])
        page = items[:limit]
        # DynamoDB may also stop early at 1 MB (LastEvaluatedKey with fewer items): more may follow.
        more = len(items) > limit or "LastEvaluatedKey" in response
        next_cursor = encode_cursor(page[-1]) if page and more else None
        return Page([item_to_memory(item) for item in page], next_cursor)

    def list_memories_created_before(
        self, tenant: str, agent_id: str, before: float, *, limit: int
    ) -> list[Memory]:
        with self.table.errors():
            response = self.client.query(
                TableName=self.table_name, IndexName="gsi1", ScanIndexForward=True, Limit=limit,
                KeyConditionExpression="gsi1pk = :pk AND gsi1sk < :before",
                ExpressionAttributeValues={
                    ":pk": {"S": memory_list_pk(tenant, agent_id)},
                    ":before": {"S": memory_list_sk(before, "")},
                },
            )
        return [item_to_memory(item) for item in response.get("Items", [])]

    def purge_runs_created_before(self, tenant: str, before: float) -> int:
        # Every run and feedback item carries `ttl`: DynamoDB's TTL deletes them, with no read here.
        return 0

    def list_agents_with_memories(self, tenant: str) -> list[str]:
        agents = []
        with self.table.errors():
            for item in self.table.query(
                KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": f"T#{tenant}#AGENTS"}}
            ):
                agents.append(item["agentId"]["S"])
        return sorted(agents)

    def update_memory(
        self,
        tenant: str,
        agent_id: str,
        memory_id: str,
        *,
        importance: float | None = None,
        status: MemoryStatus | None = None,
        comment_vector: bytes | None = None,
        group_id: str | None = None,
    ) -> Memory:
        sets = ["updatedAt = :now"]
        removes = []
        values: dict[str, Any] = {":now": {"N": repr(time.time())}}
        names: dict[str, str] = {}
        if importance is not None:
            sets.append("importance = :importance")
            values[":importance"] = {"N": repr(float(importance))}
        if comment_vector is not None:
            sets.append("commentVector = :commentVector")
            values[":commentVector"] = {"B": comment_vector}
        if group_id is not None:
            sets.append("groupId = :groupId")
            values[":groupId"] = {"S": group_id}
        if status is not None:
            sets.append("#status = :status")
            names["#status"] = "status"
            values[":status"] = {"S": status}
            if status == "deleted":
                removes.append("gsi1pk")
            else:
                sets.append("gsi1pk = :listpk")
                values[":listpk"] = {"S": memory_list_pk(tenant, agent_id)}
        expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
        update: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": memory_key(tenant, agent_id, memory_id),
            "UpdateExpression": expression,
            # A deleted memory is final: no later write (an indexer racing a delete) revives it.
            "ConditionExpression": "attribute_exists(pk) AND #status <> :deleted",
            "ExpressionAttributeValues": {**values, ":deleted": {"S": "deleted"}},
            "ExpressionAttributeNames": {**names, "#status": "status"},
        }
        with self.table.errors():
            if status is None:
                try:
                    response = self.client.update_item(**update, ReturnValues="ALL_NEW")
                except ClientError as exc:
                    if error_code(exc) == "ConditionalCheckFailedException":
                        raise NotFound(f"memory {memory_id} not found") from None
                    raise
                return item_to_memory(response["Attributes"])
            # A status change moves the pending marker in the same transaction, so the
            # "waiting to be indexed" listing never disagrees with the memory itself.
            marker = pending_key(tenant, agent_id, memory_id)
            marker_op = (
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": {**marker, "agentId": {"S": agent_id}, "memoryId": {"S": memory_id}},
                    }
                }
                if status == "pending"
                else {"Delete": {"TableName": self.table_name, "Key": marker}}
            )
            reasons = self._transact([{"Update": update}, marker_op])
            if reasons:
                if reasons[0] == CONDITION_FAILED:
                    raise NotFound(f"memory {memory_id} not found")
                raise BackendUnavailable("store", f"DynamoDB transaction cancelled: {reasons}")
            item = self.table.get(memory_key(tenant, agent_id, memory_id))
        if item is None:
            raise NotFound(f"memory {memory_id} not found")
        return item_to_memory(item)

    def record_injections(self, tenant: str, agent_id: str, memory_ids: Sequence[str]) -> None:
        with self.table.errors():
            for memory_id, times in Counter(memory_ids).items():
                try:
                    self.client.update_item(
                        TableName=self.table_name,
                        Key=memory_key(tenant, agent_id, memory_id),
                        UpdateExpression="ADD injectedCount :n",
                        ConditionExpression="attribute_exists(pk)",
                        ExpressionAttributeValues={":n": {"N": str(times)}},
                    )
                except ClientError as exc:
                    # A memory deleted (or expired) since it was retrieved: nothing to count.
                    if error_code(exc) != "ConditionalCheckFailedException":
                        raise

    def list_memories_of_subject(self, tenant: str, subject: str) -> list[Memory]:
        with self.table.errors():
            index = self.table.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": user_runs_pk(tenant, subject)}},
            )
            keys = [memory_key(tenant, i["agentId"]["S"], i["memoryId"]["S"]) for i in index if "memoryId" in i]
            memories = [item_to_memory(item) for item in self.table.batch_get(keys)] if keys else []
        return [m for m in memories if m.status != "deleted"]

    def forget_run_text(self, tenant: str, agent_id: str, memory_id: str, digest: str) -> None:
        update = {
            "TableName": self.table_name,
            "Key": memory_key(tenant, agent_id, memory_id),
            "UpdateExpression": "SET digest = :digest, #status = :pending, updatedAt = :now REMOVE subject",
            "ConditionExpression": "attribute_exists(pk) AND #status <> :deleted",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {
                ":digest": {"S": digest}, ":pending": {"S": "pending"}, ":deleted": {"S": "deleted"},
                ":now": {"N": repr(time.time())},
            },
        }
        marker = pending_key(tenant, agent_id, memory_id)
        put_marker = {"Put": {"TableName": self.table_name,
                              "Item": {**marker, "agentId": {"S": agent_id}, "memoryId": {"S": memory_id}}}}
        with self.table.errors():
            reasons = self._transact([{"Update": update}, put_marker])
        if reasons and reasons[0] != CONDITION_FAILED:
            raise BackendUnavailable("store", f"DynamoDB transaction cancelled: {reasons}")

    def list_memories_by_status(self, tenant: str, status: MemoryStatus, *, limit: int) -> list[Memory]:
        with self.table.errors():
            if status == "pending":
                found = self._pending_memories(tenant, limit)
            else:
                found = self._scan_memories_by_status(tenant, status, limit)
        return sorted(found, key=lambda m: (m.created_at, m.memory_id))[:limit]

    # Internals

    def _pending_marker(self, memory: Memory) -> dict[str, Any]:
        return {
            **pending_key(memory.tenant, memory.agent_id, memory.memory_id),
            **to_attributes(
                {
                    "agentId": memory.agent_id,
                    "memoryId": memory.memory_id,
                    "ttl": int(memory.created_at + (self.max_age_days + EXPIRY_GRACE_DAYS) * SECONDS_PER_DAY),
                }
            ),
        }

    def _user_memory_item(self, memory: Memory) -> dict[str, Any]:
        assert memory.subject is not None
        return {
            **user_memory_key(memory.tenant, memory.subject, memory.agent_id, memory.memory_id),
            **to_attributes({
                "agentId": memory.agent_id,
                "memoryId": memory.memory_id,
                "ttl": int(memory.created_at + (self.max_age_days + EXPIRY_GRACE_DAYS) * SECONDS_PER_DAY),
            }),
        }

    def _register_agent(self, tenant: str, agent_id: str) -> None:
        if (tenant, agent_id) in self._registered_agents:
            return
        self.client.put_item(
            TableName=self.table_name,
            Item={**agent_registry_key(tenant, agent_id), "agentId": {"S": agent_id}},
        )
        self._registered_agents.add((tenant, agent_id))

    def _pending_memories(self, tenant: str, limit: int) -> list[Memory]:
        found: list[Memory] = []
        if limit <= 0:
            return found
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": f"T#{tenant}#PENDING"}},
            "ConsistentRead": True,
            "Limit": max(limit, 1),
        }
        for response in self.table.pages("query", request):
            markers = response.get("Items", [])
            keys = [memory_key(tenant, m["agentId"]["S"], m["memoryId"]["S"]) for m in markers]
            memories = [item_to_memory(item) for item in self.table.batch_get(keys)]
            # A marker outlives its memory only when the memory expired (TTL): skip it.
            found.extend(m for m in memories if m.status == "pending")
            if len(found) >= limit:
                break
        return found

    def _scan_memories_by_status(self, tenant: str, status: MemoryStatus, limit: int) -> list[Memory]:
        # Only "pending" has an index; the other statuses are for rare admin work, so a
        # filtered scan of the table (paid in full) is acceptable there.
        items = self.table.scan(
            FilterExpression="begins_with(pk, :prefix) AND #type = :memory AND #status = :status",
            ExpressionAttributeNames={"#type": "type", "#status": "status"},
            ExpressionAttributeValues={
                ":prefix": {"S": f"T#{tenant}#A#"},
                ":memory": {"S": "memory"},
                ":status": {"S": status},
            },
        )
        return [item_to_memory(item) for item in items]
