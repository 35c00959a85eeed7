"""Calling the very Lambda handlers AWS runs, in-process: their entry points and a Lambda context.

Lambda runs one request at a time in an execution environment, and the handlers rely on it:
powertools' resolvers keep the current event in module state. So one process is one environment
per function here: invocations of the same function never overlap (a lock per function), while
different functions run side by side, as separate Lambda functions do.
"""

from __future__ import annotations

import importlib
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[[dict[str, Any], Any], Any]


@dataclass
class LocalLambdaContext:
    """The parts of Lambda's context object that powertools reads."""

    function_name: str
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "local"
    log_stream_name: str = "local"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:local:000000000000:function:agentmem-{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def load_handler(function_name: str) -> Handler:
    """The `lambda_handler` of functions/<name>/handler.py."""
    from functions.catalog import by_name

    module = importlib.import_module(by_name(function_name).module)
    return module.lambda_handler  # type: ignore[no-any-return]


_environments: dict[str, threading.Lock] = {}
_environments_lock = threading.Lock()


def _environment(function_name: str) -> threading.Lock:
    with _environments_lock:
        return _environments.setdefault(function_name, threading.Lock())


def invoke(function_name: str, event: dict[str, Any]) -> Any:
    """Run one function on one event, as Lambda would: never two invocations of one function at once."""
    handler = load_handler(function_name)
    with _environment(function_name):
        return handler(event, LocalLambdaContext(function_name))
