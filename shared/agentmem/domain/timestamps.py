"""Timestamps as the API writes them."""

from __future__ import annotations

from datetime import UTC, datetime


def iso_utc(ts: float) -> str:
    """An epoch timestamp as ISO 8601 UTC with milliseconds (`2026-01-31T09:30:00.000Z`)."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
