"""Domain records as the API shows them (camelCase, ISO 8601 times)."""

from __future__ import annotations

from typing import Any

from agentmem.domain.lessons import LessonPlace
from agentmem.domain.models import Memory, Run
from agentmem.domain.snippets import snippet
from agentmem.domain.timestamps import iso_utc

# Enough of a run's input and output to judge it in a queue; the run's own route has them whole.
SNIPPET_CHARS = 600


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


def place_json(place: LessonPlace | None) -> dict[str, Any] | None:
    """A lesson's group on the wall (`GET .../memories`), or None when it could not be computed."""
    if place is None:
        return None
    return {
        "groupId": place.group_id,
        "size": place.group_size,
        "conflictsWith": list(place.conflicts_with),
        "overruledBy": place.overruled_by,
    }


def feedback_json(lessons: list[Memory]) -> list[dict[str, Any]]:
    """A run's feedback, oldest first, each with the status of the lesson it became (pending until indexed)."""
    return [
        {
            "feedbackId": m.feedback_id,
            "memoryId": m.memory_id,
            "rating": m.rating,
            "comment": m.comment,
            "lessonStatus": m.status,
            "createdAt": iso_utc(m.created_at),
        }
        for m in sorted(lessons, key=lambda m: (m.created_at, m.feedback_id))
    ]


def run_json(run: Run, lessons: list[Memory]) -> dict[str, Any]:
    return {
        "runId": run.run_id,
        "agentId": run.agent_id,
        "input": run.input,
        "output": run.output,
        "userId": run.user_id,
        "threadId": run.thread_id,
        "injectedMemoryIds": run.injected_memory_ids,
        "feedback": feedback_json(lessons),
        "verdict": run.verdict,
        "createdAt": iso_utc(run.created_at),
    }


def run_summary_json(run: Run, lessons: list[Memory]) -> dict[str, Any]:
    """A run as the runs listing shows it: input and output cut to snippets (the run itself has them whole)."""
    input_text, input_cut = snippet(run.input, SNIPPET_CHARS)
    output_text, output_cut = snippet(run.output, SNIPPET_CHARS) if run.output is not None else (None, False)
    return {
        "runId": run.run_id,
        "input": input_text,
        "inputTruncated": input_cut,
        "output": output_text,
        "outputTruncated": output_cut,
        "userId": run.user_id,
        "injectedMemoryIds": run.injected_memory_ids,
        "feedback": feedback_json(lessons),
        "verdict": run.verdict,
        "createdAt": iso_utc(run.created_at),
    }
