"""The keyword side of S3 Vectors tenants: BM25 over per-owner index segments kept in the tenant table.

S3 Vectors has no text search, and an OpenSearch collection would bill its OCUs at rest whatever the
traffic. So each owner's (user's) inverted index lives in the tenant's DynamoDB table, in a partition of
its own, and a search scores BM25 in the function over that owner's segment, with the local index's
analyser and ranking (`agentmem.domain.keyword_terms`, `agentmem.domain.bm25`): the same documents give
the same scores and order as `LocalBm25Index`. Nothing is added at rest but the bytes stored.

Partition `T#{tenant}#U#{owner}#LEX#{kind}` (for turns the owner is the user), sort keys:

- `BASE#{mergeId}#{chunk:04d}`: the base segment of one merge, zlib-compressed, in chunks of at most
  CHUNK_BYTES (an item holds 400 KB); `lexical_segments` says what the bytes are;
- `DELTA#{nanoseconds:020d}#{random}`: what one write changed (documents put, ids deleted), small;
- `HEAD`: which merge is the base (`baseId`, `chunkCount`, `baseGeneration`), the deltas folded into it
  (`folded`, still to be deleted or just deleted) and how many deltas and delta bytes are pending.

Writes (`upsert`, `delete`) put a delta item and add its size to HEAD's counters (one PutItem, one
UpdateItem): concurrent writers to one owner never touch the same delta, so none is lost. When
the pending deltas pass MERGE_AFTER_DELTAS or a quarter of the base's size (at least
MERGE_AFTER_BYTES), and after every delete (so a deleted turn's terms do not wait in the base for
the user's next writes; deletes are rare), the writer merges: it reads the partition, writes the
next base under a new merge id, moves HEAD to it on the condition that HEAD still names the base it
read (two mergers: one wins, the other deletes what it wrote), then deletes the folded deltas and the
old base. Merging on write rather than in a background function of its own: another queue and poller
would cost at rest.

A search reads the deltas and HEAD in one Query (HEAD sorts last, so every delta it read was there
when HEAD was), then the base chunks HEAD names, unless this container has that base decoded already
(it is immutable under its merge id): a warm search is one Query of small items, a cold one two
(more pages past 1 MB). If HEAD's base is gone by then (a merge committed and cleaned up meanwhile),
the read starts again. Reads are strongly consistent: a turn indexed is found by the next retrieve.

`delete_owner` deletes every item of the partition (an erase leaves nothing of the owner).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from botocore.exceptions import ClientError

from agentmem.adapters.aws.dynamodb_table import DynamoDbTable, error_code
from agentmem.adapters.aws.lexical_segments import (
    EMPTY_BASE,
    BaseSegment,
    SegmentView,
    decode_base,
    decode_delta,
    encode_base,
    encode_delta,
)
from agentmem.domain.bm25 import DEFAULT_B, DEFAULT_K1, LexicalHit, check_parameters, rank
from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.keyword_terms import analyse

__all__ = ["DynamoDbLexicalIndex", "lexical_pk"]

HEAD_SK = "HEAD"
BASE_PREFIX = "BASE#"
DELTA_PREFIX = "DELTA#"
# An item holds at most 400 KB, its keys and attribute names included.
CHUNK_BYTES = 350_000
MERGE_AFTER_DELTAS = 32
MERGE_AFTER_BYTES = 64_000
# Decoded base segments kept per container (a retrieve function serves many users; each base is
# immutable under its merge id, so a cached one is never stale, only superseded), by count and by an
# estimate of their memory: a 10k-turn user's base is a few MB decoded, the retrieve function has 1 GB.
CACHED_BASES = 64
CACHED_BASE_BYTES = 96_000_000
MAX_READ_ATTEMPTS = 4
MAX_MERGE_ATTEMPTS = 3
PART = "lexical"


def lexical_pk(tenant: str, kind: str, owner_id: str) -> str:
    """The owner's keyword partition (`#` never occurs in an identifier, so no id reaches another)."""
    return f"T#{tenant}#U#{owner_id}#LEX#{kind}"


class _Snapshot:
    """What one read of a partition found: HEAD's fields, the deltas to apply, the base's chunks."""

    def __init__(self, head: dict[str, Any] | None, deltas: list[tuple[str, bytes]]):
        self.head = head or {}
        folded = set(self.head.get("folded", {}).get("SS", []))
        self.deltas = [(sk, data) for sk, data in deltas if sk not in folded]
        self.all_delta_keys = [sk for sk, _ in deltas]
        self.base_id: str | None = self.head.get("baseId", {}).get("S")
        self.chunks = int(self.head.get("chunkCount", {}).get("N", "0"))
        self.generation = int(self.head.get("baseGeneration", {}).get("N", "0"))
        self.base_bytes = int(self.head.get("baseBytes", {}).get("N", "0"))


class DynamoDbLexicalIndex:
    """LexicalIndex on the tenant table: per-owner BM25 segments (see the module docstring)."""

    def __init__(
        self,
        table_name: str,
        *,
        client: Any = None,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        merge_after_deltas: int = MERGE_AFTER_DELTAS,
        merge_after_bytes: int = MERGE_AFTER_BYTES,
        chunk_bytes: int = CHUNK_BYTES,
        clock: Callable[[], int] = time.time_ns,
    ):
        check_parameters(k1, b)
        if merge_after_deltas < 1 or merge_after_bytes < 1 or chunk_bytes < 1:
            raise ValueError("merge thresholds and the chunk size must be >= 1")
        self.table = DynamoDbTable(table_name, PART, client)
        self._k1 = k1
        self._b = b
        self._merge_after_deltas = merge_after_deltas
        self._merge_after_bytes = merge_after_bytes
        self._chunk_bytes = chunk_bytes
        self._clock = clock
        self._bases: OrderedDict[tuple[str, str], BaseSegment] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        return self.table.client

    # Writes

    def upsert(self, tenant: str, kind: str, owner_id: str, documents: Sequence[tuple[str, str]]) -> None:
        if documents:
            puts = [(item_id, Counter(analyse(text))) for item_id, text in documents]
            self._write(lexical_pk(tenant, kind, owner_id), puts, [])

    def delete(self, tenant: str, kind: str, owner_id: str, item_ids: Sequence[str]) -> None:
        """Remove these documents; ids the owner does not hold (a thread's seq range, say) write nothing."""
        if not item_ids:
            return
        pk = lexical_pk(tenant, kind, owner_id)
        with self.table.errors():
            snapshot, base = self._read(pk)
        view = self._view(base, snapshot)
        held = [item_id for item_id in dict.fromkeys(item_ids) if view.holds(item_id)]
        if held:
            self._write(pk, [], held)

    def delete_owner(self, tenant: str, kind: str, owner_id: str) -> None:
        """Delete every item of the owner's partition: base, deltas and HEAD."""
        pk = lexical_pk(tenant, kind, owner_id)
        with self.table.errors():
            self.table.batch_delete(self.table.keys_with_prefix(pk))
        self._forget(pk)

    def _write(self, pk: str, puts: list[tuple[str, Counter[str]]], deletes: list[str]) -> None:
        with self.table.errors():
            sizes = [self._put_delta(pk, payload) for payload in self._delta_payloads(puts, deletes)]
            head = self.client.update_item(
                TableName=self.table.table_name,
                Key=_key(pk, HEAD_SK),
                UpdateExpression="ADD deltas :n, deltaBytes :bytes",
                ExpressionAttributeValues={":n": {"N": str(len(sizes))}, ":bytes": {"N": str(sum(sizes))}},
                ReturnValues="ALL_NEW",
            )["Attributes"]
            pending = int(head["deltas"]["N"])
            pending_bytes = int(head["deltaBytes"]["N"])
            base_bytes = int(head.get("baseBytes", {}).get("N", "0"))
            if deletes:
                # At once, and again if another merge won meanwhile (its base may predate this delete): the
                # deleted turns' terms leave the table now, not at the user's next writes.
                for _ in range(MAX_MERGE_ATTEMPTS):
                    if self.merge(pk):
                        break
            elif pending >= self._merge_after_deltas or pending_bytes >= max(self._merge_after_bytes, base_bytes // 4):
                self.merge(pk)

    def _delta_payloads(self, puts: list[tuple[str, Counter[str]]], deletes: list[str]) -> list[bytes]:
        """The write as delta payloads of at most one chunk each (a big batch is split, in order)."""
        payload = encode_delta(puts, deletes)
        if len(payload) <= self._chunk_bytes:
            return [payload]
        if len(puts) + len(deletes) <= 1:
            raise ValueError("one document's terms exceed what a DynamoDB item holds")
        if puts and deletes:
            return self._delta_payloads(puts, []) + self._delta_payloads([], deletes)
        half_puts, half_deletes = len(puts) // 2, len(deletes) // 2
        return self._delta_payloads(puts[:half_puts], deletes[:half_deletes]) + self._delta_payloads(
            puts[half_puts:], deletes[half_deletes:]
        )

    def _put_delta(self, pk: str, payload: bytes) -> int:
        # Sorted by time, so deltas apply in the order they were written; the random part keeps two
        # writers in the same nanosecond apart.
        sk = f"{DELTA_PREFIX}{self._clock():020d}#{uuid.uuid4().hex[:12]}"
        self.client.put_item(
            TableName=self.table.table_name, Item={**_key(pk, sk), "d": {"B": payload}},
            ConditionExpression="attribute_not_exists(pk)",
        )
        return len(payload)

    def merge(self, pk: str) -> bool:
        """Fold the partition's pending deltas into a new base (True, also when none was pending).

        False when another merge moved HEAD first: its base may lack deltas this one read (merge again).
        """
        with self.table.errors():
            snapshot, base = self._read(pk)
            if not snapshot.deltas:
                return True
            view = self._view(base, snapshot)
            data = encode_base(view.documents())
            merge_id = f"{snapshot.generation + 1:010d}-{uuid.uuid4().hex[:8]}"
            chunks = [data[start : start + self._chunk_bytes] for start in range(0, len(data), self._chunk_bytes)]
            chunk_keys = [_key(pk, f"{BASE_PREFIX}{merge_id}#{index:04d}") for index in range(len(chunks))]
            self.table.batch_put([{**key, "d": {"B": chunk}} for key, chunk in zip(chunk_keys, chunks, strict=True)])
            folded_bytes = sum(len(payload) for _, payload in snapshot.deltas)
            values: dict[str, Any] = {
                ":base": {"S": merge_id}, ":chunks": {"N": str(len(chunks))},
                ":generation": {"N": str(snapshot.generation + 1)}, ":baseBytes": {"N": str(len(data))},
                ":n": {"N": str(-len(snapshot.deltas))}, ":bytes": {"N": str(-folded_bytes)},
            }
            update = "SET baseId = :base, chunkCount = :chunks, baseGeneration = :generation, baseBytes = :baseBytes"
            if snapshot.all_delta_keys:
                values[":folded"] = {"SS": snapshot.all_delta_keys}
                update += ", folded = :folded"
            # HEAD must exist (an erase deletes it: a merge racing an erase brings nothing back) and
            # still name the base this merge read.
            condition = "attribute_exists(pk) AND "
            if snapshot.generation:
                condition += "baseGeneration = :read"
                values[":read"] = {"N": str(snapshot.generation)}
            else:
                condition += "attribute_not_exists(baseGeneration)"
            try:
                self.client.update_item(
                    TableName=self.table.table_name, Key=_key(pk, HEAD_SK),
                    UpdateExpression=update + " ADD deltas :n, deltaBytes :bytes",
                    ConditionExpression=condition, ExpressionAttributeValues=values,
                )
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise
                self.table.batch_delete(chunk_keys)
                return False
            self._remember(pk, merge_id, decode_base(data))
            # Only older generations: a merger that read this new HEAD may be writing the next one already.
            stale = [key for key in self.table.keys_with_prefix(pk, BASE_PREFIX)
                     if _generation(key["sk"]["S"]) <= snapshot.generation]
            self.table.batch_delete([_key(pk, sk) for sk in snapshot.all_delta_keys] + stale)
            return True

    # Reads

    def search(self, tenant: str, kind: str, owner_id: str, query: str, k: int) -> list[LexicalHit]:
        """The `k` best-scoring documents of one owner that share a term with `query`, best first."""
        terms = set(analyse(query))
        if k <= 0 or not terms:
            return []
        with self.table.errors():
            snapshot, base = self._read(lexical_pk(tenant, kind, owner_id))
        view = self._view(base, snapshot)
        postings = {term: view.postings(term) for term in terms}
        matched = list(dict.fromkeys(item_id for posting in postings.values() for item_id in posting))
        return rank(
            terms, count=view.count, total_length=view.total_length, postings=postings.get,
            lengths=view.lengths_of(matched), order=view.order_of(matched), k=k, k1=self._k1, b=self._b,
        )

    def _view(self, base: BaseSegment, snapshot: _Snapshot) -> SegmentView:
        view = SegmentView(base)
        for _, payload in snapshot.deltas:
            view.apply(*decode_delta(payload))
        return view

    def _read(self, pk: str) -> tuple[_Snapshot, BaseSegment]:
        """The partition's HEAD and pending deltas, and the base HEAD names (this container's copy if it has one)."""
        for attempt in range(MAX_READ_ATTEMPTS):
            head: dict[str, Any] | None = None
            deltas: list[tuple[str, bytes]] = []
            for item in self.table.query(
                KeyConditionExpression="pk = :pk AND sk BETWEEN :first AND :head",
                ExpressionAttributeValues={":pk": {"S": pk}, ":first": {"S": DELTA_PREFIX}, ":head": {"S": HEAD_SK}},
            ):
                sk = item["sk"]["S"]
                if sk == HEAD_SK:
                    head = item
                else:
                    deltas.append((sk, bytes(item["d"]["B"])))
            snapshot = _Snapshot(head, deltas)
            if snapshot.base_id is None:
                return snapshot, EMPTY_BASE
            cached = self._cached(pk, snapshot.base_id)
            if cached is not None:
                return snapshot, cached
            base = self._read_base(pk, snapshot)
            if base is not None:
                return snapshot, base
            if attempt + 1 < MAX_READ_ATTEMPTS:
                self.table.back_off(attempt)
        raise BackendUnavailable(PART, "the keyword index kept changing while it was read")

    def _read_base(self, pk: str, snapshot: _Snapshot) -> BaseSegment | None:
        prefix = f"{BASE_PREFIX}{snapshot.base_id}#"
        chunks = [
            bytes(item["d"]["B"])
            for item in self.table.query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": {"S": pk}, ":prefix": {"S": prefix}},
            )
        ]
        if len(chunks) != snapshot.chunks:
            return None  # superseded and cleaned up since HEAD was read: read again
        base = decode_base(b"".join(chunks))
        self._remember(pk, str(snapshot.base_id), base)
        return base

    def _cached(self, pk: str, base_id: str) -> BaseSegment | None:
        with self._lock:
            base = self._bases.get((pk, base_id))
            if base is not None:
                self._bases.move_to_end((pk, base_id))
            return base

    def _remember(self, pk: str, base_id: str, base: BaseSegment) -> None:
        with self._lock:
            self._bases[(pk, base_id)] = base
            self._bases.move_to_end((pk, base_id))
            while len(self._bases) > 1 and (
                len(self._bases) > CACHED_BASES or sum(b.memory_estimate() for b in self._bases.values())
                > CACHED_BASE_BYTES
            ):
                self._bases.popitem(last=False)

    def _forget(self, pk: str) -> None:
        with self._lock:
            for key in [key for key in self._bases if key[0] == pk]:
                del self._bases[key]

    def close(self) -> None:
        with self._lock:
            self._bases.clear()


def _generation(base_sk: str) -> int:
    """The generation of a base chunk's sort key, `BASE#{generation:010d}-{random}#{chunk}`."""
    return int(base_sk[len(BASE_PREFIX) :].split("-", 1)[0])


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}
