"""Transcripts on DynamoDB, in the tenant's single table.

Keys (`#` cannot occur in an identifier, so no crafted id reaches another partition):

- thread:  pk `T#{tenant}#U#{user}`, sk `THREAD#{thread}`: `lastSeq`, the thread's sequence counter
- turn:    pk `T#{tenant}#U#{user}#TH#{thread}`, sk `TURN#{seq:012d}`
- answer of a keyed append: pk as the turns, sk `APPEND#{sha256 of the Idempotency-Key}`: `fingerprint`,
  `firstSeq`, `lastSeq`, `createdAt`, and `ttl` (DynamoDB deletes it after APPEND_KEY_SECONDS)
- user:    pk `T#{tenant}#USERS`, sk `U#{user}`: `createdAt`, written by the append that creates a thread
  (in its transaction) and deleted last by an erase; the users listing reads this partition in order
- append key: pk `T#{tenant}#U#{user}#TH#{thread}#KEYS`, sk `KEY#{toSeq:012d}#{sha256(key)}`: the
  Idempotency-Key of a keyed append, by the seq of its last turn (found again when its turns go)

An append is one transaction: the thread item's `lastSeq` moves from the value read to the new
one (conditionally) and every turn is put where none exists, so two writers never share a `seq`
and a failed append writes nothing. An append with an Idempotency-Key puts its answer item in the
same transaction (where none is, or only an expired one), so a request that crashed after its turns
were written is answered, sent again, with those turns: nothing is appended twice. Reading the
newest turns is a reverse query with a limit: its cost follows the turns read, not the length of
the thread.

A truncation (`truncate`) deletes the tail's turns (and the answers of the keyed appends that
stored them: sent again, such an append appends again), then moves `lastSeq` back from the value it
read to the last seq kept (conditionally: an append that slipped in meanwhile is removed too, and it
goes again), or, from seq 1, deletes the thread item last, as an erase does.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentmem.adapters.aws.dynamodb_table import CONDITION_FAILED, TRANSACTION_CONFLICT, DynamoDbTable
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.records import Page
from agentmem.ports.transcripts import (
    APPEND_KEY_SECONDS,
    AppendKey,
    NewTurn,
    StoredTurn,
    ThreadSummary,
    UserSummary,
    decode_thread_cursor,
    decode_turn_cursor,
    decode_user_cursor,
    encode_thread_cursor,
    encode_turn_cursor,
    encode_user_cursor,
    key_conflict,
    threads_after,
)

# One transaction holds at most 100 items: the thread item, the append key's item, the user item and 97 turns.
MAX_TURNS_PER_APPEND = 97
MAX_APPEND_ATTEMPTS = 8
# Appends (and the vault's entries) retry inside a conversation request: shorter waits than the record store's.
BACKOFF_BASE_SECONDS = 0.02
BACKOFF_CAP_SECONDS = 0.5


def user_pk(tenant: str, user_id: str) -> str:
    return f"T#{tenant}#U#{user_id}"


def thread_key(tenant: str, user_id: str, thread_id: str) -> dict[str, Any]:
    return {"pk": {"S": user_pk(tenant, user_id)}, "sk": {"S": f"THREAD#{thread_id}"}}


def users_pk(tenant: str) -> str:
    return f"T#{tenant}#USERS"


def user_key(tenant: str, user_id: str) -> dict[str, Any]:
    return {"pk": {"S": users_pk(tenant)}, "sk": {"S": f"U#{user_id}"}}


# Below and above every character an id may hold (`A-Z a-z 0-9 . _ : @ -`): bounds of a key range.
BELOW_ID_CHARS = "!"
ABOVE_ID_CHARS = "~"


def turns_pk(tenant: str, user_id: str, thread_id: str) -> str:
    return f"T#{tenant}#U#{user_id}#TH#{thread_id}"


def append_keys_pk(tenant: str, user_id: str, thread_id: str) -> str:
    return f"{turns_pk(tenant, user_id, thread_id)}#KEYS"


def turn_sk(seq: int) -> str:
    # Fixed width, so string order is seq order.
    return f"TURN#{seq:012d}"


def append_key_sk(key: str) -> str:
    # "APPEND#" sorts before "TURN#": a listing from TURN#... never meets these items.
    return "APPEND#" + hashlib.sha256(key.encode()).hexdigest()


class DynamoDbTranscriptStore:
    """TranscriptStore on the tenant's DynamoDB table (see the module docstring for the keys)."""

    def __init__(self, table_name: str, client: Any = None, *, sleep: Callable[[float], None] = time.sleep):
        self.table = DynamoDbTable(
            table_name, "transcripts", client, sleep, backoff_base=BACKOFF_BASE_SECONDS, backoff_cap=BACKOFF_CAP_SECONDS
        )

    def append(
        self, tenant: str, user_id: str, thread_id: str, turns: Sequence[NewTurn], created_at: float,
        *, key: AppendKey | None = None,
    ) -> list[StoredTurn]:
        if not turns:
            return []
        if len(turns) > MAX_TURNS_PER_APPEND:
            raise ValueError(f"at most {MAX_TURNS_PER_APPEND} turns per append, got {len(turns)}")
        table = self.table
        with table.errors():
            for attempt in range(MAX_APPEND_ATTEMPTS):
                if key is not None:
                    earlier = self._stored_under(tenant, user_id, thread_id, key, created_at)
                    if earlier is not None:
                        return earlier
                thread = table.get(thread_key(tenant, user_id, thread_id))
                last = int(thread["lastSeq"]["N"]) if thread else 0
                stored = [
                    StoredTurn(tenant, user_id, thread_id, last + 1 + i, t.role, t.content, t.tokens, created_at)
                    for i, t in enumerate(turns)
                ]
                items = [self._advance(stored, last), *(self._put(t) for t in stored)]
                if key is not None:
                    items.append(self._put_key(stored, key))
                if thread is None:  # a new thread: its user is listed (again, after a truncated thread)
                    items.append(self._register_user(stored[0]))
                reasons = table.transact(items, append_token(stored, key))
                if not reasons:
                    return stored
                if CONDITION_FAILED not in reasons and TRANSACTION_CONFLICT not in reasons:
                    raise BackendUnavailable("transcripts", f"DynamoDB transaction cancelled: {reasons}")
                # Another writer appended to this thread first (or, with the same key, committed it first):
                # read again and go again.
                table.back_off(attempt)
        raise BackendUnavailable("transcripts", "the thread kept changing under concurrent appends")

    def _stored_under(
        self, tenant: str, user_id: str, thread_id: str, key: AppendKey, now: float
    ) -> list[StoredTurn] | None:
        """The turns an earlier append stored under `key` (Conflict if it asked for others), or None."""
        item = self.table.get({"pk": {"S": turns_pk(tenant, user_id, thread_id)}, "sk": {"S": append_key_sk(key.key)}})
        if item is None or float(item["createdAt"]["N"]) <= now - APPEND_KEY_SECONDS:
            return None
        if item["fingerprint"]["S"] != key.fingerprint:
            raise key_conflict()
        response = self.table.client.query(
            TableName=self.table.table_name, ConsistentRead=True,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :first AND :last",
            ExpressionAttributeValues={
                ":pk": {"S": turns_pk(tenant, user_id, thread_id)},
                ":first": {"S": turn_sk(int(item["firstSeq"]["N"]))},
                ":last": {"S": turn_sk(int(item["lastSeq"]["N"]))},
            },
        )
        return [_turn(tenant, user_id, thread_id, found) for found in response.get("Items", [])]

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
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :turn)",
            "ExpressionAttributeValues": {":pk": {"S": turns_pk(tenant, user_id, thread_id)}, ":turn": {"S": "TURN#"}},
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

    def get_turns(self, tenant: str, user_id: str, keys: Sequence[tuple[str, int]]) -> list[StoredTurn]:
        if not keys:
            return []
        unique = list(dict.fromkeys(keys))
        with self.table.errors():
            items = self.table.batch_get(
                [
                    {"pk": {"S": turns_pk(tenant, user_id, thread_id)}, "sk": {"S": turn_sk(seq)}}
                    for thread_id, seq in unique
                ]
            )
        found: dict[tuple[str, int], StoredTurn] = {}
        for item in items:
            thread_id = item["pk"]["S"].removeprefix(f"{user_pk(tenant, user_id)}#TH#")
            turn = _turn(tenant, user_id, thread_id, item)
            found[(thread_id, turn.seq)] = turn
        return [found[key] for key in keys if key in found]

    def thread_exists(self, tenant: str, user_id: str, thread_id: str) -> bool:
        with self.table.errors():
            return self.table.get(thread_key(tenant, user_id, thread_id)) is not None

    def delete_user(self, tenant: str, user_id: str) -> None:
        table = self.table
        with table.errors():
            for key in table.keys_with_prefix(user_pk(tenant, user_id), "THREAD#"):
                thread_id = key["sk"]["S"].removeprefix("THREAD#")
                table.batch_delete(table.keys_with_prefix(turns_pk(tenant, user_id, thread_id)))
                table.batch_delete(table.keys_with_prefix(append_keys_pk(tenant, user_id, thread_id)))
                # The thread item goes last: an erase interrupted half-way still finds the thread again.
                table.batch_delete([key])
            # Unlisted only when every thread is gone.
            table.batch_delete([user_key(tenant, user_id)])

    def has_threads(self, tenant: str, user_id: str) -> bool:
        with self.table.errors():
            response = self.table.client.query(
                TableName=self.table.table_name, ConsistentRead=True, Limit=1, ProjectionExpression="pk",
                KeyConditionExpression="pk = :pk AND begins_with(sk, :threads)",
                ExpressionAttributeValues={":pk": {"S": user_pk(tenant, user_id)}, ":threads": {"S": "THREAD#"}},
            )
        return bool(response.get("Items"))

    def list_users(
        self, tenant: str, *, limit: int, cursor: str | None = None, prefix: str = ""
    ) -> Page[UserSummary]:
        low = f"U#{prefix}"
        if cursor:
            low = max(low, f"U#{decode_user_cursor(cursor, tenant, prefix)}{BELOW_ID_CHARS}")
        with self.table.errors():
            response = self.table.client.query(
                TableName=self.table.table_name, ConsistentRead=True, Limit=limit + 1,
                KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
                ExpressionAttributeValues={
                    ":pk": {"S": users_pk(tenant)}, ":low": {"S": low}, ":high": {"S": f"U#{prefix}{ABOVE_ID_CHARS}"},
                },
            )
        items = response.get("Items", [])
        page = [
            UserSummary(item["sk"]["S"].removeprefix("U#"), float(item["createdAt"]["N"])) for item in items[:limit]
        ]
        more = len(items) > limit or "LastEvaluatedKey" in response
        return Page(page, encode_user_cursor(tenant, prefix, page[-1].user_id) if more and page else None)

    def list_threads(
        self, tenant: str, user_id: str, *, limit: int, cursor: str | None = None
    ) -> Page[ThreadSummary]:
        after = decode_thread_cursor(cursor, tenant, user_id) if cursor else None
        # Activity order is not the key order: the user's thread items are read and sorted (one
        # query, a page per 1 MB; a thread item is small).
        with self.table.errors():
            threads = [
                ThreadSummary(item["sk"]["S"].removeprefix("THREAD#"), int(item["lastSeq"]["N"]),
                              float(item["updatedAt"]["N"]))
                for item in self.table.query(
                    KeyConditionExpression="pk = :pk AND begins_with(sk, :threads)",
                    ExpressionAttributeValues={":pk": {"S": user_pk(tenant, user_id)}, ":threads": {"S": "THREAD#"}},
                )
            ]
        ordered = threads_after(threads, after)
        page = ordered[:limit]
        more = len(ordered) > limit
        return Page(page, encode_thread_cursor(tenant, user_id, page[-1]) if more and page else None)

    def truncate(self, tenant: str, user_id: str, thread_id: str, from_seq: int) -> list[StoredTurn]:
        table = self.table
        from_seq = max(1, from_seq)
        removed: dict[int, StoredTurn] = {}
        with table.errors():
            for attempt in range(MAX_APPEND_ATTEMPTS):
                thread = table.get(thread_key(tenant, user_id, thread_id))
                last = int(thread["lastSeq"]["N"]) if thread else 0
                tail = list(table.query(
                    KeyConditionExpression="pk = :pk AND sk >= :from",
                    ExpressionAttributeValues={
                        ":pk": {"S": turns_pk(tenant, user_id, thread_id)}, ":from": {"S": turn_sk(from_seq)},
                    },
                ))  # fmt: skip
                for item in tail:
                    turn = _turn(tenant, user_id, thread_id, item)
                    removed[turn.seq] = turn
                table.batch_delete([{"pk": item["pk"], "sk": item["sk"]} for item in tail])
                keys = self._append_key_items(tenant, user_id, thread_id, from_seq)
                table.batch_delete([{"pk": item["pk"], "sk": item["sk"]} for item in keys])
                answers = table.query(
                    KeyConditionExpression="pk = :pk AND begins_with(sk, :answer)",
                    ExpressionAttributeValues={
                        ":pk": {"S": turns_pk(tenant, user_id, thread_id)}, ":answer": {"S": "APPEND#"},
                    },
                )
                table.batch_delete([{"pk": item["pk"], "sk": item["sk"]} for item in answers
                                    if int(item["lastSeq"]["N"]) >= from_seq])
                if thread is None or last < from_seq:
                    break  # nothing was counted past the kept turns: the counter stays
                if not table.transact([self._rewind(tenant, user_id, thread_id, last, from_seq - 1)]):
                    break
                table.back_off(attempt)  # an append slipped in: its turns are past from_seq too
            else:
                raise BackendUnavailable("transcripts", "the thread kept changing under concurrent appends")
        return [removed[seq] for seq in sorted(removed)]

    def remember_append_key(self, tenant: str, user_id: str, thread_id: str, to_seq: int, key: str) -> None:
        digest = hashlib.sha256(key.encode()).hexdigest()
        with self.table.errors():
            self.table.client.put_item(TableName=self.table.table_name, Item={
                "pk": {"S": append_keys_pk(tenant, user_id, thread_id)}, "sk": {"S": f"KEY#{to_seq:012d}#{digest}"},
                "type": {"S": "appendKey"}, "toSeq": {"N": str(to_seq)}, "idempotencyKey": {"S": key},
            })  # fmt: skip

    def append_keys(self, tenant: str, user_id: str, thread_id: str, from_seq: int) -> list[str]:
        with self.table.errors():
            items = self._append_key_items(tenant, user_id, thread_id, from_seq)
        return list(dict.fromkeys(item["idempotencyKey"]["S"] for item in items))

    def user_append_keys(self, tenant: str, user_id: str) -> list[tuple[str, str]]:
        found: dict[tuple[str, str], None] = {}
        with self.table.errors():
            for key in self.table.keys_with_prefix(user_pk(tenant, user_id), "THREAD#"):
                thread_id = key["sk"]["S"].removeprefix("THREAD#")
                for item in self._append_key_items(tenant, user_id, thread_id, 0):
                    found.setdefault((thread_id, item["idempotencyKey"]["S"]), None)
        return list(found)

    def _append_key_items(self, tenant: str, user_id: str, thread_id: str, from_seq: int) -> list[dict[str, Any]]:
        return list(self.table.query(
            KeyConditionExpression="pk = :pk AND sk >= :from",
            ExpressionAttributeValues={
                ":pk": {"S": append_keys_pk(tenant, user_id, thread_id)},
                ":from": {"S": f"KEY#{max(0, from_seq):012d}"},
            },
        ))  # fmt: skip

    def _rewind(self, tenant: str, user_id: str, thread_id: str, last: int, kept: int) -> dict[str, Any]:
        """The thread's counter back from `last` to `kept` (the thread item deleted for 0), if still at `last`."""
        key = thread_key(tenant, user_id, thread_id)
        values: dict[str, Any] = {":last": {"N": str(last)}}
        if kept <= 0:
            return {"Delete": {"TableName": self.table.table_name, "Key": key,
                               "ConditionExpression": "lastSeq = :last", "ExpressionAttributeValues": values}}
        values[":kept"] = {"N": str(kept)}
        return {"Update": {
            "TableName": self.table.table_name, "Key": key, "UpdateExpression": "SET lastSeq = :kept",
            "ConditionExpression": "lastSeq = :last", "ExpressionAttributeValues": values,
        }}

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

    def _register_user(self, first: StoredTurn) -> dict[str, Any]:
        return {"Update": {
            "TableName": self.table.table_name,
            "Key": user_key(first.tenant, first.user_id),
            "UpdateExpression": "SET createdAt = if_not_exists(createdAt, :now), #type = :type",
            "ExpressionAttributeNames": {"#type": "type"},
            "ExpressionAttributeValues": {":now": {"N": repr(first.created_at)}, ":type": {"S": "user"}},
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


    def _put_key(self, stored: list[StoredTurn], key: AppendKey) -> dict[str, Any]:
        first = stored[0]
        return {"Put": {
            "TableName": self.table.table_name,
            "Item": {
                "pk": {"S": turns_pk(first.tenant, first.user_id, first.thread_id)},
                "sk": {"S": append_key_sk(key.key)},
                "type": {"S": "append-key"},
                "fingerprint": {"S": key.fingerprint},
                "firstSeq": {"N": str(first.seq)},
                "lastSeq": {"N": str(stored[-1].seq)},
                "createdAt": {"N": repr(first.created_at)},
                "ttl": {"N": str(int(first.created_at + APPEND_KEY_SECONDS))},  # the table's TTL attribute
            },
            # Where none is, or one that answers no more (DynamoDB's TTL deletes it, but not at once).
            "ConditionExpression": "attribute_not_exists(pk) OR createdAt <= :expired",
            "ExpressionAttributeValues": {":expired": {"N": repr(first.created_at - APPEND_KEY_SECONDS)}},
        }}


def append_token(stored: Sequence[StoredTurn], key: AppendKey | None = None) -> str:
    """The transaction's ClientRequestToken: derived from exactly what it writes (thread, seqs, turns, time, key).

    botocore retries a call whose answer was lost with the same parameters, so the same token: DynamoDB
    then answers success without appending the turns a second time. A new attempt of our own (the thread
    moved on) writes other seqs, so it gets another token.
    """
    first = stored[0]
    material = json.dumps([first.tenant, first.user_id, first.thread_id, repr(first.created_at),
                           [(t.seq, t.role, t.content) for t in stored], key.key if key else None],
                          separators=(",", ":"))
    return hashlib.sha256(material.encode()).hexdigest()[:36]


def _turn(tenant: str, user_id: str, thread_id: str, item: Mapping[str, Any]) -> StoredTurn:
    return StoredTurn(
        tenant=tenant, user_id=user_id, thread_id=thread_id, seq=int(item["seq"]["N"]),
        role=item["role"]["S"], content=item["content"]["S"], tokens=int(item["tokens"]["N"]),
        created_at=float(item["createdAt"]["N"]),
    )
