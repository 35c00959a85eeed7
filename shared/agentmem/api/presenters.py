"""Domain records as the API shows them (camelCase, ISO 8601 times)."""

from __future__ import annotations

from typing import Any

from agentmem.domain.models import Memory, Run
from agentmem.domain.timestamps import iso_utc


def memory_json(m: Memory) -> dict[str, Any]:
    return {
        "memoryId": m.memory_id,
        "agentId": m.agent_id,
        "runId": m.run_id,
        "feedbackId": m.feedback_id,
        "rating": m.rating,
        "comment": m.comment,
        "digest": m.digest,
        "importance": m.importance,
        "status": m.status,
        "injectedCount": m.injected_count,
        "createdAt": iso_utc(m.created_at),
    }


def run_json(run: Run, lessons: list[Memory]) -> dict[str, Any]:
    return {
        "runId": run.run_id,
        "agentId": run.agent_id,
        "input": run.input,
        "output": run.output,
        "userId": run.user_id,
        "threadId": run.thread_id,
        "injectedMemoryIds": run.injected_memory_ids,
        "feedback": [
            {
                "feedbackId": m.feedback_id,
                "memoryId": m.memory_id,
                "rating": m.rating,
                "comment": m.comment,
                "createdAt": iso_utc(m.created_at),
            }
            for m in sorted(lessons, key=lambda m: m.created_at)
        ],
        "createdAt": iso_utc(run.created_at),
    }
