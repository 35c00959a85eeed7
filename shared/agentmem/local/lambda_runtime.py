"""Calling the very Lambda handlers AWS runs, in-process: their entry points and a Lambda context.

Lambda runs one request at a time in an execution environment, and the handlers rely on it:
powertools' resolvers keep the current event in module state. So one process is one environment
per function here: invocations of the same function never overlap (a lock per function), while
different functions run side by side, as separate Lambda functions do.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
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


def load_handler(function_name: str, environment: int = 0) -> Handler:
    """The `lambda_handler` of functions/<name>/handler.py, as loaded in execution environment `environment`.

    Environment 0 is the module as imported; any other is a fresh copy of the module (its own
    resolver and state), as a second Lambda environment of the function would have.
    """
    from functions.catalog import by_name

    name = by_name(function_name).module
    if environment == 0:
        return importlib.import_module(name).lambda_handler  # type: ignore[no-any-return]
    copy_name = f"{name}__environment_{environment}"
    with _environments_lock:
        module = sys.modules.get(copy_name)
        if module is None:
            origin = importlib.util.find_spec(name)
            spec = importlib.util.spec_from_file_location(copy_name, origin.origin if origin else None)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[copy_name] = module
    return module.lambda_handler  # type: ignore[no-any-return]


_environments: dict[tuple[str, int], threading.Lock] = {}
_environments_lock = threading.RLock()


def _environment(function_name: str, environment: int) -> threading.Lock:
    with _environments_lock:
        return _environments.setdefault((function_name, environment), threading.Lock())


def invoke(function_name: str, event: dict[str, Any], *, environment: int = 0) -> Any:
    """Run one function on one event, as Lambda would: one invocation at a time per execution environment.

    Everything local uses environment 0, so one function's invocations never overlap; a test that
    models two concurrent Lambda environments passes another number.
    """
    handler = load_handler(function_name, environment)
    with _environment(function_name, environment):
        return handler(event, LocalLambdaContext(function_name))
