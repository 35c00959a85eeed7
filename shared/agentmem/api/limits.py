"""The contract's request size limit, defined once for every layer that enforces it.

The resolver every HTTP function uses (in AWS and locally) refuses a larger body, and the local
fronts (`agentmem serve`, `agentmem wall`'s proxy) refuse it before reading it all: a body of
exactly `MAX_BODY_BYTES` passes each of them, one byte more is 413 `too_large`. API Gateway itself
stops at 10 MB and Lambda at 6 MB; nothing agentmem accepts comes near this.
"""

from __future__ import annotations

MAX_BODY_BYTES = 512 * 1024
MAX_BODY_TEXT = "512 KiB"


def too_large_message() -> str:
    """The message of the 413 every layer answers, naming the limit in bytes."""
    return f"the body exceeds {MAX_BODY_BYTES} bytes ({MAX_BODY_TEXT})"
