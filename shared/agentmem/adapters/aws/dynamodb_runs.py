"""Runs on DynamoDB: one item per run in the agent's partition, listed through the table's GSI.

- run: pk `T#{tenant}#A#{agent}`, sk `RUN#{run_id}`,
       gsi1pk `T#{tenant}#A#{agent}#RUN#{verdict}` (`none` until the first feedback, then `up` or `down`),
       gsi1sk `{created_at:020.6f}#{run_id}`

The runs listing (the editors' review queue) reads `gsi1`, which the memories listing
shares under other partition keys: no new index, no scan. The run's verdict is part of
its index partition, so "awaiting a verdict" (`none`), `up` and `down` are each one
Query of exactly the page asked for; a feedback moves the run between partitions in
the same transaction that stores the feedback. The price is on the unfiltered listing
(`any`): three Queries, one per verdict, merged by the sort key, so it reads up to
three times the page. The queue is what editors open; `any` is the rarer view, and a
second GSI that held every run once would instead cost an index write on every run
recorded and every verdict, on the hot path of every agent. Index reads are eventually
consistent: a run leaves the `none` listing a moment (typically well under a second)
after its feedback.

A run made for a user also has an index item in that user's partition, written in the same
transaction: pk `T#{tenant}#U#{user}#RUNS`, sk `A#{agent}#RUN#{run_id}` (the run's key and nothing
else). Erasing the user finds every run of theirs there with one strongly consistent query, where a
GSI would be eventually consistent and could miss the run made a moment before the erase.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from botocore.exceptions import ClientError

from agentmem.adapters.aws.dynamodb_records import (
    DEFAULT_RETENTION_DAYS,
    SECONDS_PER_DAY,
    DynamoDbRecords,
    agent_pk,
)
from agentmem.adapters.aws.dynamodb_table import CONDITION_FAILED, error_code, from_attributes, to_attributes
from agentmem.domain.errors import BackendUnavailable, Conflict, NotFound
from agentmem.domain.models import Rating, Run, VerdictFilter
from agentmem.ports.records import Page, decode_run_cursor, encode_run_cursor

Verdict = Literal["none", "up", "down"]
VERDICTS: tuple[Verdict, ...] = ("none", "up", "down")


def run_key(tenant: str, agent_id: str, run_id: str) -> dict[str, Any]:
    return {"pk": {"S": agent_pk(tenant, agent_id)}, "sk": {"S": f"RUN#{run_id}"}}


def user_runs_pk(tenant: str, user_id: str) -> str:
    """The partition indexing every run made for one user (what erasing the user walks)."""
    return f"T#{tenant}#U#{user_id}#RUNS"


def user_run_index_key(tenant: str, user_id: str, agent_id: str, run_id: str) -> dict[str, Any]:
    return {"pk": {"S": user_runs_pk(tenant, user_id)}, "sk": {"S": f"A#{agent_id}#RUN#{run_id}"}}


def run_list_pk(tenant: str, agent_id: str, verdict: Verdict) -> str:
    return f"{agent_pk(tenant, agent_id)}#RUN#{verdict}"


def run_list_sk(created_at: float, run_id: str) -> str:
    # Fixed width, so string order is time order; the id breaks ties like the local store.
    return f"{created_at:020.6f}#{run_id}"


def run_to_item(run: Run, *, retention_days: int = DEFAULT_RETENTION_DAYS) -> dict[str, Any]:
    return {
        **run_key(run.tenant, run.agent_id, run.run_id),
        **to_attributes(
            {
                "type": "run",
                "tenant": run.tenant,
                "agentId": run.agent_id,
                "runId": run.run_id,
                "input": run.input,
                "output": run.output,
                "userId": run.user_id,
                "threadId": run.thread_id,
                "injectedMemoryIds": list(run.injected_memory_ids),
                "feedbackIds": list(run.feedback_ids),
                "createdAt": run.created_at,
                "verdict": run.verdict,
                "masked": run.masked,
                "gsi1pk": run_list_pk(run.tenant, run.agent_id, run.verdict or "none"),
                "gsi1sk": run_list_sk(run.created_at, run.run_id),
                "ttl": int(run.created_at + retention_days * SECONDS_PER_DAY),
            }
        ),
    }


def item_to_run(item: Mapping[str, Any]) -> Run:
    v = from_attributes(item)
    return Run(
        tenant=v["tenant"],
        agent_id=v["agentId"],
        run_id=v["runId"],
        input=v["input"],
        created_at=float(v["createdAt"]),
        output=v.get("output"),
        user_id=v.get("userId"),
        thread_id=v.get("threadId"),
        injected_memory_ids=list(v.get("injectedMemoryIds", [])),
        feedback_ids=list(v.get("feedbackIds", [])),
        verdict=v.get("verdict"),
        masked=bool(v.get("masked", False)),
    )


def run_feedback_update(tenant: str, agent_id: str, run_id: str, feedback_id: str, rating: Rating) -> dict[str, Any]:
    """The transaction item that adds a feedback to its run, whose verdict (and listing) becomes `rating`.

    It fails when the run does not exist.
    """
    return {
        "Key": run_key(tenant, agent_id, run_id),
        "UpdateExpression": (
            "SET feedbackIds = list_append(if_not_exists(feedbackIds, :none), :id),"
            " verdict = :verdict, gsi1pk = :listpk"
        ),
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {
            ":id": {"L": [{"S": feedback_id}]},
            ":none": {"L": []},
            ":verdict": {"S": rating},
            ":listpk": {"S": run_list_pk(tenant, agent_id, rating)},
        },
    }


class DynamoDbRunRecords(DynamoDbRecords):
    """The runs half of the record store."""

    def put_run(self, run: Run) -> None:
        item = run_to_item(run, retention_days=self.retention_days)
        if run.user_id:
            self._put_user_run(run, item)
            return
        with self.table.errors():
            try:
                self.client.put_item(
                    TableName=self.table_name,
                    Item=item,
                    ConditionExpression="attribute_not_exists(pk)",
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    raise Conflict(f"run {run.run_id} exists already") from None
                raise

    def _put_user_run(self, run: Run, item: dict[str, Any]) -> None:
        assert run.user_id is not None
        index = {
            **user_run_index_key(run.tenant, run.user_id, run.agent_id, run.run_id),
            "runPk": item["pk"], "runSk": item["sk"],
        }
        if "ttl" in item:  # the index lives as long as its run
            index["ttl"] = item["ttl"]
        put = {"TableName": self.table_name, "ConditionExpression": "attribute_not_exists(pk)"}
        with self.table.errors():
            reasons = self._transact([{"Put": {**put, "Item": item}}, {"Put": {**put, "Item": index}}])
        if reasons and reasons[0] == CONDITION_FAILED:
            raise Conflict(f"run {run.run_id} exists already")
        if reasons:
            raise BackendUnavailable("store", f"run not stored: {reasons}")

    def delete_runs_of_user(self, tenant: str, user_id: str) -> int:
        """Delete every run made for the user and the user's index items (runs and lessons); returns how
        many runs. Idempotent."""
        with self.table.errors():
            index = list(self.table.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": user_runs_pk(tenant, user_id)}},
            ))
            runs = [{"pk": i["runPk"], "sk": i["runSk"]} for i in index if "runPk" in i]
            self.table.batch_delete(runs + [{"pk": i["pk"], "sk": i["sk"]} for i in index])
        return len(runs)

    def get_run(self, tenant: str, agent_id: str, run_id: str) -> Run | None:
        with self.table.errors():
            item = self.table.get(run_key(tenant, agent_id, run_id))
        return item_to_run(item) if item else None

    def set_run_output(self, tenant: str, agent_id: str, run_id: str, output: str) -> None:
        with self.table.errors():
            try:
                self.client.update_item(
                    TableName=self.table_name,
                    Key=run_key(tenant, agent_id, run_id),
                    UpdateExpression="SET #output = :output",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeNames={"#output": "output"},
                    ExpressionAttributeValues={":output": {"S": output}},
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    raise NotFound(f"run {run_id} not found") from None
                raise

    def list_runs(
        self,
        tenant: str,
        agent_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        verdict: VerdictFilter = "any",
    ) -> Page[Run]:
        before = run_list_sk(*decode_run_cursor(cursor, verdict)) if cursor else None
        verdicts = VERDICTS if verdict == "any" else (verdict,)
        items: list[dict[str, Any]] = []
        with self.table.errors():
            for one in verdicts:
                # One more than asked from each, so the last page is known to be the last.
                items.extend(self._newest_runs(run_list_pk(tenant, agent_id, one), before, limit + 1))
        items.sort(key=lambda item: item["gsi1sk"]["S"], reverse=True)
        runs = [item_to_run(item) for item in items[:limit]]
        more = len(items) > limit
        next_cursor = encode_run_cursor(verdict, runs[-1].created_at, runs[-1].run_id) if more and runs else None
        return Page(runs, next_cursor)

    def _newest_runs(self, list_pk: str, before: str | None, count: int) -> list[dict[str, Any]]:
        """Up to `count` items of one verdict's listing, newest first, older than `before`."""
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "IndexName": "gsi1",
            "KeyConditionExpression": "gsi1pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": list_pk}},
            "ScanIndexForward": False,
            "Limit": count,
        }
        if before is not None:
            request["KeyConditionExpression"] += " AND gsi1sk < :before"
            request["ExpressionAttributeValues"][":before"] = {"S": before}
        found: list[dict[str, Any]] = []
        # A page may stop at 1 MB before `count` items (runs carry long inputs): read on until enough.
        for response in self.table.pages("query", request):
            found.extend(response.get("Items", []))
            if len(found) >= count:
                break
        return found[:count]
