"""With tracing off, handlers run under powertools' Tracer on the untraced provider, which loads no X-Ray."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from agentmem.api.untraced import UntracedProvider
from aws_lambda_powertools import Tracer


def test_a_handler_traced_by_the_untraced_provider_returns_and_raises_as_it_would() -> None:
    tracer = Tracer(service="test-untraced", provider=UntracedProvider(), disabled=True)

    @tracer.capture_lambda_handler
    def handler(event: dict[str, int], context: object) -> int:
        if event["n"] < 0:
            raise ValueError("negative")
        return event["n"] * 2

    @tracer.capture_method
    def helper(n: int) -> int:
        return n + 1

    assert handler({"n": 21}, None) == 42
    assert helper(1) == 2
    with pytest.raises(ValueError, match="negative"):
        handler({"n": -1}, None)


def test_with_tracing_off_the_shared_tracer_does_not_load_the_xray_recorder() -> None:
    script = textwrap.dedent("""
        import os, sys
        os.environ["POWERTOOLS_TRACE_DISABLED"] = "true"
        from agentmem.api.observability import tracer
        from agentmem.api.untraced import UntracedProvider
        print(isinstance(tracer.provider, UntracedProvider), "aws_xray_sdk.core" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]


def test_with_tracing_on_the_shared_tracer_keeps_the_xray_recorder() -> None:
    script = textwrap.dedent("""
        import os
        os.environ["POWERTOOLS_TRACE_DISABLED"] = "false"
        os.environ["AWS_LAMBDA_FUNCTION_NAME"] = "agentmem-test"
        from agentmem.api.observability import tracer
        print(type(tracer.provider).__module__.split(".")[0])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "aws_xray_sdk"
