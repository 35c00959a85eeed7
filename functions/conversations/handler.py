"""Users' conversations: masked transcripts, unmasking, erasure (and profile and facts when present)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from agentmem.api.idempotency import append_turns_once
from agentmem.api.observability import count, inject_lambda_context, metrics, tracer
from agentmem.api.resolver import IdempotencyKey, PathId, json_response, make_resolver, no_content
from agentmem.domain.timestamps import iso_utc
from agentmem.ports.transcripts import StoredTurn
from agentmem.service.conversations import ConversationService, TurnInput
from agentmem.wiring import get_services
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import Router
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field

from functions.conversations import item_routes, profile_routes, user_routes

MAX_TURN_CHARS = 32_000
MAX_TURNS_PER_REQUEST = 50
MAX_UNMASK_CHARS = 100_000
# A turn's seq has 12 digits in DynamoDB's sort key.
MAX_SEQ = 999_999_999_999

router = Router()


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TurnIn(_Body):
    # Only the conversation's own voices: agentmem's injected system messages never go back in.
    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=MAX_TURN_CHARS)


class AppendTurnsRequest(_Body):
    turns: list[TurnIn] = Field(min_length=1, max_length=MAX_TURNS_PER_REQUEST)


class UnmaskRequest(_Body):
    text: str = Field(max_length=MAX_UNMASK_CHARS)


def turn_json(turn: StoredTurn) -> dict[str, Any]:
    return {
        "seq": turn.seq,
        "role": turn.role,
        "content": turn.content,
        "tokens": turn.tokens,
        "createdAt": iso_utc(turn.created_at),
    }


def conversations() -> ConversationService:
    return get_services().conversations


@router.post(
    "/v1/users/<userId>/threads/<threadId>/turns",
    summary="Append turns; personal data is replaced by tokens before anything is stored",
)
def append_turns(
    userId: PathId,
    threadId: PathId,
    request: Annotated[AppendTurnsRequest, Body()],
    idempotency_key: IdempotencyKey = None,
) -> Response[Any]:
    service = conversations()

    def append() -> dict[str, Any]:
        stored = service.append_turns(
            userId, threadId, [TurnInput(role=turn.role, content=turn.content) for turn in request.turns],
            idempotency_key,
        )
        if idempotency_key is not None:  # found again if these turns are deleted, to forget the key with them
            service.remember_append_key(userId, threadId, stored, idempotency_key)
        count("TurnsAppended", len(stored))
        return {"userId": userId, "threadId": threadId, "turns": [turn_json(turn) for turn in stored]}

    if idempotency_key is None:
        return json_response(201, append())
    # A retry with the key is answered with the first append's turns; nothing is stored again.
    answer = append_turns_once(
        get_services().turns_idempotency_store(), service.tenant, userId, threadId,
        [turn.model_dump() for turn in request.turns], idempotency_key, append,
        lambda_context=router.lambda_context,
    )
    return json_response(201, answer)


@router.get("/v1/users/<userId>/threads/<threadId>/turns", summary="A thread's masked turns, oldest first")
def list_turns(
    userId: PathId,
    threadId: PathId,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> dict[str, Any]:
    page = conversations().list_turns(userId, threadId, limit, cursor)
    return {"items": [turn_json(turn) for turn in page.items], "nextCursor": page.next_cursor}


@router.post(
    "/v1/users/<userId>/threads/<threadId>/unmask",
    summary="Restore this user's tokens in a text (from any of their threads; never another user's)",
)
def unmask_text(userId: PathId, threadId: PathId, request: Annotated[UnmaskRequest, Body()]) -> dict[str, Any]:
    return {"text": conversations().unmask(userId, threadId, request.text)}


DELETION_LIMITS = """\
**What is not undone.** Transcripts are append-only: a stored turn is never edited, but the user may
delete their turns. What consolidation already learnt from them stays: the profile's text and the facts
(edit the profile with `PUT .../profile`, delete facts with `DELETE .../facts/{factId}`, or erase the
user), and so do runs and lessons that quoted them. Everything else about the turns goes with them:
the turns, their entries in the recall indexes (keyword and vector), so `retrieve` never recalls them,
and the idempotency records of the appends that stored them, so a retried append stores its turns again
rather than answering with turns that are gone. The profile's consolidation watermark for the thread
goes back to the last turn kept (a new profile version with the same text), so turns appended next,
which get the deleted `seq`s again, are consolidated like any new turn. The vault keeps the user's
tokens (other threads may use them); erasing the user destroys them.

**Windows.** A turn appended while the deletion runs, at or after `fromSeq`, is deleted too. An
indexing or consolidation already running on the deleted turns may finish after the deletion: a turn
it indexes that is gone is never recalled (recall reads the transcript), and deleting again removes it.
"""


@router.delete(
    "/v1/users/<userId>/threads/<threadId>/turns",
    summary="Delete a thread's turns from fromSeq on: the tail of the transcript, answered with what went",
    description="Removes every turn with `seq >= fromSeq` and answers 200 with them (masked, oldest first): "
    "`turns` is empty when there were none (idempotent). The next turn appended gets `fromSeq` as its "
    "`seq`.\n\n" + DELETION_LIMITS,
)
def delete_turns(
    userId: PathId,
    threadId: PathId,
    fromSeq: Annotated[int, Query(ge=1, le=MAX_SEQ, description="The first seq to delete")],
) -> dict[str, Any]:
    removed = get_services().erasure.delete_turns(userId, threadId, fromSeq)
    count("TurnsDeleted", len(removed))
    return {"userId": userId, "threadId": threadId, "turns": [turn_json(turn) for turn in removed]}


@router.delete(
    "/v1/users/<userId>/threads/<threadId>",
    summary="Delete a thread: every turn, their recall entries and idempotency records",
    description="Idempotent; 204 also for a thread with no turns. A thread of the same id started later "
    "begins again at `seq` 1.\n\n" + DELETION_LIMITS,
)
def delete_thread(userId: PathId, threadId: PathId) -> Response[Any]:
    removed = get_services().erasure.delete_turns(userId, threadId, 1)
    count("TurnsDeleted", len(removed))
    return no_content()


ERASE_DESCRIPTION = """\
Erase the user. Idempotent; 204.

**What happens, in order.** (1) The user's data keys are destroyed. Every original value of the user
is an AES-256-GCM ciphertext decryptable only with the user's data key, and that key exists only
wrapped (KMS, the tenant key) in the key store: a DynamoDB table of its own without point-in-time
recovery or streams (locally `keys.db`, a file apart from the data files). (2) Every record of the
user is deleted: the idempotency records of the user's keyed turn appends (first, while the keys
that find them still exist), transcripts, vault entries and counters, the facts and their vectors,
the profile and its versions, the user's items and their vectors, the runs made for the user (every
agent's, found through a per-user index), the run text of the lessons made from those runs, and the
user's entry in the users listing (`GET /v1/users`). Locally the event outbox's events naming the user go too,
and every SQLite file of the data folder is then checkpointed (`wal_checkpoint(TRUNCATE)`), with
`secure_delete` on, so neither a file nor its `-wal` keeps a deleted row or the user id.

**Replays.** An append sent again after the erase with the same `Idempotency-Key` finds no record:
it is answered as for a user never seen (its turns are appended and masked anew, under a new key),
never with the erased turns.

**Tokens.** The eight hex characters inside a user's tokens are an HMAC keyed with the user's own data
key, not with any tenant secret. Once the key is destroyed, a token left anywhere (a lesson that quoted
it, a copy, a backup) names a scope nobody can compute again, so it cannot be linked back to the user
id, by anyone, the tenant's operators included. Tokens made before this rule (an HMAC under the tenant's
secret) keep that link for as long as they are stored.

**The guarantee.** Once this returns, no copy of the user's values can be decrypted: not the
tenant table's point-in-time recovery (35 days), not a backup or copy of the data files, because
the one key that decrypts them is gone from the only place that held it. Nothing stored ever held a
raw value to begin with: texts are masked before storage. Lessons made from the user's runs belong
to the agents and stay, but lose the run's text: each keeps only its editor's comment, its digest is
rebuilt from that comment and embedded again (at once, or by the pending sweep when the embedder is
down), so no lesson, vector or file keeps the input or output of the user's runs, masked or not.

**Windows and limits.** A request running concurrently with the erase may write a record after it
(a turn, a run); its values are encrypted under the destroyed key or a new one; erase again to
remove the record. A warm function keeps an unwrapped key in memory for at most 5 minutes, but
reads the key store before every use, so it never uses a destroyed key again. Deleted DynamoDB
items are gone for every read at once; their removal from AWS's storage media follows AWS's own
deletion process. Keep the key table out of any backup plan: a backup of it taken before the erase
keeps the key for as long as that backup lives. The tenant KMS key is not deleted (it wraps every
user's key). The event archive (14 days by default) and dead-letter queues hold user ids and
sequence numbers, never content; logs hold a hash of the user id, never the id or content.
"""


@router.delete(
    "/v1/users/<userId>",
    summary="Erase a user: data keys destroyed first, then idempotency records, transcripts, vault, profile, "
    "facts, items, runs",
    description=ERASE_DESCRIPTION,
)
def erase_user(userId: PathId) -> Response[Any]:
    get_services().erasure.erase_user(userId)
    count("UsersErased", 1)
    return no_content()


# The profile and facts routes, the items' and the user-level ones live in modules of their own, served
# by this same function.
routers = [router, profile_routes.router, item_routes.router, user_routes.router]
app = make_resolver(*routers)


@inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
