"""The periodic sweep: what no event will do any more.

Run every few minutes (the `sweeper` function on an EventBridge schedule in AWS,
the local worker's timer on one machine): lessons left `pending` longer than
`PENDING_SWEEP_AGE_SECONDS` lost their event, or every delivery of it failed,
and are indexed here. Retention: lessons older than maxMemoryAgeDays lose their
vector (and are marked deleted), and runs and feedback older than retentionDays
are removed (locally; in AWS DynamoDB's TTL removes them).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

from pydantic.alias_generators import to_camel

from agentmem.service.memory import PENDING_SWEEP_AGE_SECONDS, MemoryService

log = logging.getLogger(__name__)

PENDING_BATCH = 100


@dataclass
class SweepReport:
    pending_indexed: int = 0
    lessons_expired: int = 0
    runs_purged: int = 0

    def as_dict(self) -> dict[str, int]:
        """camelCase, as in the API and the log."""
        return {to_camel(name): value for name, value in asdict(self).items()}


def sweep(memory: MemoryService, *, pending_age_seconds: float = PENDING_SWEEP_AGE_SECONDS) -> SweepReport:
    """One pass of the sweep. Raises BackendUnavailable when a backend fails: the next pass tries again."""
    report = SweepReport()
    report.pending_indexed = memory.index_pending(PENDING_BATCH, older_than_seconds=pending_age_seconds)
    report.lessons_expired = memory.expire_lessons(PENDING_BATCH)
    report.runs_purged = memory.purge_runs()
    return report
