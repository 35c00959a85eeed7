"""powertools' idempotency exceptions reach the client as the contract's errors, Retry-After included."""

from __future__ import annotations

import json

import pytest
from agentmem.api.idempotency import IN_PROGRESS_RETRY_AFTER_SECONDS, contract_errors
from agentmem.api.resolver import make_resolver
from agentmem.domain.errors import BackendUnavailable, Conflict, StillInProgress
from aws_lambda_powertools.event_handler.router import Router
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyInconsistentStateError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)

from tests.conftest import load_event


@pytest.mark.parametrize(("raised", "expected"), [
    (IdempotencyValidationError, Conflict),
    (IdempotencyAlreadyInProgressError, StillInProgress),
    (IdempotencyPersistenceLayerError, BackendUnavailable),
    (IdempotencyInconsistentStateError, BackendUnavailable),
])
def test_each_idempotency_exception_becomes_its_domain_error(raised: type[Exception], expected: type[Exception]):
    with pytest.raises(expected) as caught, contract_errors():
        raise raised("from powertools")
    assert type(caught.value) is expected and isinstance(caught.value.__cause__, raised)


def answer_to(raised: type[Exception]) -> dict:
    router = Router()

    @router.get("/v1/health")
    def health() -> dict:
        with contract_errors():
            raise raised("from powertools")

    return make_resolver(router).resolve(load_event("service/health"), None)


def test_a_request_while_its_key_is_in_progress_is_409_with_retry_after():
    answer = answer_to(IdempotencyAlreadyInProgressError)
    assert answer["statusCode"] == 409
    assert answer["multiValueHeaders"]["Retry-After"] == [str(IN_PROGRESS_RETRY_AFTER_SECONDS)]
    error = json.loads(answer["body"])["error"]
    assert error["code"] == "conflict" and "still being processed" in error["message"]


def test_a_key_reused_with_another_body_is_409_and_a_store_failure_503():
    reused, down = answer_to(IdempotencyValidationError), answer_to(IdempotencyPersistenceLayerError)
    assert reused["statusCode"] == 409 and json.loads(reused["body"])["error"]["code"] == "conflict"
    assert "Retry-After" not in (reused.get("multiValueHeaders") or {})
    assert down["statusCode"] == 503
    assert json.loads(down["body"])["error"]["message"] == (
        "the idempotency store is unavailable (IdempotencyPersistenceLayerError); retry")
