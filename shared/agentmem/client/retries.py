"""When `MemoryClient` sends a request again, and how long it waits first.

- 429 and 503 say the request was not carried out: any request is sent again.
- 502 and 504 may hide a completed write: only requests that are safe to repeat (idempotent
  methods, or an `Idempotency-Key`) are sent again.
- 409 with `Retry-After` is the same Idempotency-Key still being processed by a first call:
  sent again after the server's delay, it gets the first call's answer. A 409 without
  `Retry-After` (a version mismatch, a key reused with another body) is final.
- No connection: any request again. No answer on an open connection: only safe ones.

The wait is exponential backoff with full jitter, and never shorter than `Retry-After`.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentmem.backoff import backoff

RETRY_ANY_REQUEST = frozenset({429, 503})
RETRY_IF_SAFE = frozenset({502, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"})


def safe_to_repeat(method: str, headers: Mapping[str, str]) -> bool:
    """Whether sending the request twice does no harm: an idempotent method, or an Idempotency-Key."""
    return method in IDEMPOTENT_METHODS or any(k.lower() == "idempotency-key" for k in headers)


def should_retry(status: int, answer_headers: Mapping[str, str], retry_safe: bool) -> bool:
    """Whether an answer with `status` (and its lower-case headers) is worth sending the request again."""
    if status in RETRY_ANY_REQUEST:
        return True
    if status in RETRY_IF_SAFE:
        return retry_safe
    return status == 409 and retry_safe and retry_after_seconds(answer_headers.get("retry-after")) is not None


def retry_after_seconds(value: str | None) -> float | None:
    """A `Retry-After` given in seconds, or None (absent, or an HTTP date, which agentmem never sends)."""
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())


def retry_delay(attempt: int, base: float, cap: float, retry_after: str | None = None) -> float:
    """Seconds to wait before retry `attempt + 1`: backoff with full jitter, at least `Retry-After` (within `cap`)."""
    delay = backoff(attempt, base, cap, jitter="full")
    server_says = retry_after_seconds(retry_after)
    return delay if server_says is None else min(cap, max(delay, server_says))
