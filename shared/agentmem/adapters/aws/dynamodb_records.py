"""What the record store's halves (runs; feedback and lessons) share: the agent's partition and transactions."""

from __future__ import annotations

from typing import Any

from agentmem.adapters.aws.dynamodb_table import (
    CONDITION_FAILED,
    TRANSACTION_CONFLICT,
    DynamoDbStore,
)
from agentmem.domain.errors import BackendUnavailable

SECONDS_PER_DAY = 86_400
DEFAULT_MAX_AGE_DAYS = 90
DEFAULT_RETENTION_DAYS = 90
# A lesson's item outlives its age limit by this much (DynamoDB may delete an expired item within
# minutes): the sweeper finds it in time to remove its vector. Retrieval ignores it from maxMemoryAgeDays.
EXPIRY_GRACE_DAYS = 7
MAX_TRANSACTION_ATTEMPTS = 4


def agent_pk(tenant: str, agent_id: str) -> str:
    """The partition holding every run, feedback and memory of one tenant's agent."""
    return f"T#{tenant}#A#{agent_id}"


class DynamoDbRecords(DynamoDbStore):
    """Base of the record store's halves: the table, the memory age limit and retried transactions."""

    max_age_days: int
    # Runs and feedback carry `ttl` = created + retention_days: DynamoDB's TTL deletes them.
    retention_days: int = DEFAULT_RETENTION_DAYS

    def _transact(self, items: list[dict[str, Any]]) -> list[str]:
        """Run a transaction; [] when it committed, else the per-item cancellation codes.

        A cancellation caused only by another transaction touching the same items
        (TransactionConflict) is retried: botocore does not retry cancellations.
        """
        for attempt in range(MAX_TRANSACTION_ATTEMPTS):
            reasons = self.table.transact(items)
            if not reasons or CONDITION_FAILED in reasons or TRANSACTION_CONFLICT not in reasons:
                return reasons
            self.table.back_off(attempt)
        raise BackendUnavailable("store", "DynamoDB transaction kept conflicting with concurrent writers")
