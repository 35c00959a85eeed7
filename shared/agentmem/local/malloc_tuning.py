"""glibc's allocator told to keep fewer arenas in a long-running `agentmem serve` process.

glibc gives a thread that allocates while another holds an arena an arena of its own (up to 8 per
core), and freed memory stays in the arena that had it. The server's threads (uvicorn's, one delivery
thread per consumer, the sweep, the warm-up) each kept some: two arenas save about 22 MiB resident
after one turn and one retrieve (`benchmarks/bench_serve_rss.py`, 393 -> 371 MiB). Python's GIL
serialises most allocations anyway. (`malloc_trim` after the start-up warm-up was measured too and
saved nothing once the first turn and retrieve had run.)

Nothing is done where the C library is not glibc (musl, macOS).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

# mallopt's parameter number for the arena limit (glibc's malloc.h: M_ARENA_MAX -8).
_M_ARENA_MAX = -8


@cache
def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt  # noqa: B018 (glibc's; musl has no mallopt)
    except (OSError, AttributeError):
        return None
    return libc


def limit_arenas(arenas: int = 2) -> bool:
    """At most `arenas` malloc arenas from now on (call it before threads start); False if not glibc."""
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas))

