"""Time and ids, injectable so tests can control them."""

from __future__ import annotations

import time
import uuid


def now() -> float:
    return time.time()


def new_id(prefix: str) -> str:
    """A new identifier, valid under the contract's id rules, e.g. `run_9f0c...`."""
    return f"{prefix}_{uuid.uuid4().hex}"
