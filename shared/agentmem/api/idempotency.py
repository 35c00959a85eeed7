"""The Idempotency-Key of `POST .../feedback` and `POST .../turns`, with powertools' idempotency utility.

Two layers keep the contract's promise ("the same key gives the same answer
and one memory, however often it is sent"):

- the service derives the feedback id from the key and writes conditionally,
  so however requests race, there is one feedback and one memory;
- here, powertools' `idempotent_function` records the answer under the key:
  a retry is answered with the very body the first request got, without
  running the use case again; a request while the first is still running
  gets `IdempotencyAlreadyInProgressError`; the key reused with another body
  gets `IdempotencyValidationError`. Both leave this module as domain errors
  (`StillInProgress`, `Conflict`: 409, see api/errors.py), a store failure as
  `BackendUnavailable` (503).

A failed submission deletes its in-progress record (powertools does), so a
client mistake never blocks the key. A replay whose lesson is still pending
publishes its index request again, as the service's own retry path did (the
first event may be what failed). The records live 24 hours; after that the
service's derived id still gives the same feedback.

Turn appends follow the same rules (`append_turns_once`): a retried append with its key is answered
with the first append's turns and stores nothing; the key with other turns is a 409. Their records
hold the answer, which is the masked turns (tokens, never the personal values). The transcript store
also writes the key with the turns, in their transaction (ports/transcripts.py `AppendKey`): should
the process die after the turns and before this record completes, the retry that runs `append` again
gets the turns already stored, not a second copy.

Concurrent calls with one key: the first runs, the others get 409 with `Retry-After`
(api/errors.py) and, sent again, the first one's answer (MemoryClient does that).

Persistence: DynamoDB's layer on the tenant table in AWS (`dynamodb_store`),
`SqliteIdempotencyStore` locally; both built lazily by the wiring.

powertools' idempotency package imports boto3 (its DynamoDB layer) as it loads: about 20 MiB and
50 ms that a request without a key never needs, so it is imported here on the first keyed request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentmem.domain.errors import AgentMemError, BackendUnavailable, Conflict, StillInProgress
from agentmem.domain.models import Rating
from agentmem.service.memory import MemoryService

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import (
        BasePersistenceLayer,
        IdempotencyConfig,
        IdempotentHookFunction,
    )
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

log = logging.getLogger(__name__)
EXPIRES_AFTER_SECONDS = 24 * 60 * 60
# What a caller is told to wait when the same Idempotency-Key is still being processed.
IN_PROGRESS_RETRY_AFTER_SECONDS = 1
# Record keys read `feedback#<sha256 of tenant, agent, run and Idempotency-Key>`.
FEEDBACK_KEY_PREFIX = "feedback"
# What identifies a submission, and what must be the same when its key is sent again.
FEEDBACK_KEY_FIELDS = "[tenant, agentId, runId, idempotencyKey]"
FEEDBACK_PAYLOAD_FIELDS = "body"
TURNS_KEY_PREFIX = "turns"
TURNS_KEY_FIELDS = "[tenant, userId, threadId, idempotencyKey]"
# The tenant table's TTL attribute (infra/constructs/table.py): DynamoDB deletes records once they expire.
DYNAMODB_TTL_ATTRIBUTE = "ttl"


def idempotency_partition(tenant: str) -> str:
    """The tenant table partition holding the tenant's idempotency records (tenant first, like every key)."""
    return f"T#{tenant}#IDEMPOTENCY"


def dynamodb_store(table_name: str, tenant: str, client: Any = None) -> BasePersistenceLayer:
    """powertools' DynamoDB layer on the tenant table: pk `T#{tenant}#IDEMPOTENCY`, sk `feedback#<hash>`."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer
    from botocore.config import Config

    return DynamoDBPersistenceLayer(
        table_name=table_name,
        key_attr="pk",
        sort_key_attr="sk",
        static_pk_value=idempotency_partition(tenant),
        expiry_attr=DYNAMODB_TTL_ATTRIBUTE,
        boto3_client=client,
        # As the record store's client: a short connect and read timeout, standard retries.
        boto_config=Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=2, read_timeout=5),
    )


def feedback_config(
    lambda_context: Any = None,
    expires_after_seconds: int = EXPIRES_AFTER_SECONDS,
    response_hook: IdempotentHookFunction | None = None,
) -> IdempotencyConfig:
    """The idempotency settings of a feedback submission.

    With the Lambda context, an in-progress record expires when the invocation
    would time out, so a crashed request blocks its key for seconds, not a day.
    """
    return _config(FEEDBACK_KEY_FIELDS, lambda_context, expires_after_seconds, response_hook)


def turns_config(lambda_context: Any = None, expires_after_seconds: int = EXPIRES_AFTER_SECONDS) -> IdempotencyConfig:
    """The idempotency settings of a turn append: keyed by tenant, user, thread and key; the turns must match."""
    return _config(TURNS_KEY_FIELDS, lambda_context, expires_after_seconds, None)


def _config(
    key_fields: str, lambda_context: Any, expires_after_seconds: int, response_hook: IdempotentHookFunction | None
) -> IdempotencyConfig:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    return IdempotencyConfig(
        event_key_jmespath=key_fields,
        payload_validation_jmespath=FEEDBACK_PAYLOAD_FIELDS,
        raise_on_no_idempotency_key=True,
        expires_after_seconds=expires_after_seconds,
        hash_function="sha256",
        lambda_context=lambda_context,
        response_hook=response_hook,
    )


def submit_feedback_once(
    persistence: BasePersistenceLayer,
    memory: MemoryService,
    agent_id: str,
    run_id: str,
    rating: Rating,
    masked_comment: str | None,
    idempotency_key: str,
    *,
    lambda_context: Any = None,
    on_created: Callable[[], None] | None = None,
) -> dict[str, str]:
    """The answer body of a feedback submission carrying an Idempotency-Key: the first one's, every time.

    `masked_comment` is the comment as `MemoryService.mask_comment` masked it: powertools hashes it,
    and it is stored as given. `on_created` runs only when this call stored a new feedback (not on a replay).
    """
    from aws_lambda_powertools.utilities.idempotency import idempotent_function

    submission = feedback_submission(memory.tenant, agent_id, run_id, idempotency_key, rating, masked_comment)
    with contract_errors():
        _configure_once(persistence)
        # A config per call: the Lambda context is the invocation's, and the local server runs requests in threads.
        submit = idempotent_function(
            _submit,
            data_keyword_argument="submission",
            persistence_store=persistence,
            config=feedback_config(lambda_context, response_hook=_republish_pending(memory, submission)),
            key_prefix=FEEDBACK_KEY_PREFIX,
        )
        answer: dict[str, str] = submit(submission=submission, memory=memory, on_created=on_created)
    return answer


def feedback_submission(
    tenant: str, agent_id: str, run_id: str, idempotency_key: str, rating: str, comment: str | None
) -> dict[str, Any]:
    """What powertools hashes of a submission: the fields of its key, and the `body` a retry must repeat."""
    return {
        "tenant": tenant,
        "agentId": agent_id,
        "runId": run_id,
        "idempotencyKey": idempotency_key,
        "rating": rating,
        "comment": comment,
        # Compared the way the service compares bodies: no comment is the same as an empty one.
        "body": [rating, comment or ""],
    }


_configure_lock = threading.Lock()


def _configure_once(
    persistence: BasePersistenceLayer, config: IdempotencyConfig | None = None, prefix: str = FEEDBACK_KEY_PREFIX
) -> None:
    # powertools marks a layer configured before it has read the config: two threads configuring
    # a new layer at once could let one hash without the key fields. Configure it once, under a lock.
    with _configure_lock:
        if not persistence.configured:
            persistence.configure(config or feedback_config(), key_prefix=prefix)


def append_turns_once(
    persistence: BasePersistenceLayer,
    tenant: str,
    user_id: str,
    thread_id: str,
    turns: list[dict[str, str]],
    idempotency_key: str,
    append: Callable[[], dict[str, Any]],
    *,
    lambda_context: Any = None,
) -> dict[str, Any]:
    """The answer body of a turn append carrying an Idempotency-Key: the first append's, every time.

    `append` stores the turns and returns the answer body; it runs only for the first call with the key.
    """
    from aws_lambda_powertools.utilities.idempotency import idempotent_function

    submission = {"tenant": tenant, "userId": user_id, "threadId": thread_id,
                  "idempotencyKey": idempotency_key, "body": turns}
    with contract_errors():
        _configure_once(persistence, turns_config(), TURNS_KEY_PREFIX)
        run = idempotent_function(
            _append,
            data_keyword_argument="submission",
            persistence_store=persistence,
            config=turns_config(lambda_context),
            key_prefix=TURNS_KEY_PREFIX,
        )
        answer: dict[str, Any] = run(submission=submission, append=append)
    return answer


def _append(*, submission: dict[str, Any], append: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    return append()


def forget_turn_appends(
    persistence: BasePersistenceLayer, tenant: str, user_id: str, thread_id: str, idempotency_keys: list[str]
) -> None:
    """Delete the idempotency records of a thread's appends whose turns are being deleted.

    A retry with one of these keys then appends its turns again (they are gone), instead of answering
    with turns that no longer exist.
    """
    with contract_errors():
        _configure_once(persistence, turns_config(), TURNS_KEY_PREFIX)
        for key in idempotency_keys:
            submission = {"tenant": tenant, "userId": user_id, "threadId": thread_id, "idempotencyKey": key}
            persistence.delete_record(data=submission, exception=TurnsDeleted())


@contextmanager
def contract_errors() -> Iterator[None]:
    """powertools' idempotency exceptions as the domain errors the contract maps (api/errors.py)."""
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError,
        IdempotencyInconsistentStateError,
        IdempotencyPersistenceLayerError,
        IdempotencyValidationError,
    )

    try:
        yield
    except IdempotencyValidationError as exc:
        raise Conflict("this Idempotency-Key was used with a different body") from exc
    except IdempotencyAlreadyInProgressError as exc:
        raise StillInProgress(
            "a request with this Idempotency-Key is still being processed; retry after the Retry-After seconds",
            retry_after=IN_PROGRESS_RETRY_AFTER_SECONDS,
        ) from exc
    except (IdempotencyPersistenceLayerError, IdempotencyInconsistentStateError) as exc:
        raise BackendUnavailable(
            "idempotency", f"the idempotency store is unavailable ({type(exc).__name__}); retry"
        ) from exc


class TurnsDeleted(Exception):
    """Why a turn append's idempotency record is deleted (powertools logs the exception's name)."""


def _republish_pending(memory: MemoryService, submission: dict[str, Any]) -> IdempotentHookFunction:
    """A replay's hook: a lesson still pending asks again to be indexed, then the stored answer goes back.

    The first request's event may be what failed (it answered 202 all the same; the lesson waits,
    pending). Before powertools answered retries, the service's retry path published it again;
    a replay keeps that: it runs the same path, which finds the stored feedback and republishes.
    """

    def hook(response: Any, idempotent_data: DataRecord) -> Any:
        try:
            stored = memory.store.get_memory(memory.tenant, submission["agentId"], str(response["memoryId"]))
            if stored is not None and stored.status == "pending":
                _submit(submission=submission, memory=memory, on_created=None)
        except Exception as exc:
            # The answer stands whatever happens here (the agent disabled since, the store down):
            # the lesson stays pending, as it would have without the retry.
            code = exc.code if isinstance(exc, AgentMemError) else type(exc).__name__
            log.warning("pending lesson not republished on replay", extra={"error": code})
        return response

    return hook


def _submit(
    *, submission: dict[str, Any], memory: MemoryService, on_created: Callable[[], None] | None
) -> dict[str, str]:
    receipt = memory.submit_feedback(
        submission["agentId"],
        submission["runId"],
        submission["rating"],
        submission["comment"],
        submission["idempotencyKey"],
        masked=True,  # the handler masked the comment before powertools hashed it
    )
    if receipt.created and on_created is not None:
        on_created()
    return {"feedbackId": receipt.feedback_id, "memoryId": receipt.memory_id, "status": "accepted"}
