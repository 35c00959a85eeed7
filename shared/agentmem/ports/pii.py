"""Port for finding personal data in text."""

from __future__ import annotations

from typing import Protocol

from agentmem.domain.pii import PiiSpan


class PiiDetector(Protocol):
    """Finds personal data in a text.

    ``detect`` returns spans sorted by start and not overlapping, each with
    ``text[span.start:span.end] == span.value`` and a Presidio entity type name.
    """

    def detect(self, text: str) -> list[PiiSpan]: ...
