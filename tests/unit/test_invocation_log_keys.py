"""Log lines of handlers running side by side in one process (as `agentmem serve` runs them) name their own
invocation: `inject_lambda_context` keeps the Lambda context keys per thread, not in the shared formatter."""

from __future__ import annotations

import threading
from typing import Any

from agentmem.api.observability import inject_lambda_context, logger
from agentmem.local.lambda_runtime import LocalLambdaContext


def test_two_functions_logging_at_once_each_label_their_own_lines(function_log_lines):
    both_started = threading.Barrier(2, timeout=10)

    def make(name: str) -> Any:
        @inject_lambda_context
        def lambda_handler(event: dict[str, Any], context: Any) -> str:
            # Both invocations have set their keys before either logs: a shared formatter would now hold
            # only the keys of whichever started last.
            both_started.wait()
            for n in range(50):
                logger.info("working", extra={"step": n, "own": name})
            both_started.wait()
            logger.info("done", extra={"own": name})
            return context.aws_request_id

        return lambda_handler

    contexts = {name: LocalLambdaContext(name) for name in ("indexer", "retrieve")}
    results: dict[str, str] = {}
    threads = [threading.Thread(target=lambda n=name: results.__setitem__(n, make(n)({}, contexts[n])))
               for name in contexts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    lines = function_log_lines()
    assert len(lines) == 2 * 51
    for line in lines:
        assert line["function_name"] == line["own"]
        assert line["function_request_id"] == contexts[line["own"]].aws_request_id
        assert line["function_arn"].endswith(f"agentmem-{line['own']}")
    assert results == {name: context.aws_request_id for name, context in contexts.items()}


def test_a_line_logged_after_the_invocation_carries_no_function_keys(function_log_lines):
    @inject_lambda_context
    def lambda_handler(event: dict[str, Any], context: Any) -> None:
        logger.info("inside")

    lambda_handler({}, LocalLambdaContext("feedback"))
    logger.info("outside")
    inside, outside = function_log_lines()
    assert inside["function_name"] == "feedback" and inside["cold_start"] is True
    assert "function_name" not in outside and "function_request_id" not in outside


def test_only_the_first_invocation_of_a_handler_is_a_cold_start(function_log_lines):
    @inject_lambda_context
    def lambda_handler(event: dict[str, Any], context: Any) -> None:
        logger.info("call")

    for _ in range(3):
        lambda_handler({}, LocalLambdaContext("sweeper"))
    assert [line["cold_start"] for line in function_log_lines()] == [True, False, False]
