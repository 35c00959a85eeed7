"""Clients built on first use: no AWS client exists before a request needs it (cold starts pay only for use)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class LazyClient(Generic[T]):
    """Holds a client that is built on the first call, once, even when threads race to it.

    An adapter given a ready client (a test's, or one shared by the caller) uses it as it is.
    """

    def __init__(self, build: Callable[[], T], client: T | None = None):
        self._build = build
        self._client = client
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._client is not None

    def __call__(self) -> T:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._build()
        return self._client
