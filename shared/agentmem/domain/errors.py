"""Domain errors. The HTTP edge maps each to one status and error code, in one place."""

from __future__ import annotations


class AgentMemError(Exception):
    """Base of every error agentmem raises on purpose."""

    code = "internal_error"

    def __init__(self, message: str, details: list[dict[str, str]] | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or []


class InvalidInput(AgentMemError):
    """One or more fields are invalid; `details` names each."""

    code = "validation_error"


class NotFound(AgentMemError):
    code = "not_found"


class MemoryDisabled(AgentMemError):
    """The agent is not in `enabledAgents`."""

    code = "memory_disabled"


class Forbidden(AgentMemError):
    code = "forbidden"


class Conflict(AgentMemError):
    """A conditional write lost: a version mismatch or an idempotency key reused with another body."""

    code = "conflict"


class StillInProgress(Conflict):
    """The first request with this Idempotency-Key is still running; sent again after `retry_after`
    seconds, the request gets that first one's answer."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class TooLarge(AgentMemError):
    code = "too_large"


class BackendUnavailable(AgentMemError):
    """A backend (embedder, vector index, store) failed; callers degrade or retry."""

    code = "backend_unavailable"

    def __init__(self, part: str, message: str):
        super().__init__(message)
        self.part = part
