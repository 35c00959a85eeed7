"""Runs on DynamoDB: one item per run in the agent's partition (`pk` `T#{tenant}#A#{agent}`, `sk` `RUN#{run_id}`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from agentmem.adapters.aws.dynamodb_records import DynamoDbRecords, agent_pk
from agentmem.adapters.aws.dynamodb_table import error_code, from_attributes, to_attributes
from agentmem.domain.errors import Conflict, NotFound
from agentmem.domain.models import Run


def run_key(tenant: str, agent_id: str, run_id: str) -> dict[str, Any]:
    return {"pk": {"S": agent_pk(tenant, agent_id)}, "sk": {"S": f"RUN#{run_id}"}}


def run_to_item(run: Run) -> dict[str, Any]:
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
    )


def run_feedback_update(tenant: str, agent_id: str, run_id: str, feedback_id: str) -> dict[str, Any]:
    """The transaction item that adds a feedback to its run (and fails when the run does not exist)."""
    return {
        "Key": run_key(tenant, agent_id, run_id),
        "UpdateExpression": "SET feedbackIds = list_append(if_not_exists(feedbackIds, :none), :id)",
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {
            ":id": {"L": [{"S": feedback_id}]},
            ":none": {"L": []},
        },
    }


class DynamoDbRunRecords(DynamoDbRecords):
    """The runs half of the record store."""

    def put_run(self, run: Run) -> None:
        with self.table.errors():
            try:
                self.client.put_item(
                    TableName=self.table_name,
                    Item=run_to_item(run),
                    ConditionExpression="attribute_not_exists(pk)",
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    raise Conflict(f"run {run.run_id} exists already") from None
                raise

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
