"""How long to wait before retrying: the one backoff every retrying part of agentmem uses."""

from __future__ import annotations

import random
from typing import Literal


def backoff(attempt: int, base: float, cap: float, *, jitter: Literal["equal", "full"] = "equal") -> float:
    """Seconds to wait before retry `attempt + 1` (0-based): `base * 2**attempt`, at most `cap`, with jitter.

    "equal" keeps at least half of it (servers' own retries: a floor so they do back off); "full"
    draws from 0 to all of it (many independent clients: spreads them out best). Either way
    retrying callers stop colliding in step.
    """
    ceiling = min(cap, base * 2**attempt)
    if jitter == "full":
        return random.uniform(0, ceiling)
    return ceiling * (0.5 + random.random() / 2)
