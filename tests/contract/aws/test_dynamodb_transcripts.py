"""The DynamoDB transcript transaction's ClientRequestToken, which moto accepts but does not act on.

DynamoDB runs a TransactWriteItems at most once per token for ten minutes: botocore's own retry
of a call whose answer was lost (same parameters, so the same token) then succeeds without
appending the turns again. What can be checked here is what the adapter sends: a token on every
append, the same token for the same write, and a new one for a new write.
"""

from __future__ import annotations

from typing import Any

import boto3
from agentmem.adapters.aws.dynamodb_transcripts import DynamoDbTranscriptStore
from agentmem.ports.transcripts import NewTurn

from tests.contract.conftest import TABLE_NAME, create_table

T0 = 1_750_000_000.0


class RecordingClient:
    """The real (moto) DynamoDB client; records each transaction, and lets another writer in before the first."""

    def __init__(self, inner: Any, interleave: Any = None) -> None:
        self.inner, self.interleave = inner, interleave
        self.transactions: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def transact_write_items(self, **request: Any) -> Any:
        self.transactions.append(request)
        if self.interleave is not None:
            writer, self.interleave = self.interleave, None
            writer()
        return self.inner.transact_write_items(**request)


def test_every_append_carries_a_token_derived_from_what_it_writes(moto: None) -> None:
    create_table()
    recording = RecordingClient(boto3.client("dynamodb"))
    store = DynamoDbTranscriptStore(TABLE_NAME, recording, sleep=lambda _: None)
    new = [NewTurn("user", "hello", 1)]
    store.append("acme", "alice", "t1", new, T0)
    store.append("acme", "alice", "t1", new, T0)  # the same turns again: seq 2, another write
    store.append("acme", "bob", "t1", new, T0)
    tokens = [t.get("ClientRequestToken") for t in recording.transactions]
    assert all(token and 1 <= len(token) <= 36 for token in tokens)
    assert len(set(tokens)) == 3

    # The same write (same thread, seqs, turns and time) gets the same token: what a botocore retry resends.
    from agentmem.adapters.aws.dynamodb_transcripts import append_token
    from agentmem.ports.transcripts import StoredTurn

    write = [StoredTurn("acme", "alice", "t1", 1, "user", "hello", 1, T0)]
    assert append_token(write) == tokens[0] == append_token(list(write))


def test_an_attempt_after_a_concurrent_append_carries_a_new_token(moto: None) -> None:
    create_table()
    other = DynamoDbTranscriptStore(TABLE_NAME)
    recording = RecordingClient(
        boto3.client("dynamodb"),
        interleave=lambda: other.append("acme", "alice", "t1", [NewTurn("user", "first", 1)], T0),
    )
    store = DynamoDbTranscriptStore(TABLE_NAME, recording, sleep=lambda _: None)
    stored = store.append("acme", "alice", "t1", [NewTurn("user", "mine", 1)], T0)
    assert [t.seq for t in stored] == [2]
    first, second = (t["ClientRequestToken"] for t in recording.transactions)
    assert first != second  # a token reused with other parameters would be refused by DynamoDB
