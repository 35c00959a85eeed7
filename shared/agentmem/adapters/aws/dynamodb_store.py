"""The record store on DynamoDB: one table, every record of a tenant's agent in one partition.

Keys (the CDK table: `pk`/`sk` strings, GSI `gsi1` on `gsi1pk`/`gsi1sk`, TTL attribute `ttl`):

- run:            pk `T#{tenant}#A#{agent}`, sk `RUN#{run_id}`                        (dynamodb_runs)
                  gsi1pk `T#{tenant}#A#{agent}#RUN#{none|up|down}`, gsi1sk `{created_at:020.6f}#{run_id}`
- feedback:       pk `T#{tenant}#A#{agent}`, sk `FB#{feedback_id}`                    (dynamodb_lessons)
- memory:         pk `T#{tenant}#A#{agent}`, sk `MEM#{memory_id}`,
                  gsi1pk `T#{tenant}#A#{agent}#MEM`, gsi1sk `{created_at:020.6f}#{memory_id}`, ttl
- pending marker: pk `T#{tenant}#PENDING`, sk `MEM#{agent}#{memory_id}` (while the memory is pending)
- agent registry: pk `T#{tenant}#AGENTS`, sk `A#{agent}`

`#` cannot occur in an identifier, so the keys cannot be forged by a crafted id.
Each half of the store keeps its items and queries in its own module; this one
puts them together behind the RecordStore port.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentmem.adapters.aws.dynamodb_lessons import DynamoDbLessonRecords
from agentmem.adapters.aws.dynamodb_records import DEFAULT_MAX_AGE_DAYS, DEFAULT_RETENTION_DAYS
from agentmem.adapters.aws.dynamodb_runs import DynamoDbRunRecords

# Part of this module's interface: the record store's bound on BatchGetItem calls for one batch.
from agentmem.adapters.aws.dynamodb_table import MAX_BATCH_ATTEMPTS as MAX_BATCH_ATTEMPTS
from agentmem.adapters.aws.dynamodb_table import DynamoDbTable


class DynamoDbRecordStore(DynamoDbRunRecords, DynamoDbLessonRecords):
    """RecordStore on one DynamoDB table (single-table design, see the module docstring)."""

    def __init__(
        self,
        table_name: str,
        client: Any = None,
        *,
        max_age_days: int = DEFAULT_MAX_AGE_DAYS,
        retention_days: int = DEFAULT_RETENTION_DAYS,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.table = DynamoDbTable(table_name, "store", client, sleep)
        self.max_age_days = max_age_days
        self.retention_days = retention_days
        self._registered_agents = set()
