"""The tracing provider of a process whose tracing is off (`POWERTOOLS_TRACE_DISABLED`, as `agentmem serve` sets).

powertools' Tracer still opens a subsegment around every handler when tracing is disabled, on X-Ray's
recorder: importing `aws_xray_sdk.core` for that costs a local server 40 MiB of resident memory (it
patches botocore's and the HTTP libraries' hooks on the way) for segments that are thrown away. This
provider records nothing and imports nothing; in Lambda, with tracing on, the Tracer keeps X-Ray's.
"""

from __future__ import annotations

import numbers
import traceback
from collections.abc import AsyncGenerator, Generator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from aws_lambda_powertools.tracing.base import BaseProvider, BaseSegment


class UntracedSegment(BaseSegment):
    """A subsegment that keeps nothing."""

    def close(self, end_time: int | None = None) -> None:
        return None

    def add_subsegment(self, subsegment: Any) -> None:
        return None

    def remove_subsegment(self, subsegment: Any) -> None:
        return None

    def put_annotation(self, key: str, value: str | numbers.Number | bool) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        return None

    def add_exception(
        self, exception: BaseException, stack: list[traceback.StackSummary], remote: bool = False
    ) -> None:
        return None


class UntracedProvider(BaseProvider):
    """powertools' tracing provider interface, with every segment an `UntracedSegment`."""

    @contextmanager
    def in_subsegment(self, name: str | None = None, **kwargs: Any) -> Generator[BaseSegment, None, None]:
        yield UntracedSegment()

    @asynccontextmanager
    async def in_subsegment_async(self, name: str | None = None, **kwargs: Any) -> AsyncGenerator[BaseSegment, None]:
        yield UntracedSegment()

    def put_annotation(self, key: str, value: str | numbers.Number | bool) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        return None

    def patch(self, modules: Sequence[str]) -> None:
        return None

    def patch_all(self) -> None:
        return None
