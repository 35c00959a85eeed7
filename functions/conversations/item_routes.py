"""The key-addressed items of a user or an agent (LangGraph's store), served by the `conversations` function.

An item is a JSON object under a key, in a namespace below its owner: `("memories",)` of user
`u-1` is `/v1/users/u-1/items?namespace=memories`. Namespace labels are joined with "." in a query
string (LangGraph forbids "." in a label), and sent as a list in a body. A user's item values are
masked like turns (an agent's with the agent's own subject); an indexed item is found by meaning through
`POST .../items/search`; an item put with a `ttl` (minutes) expires, and reads refresh it by default.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Annotated, Any

from agentmem.api.models import Number
from agentmem.api.resolver import PathId, no_content
from agentmem.domain.errors import InvalidInput, TooLarge
from agentmem.domain.timestamps import iso_utc
from agentmem.ports.items import Item, OwnerKind
from agentmem.service.items import ItemHit, ItemService
from agentmem.wiring import get_services
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import Router
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

MAX_VALUE_BYTES = 64_000
MAX_DEPTH = 10
# No "." (the query string joins labels with it) and no control characters, C0, DEL or C1 (the stores
# join with them, and a NUL in a key is truncation waiting to happen in any C library below).
LABEL_PATTERN = r"^[^.\x00-\x1f\x7f-\x9f]{1,128}$"
KEY_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]{1,512}$"
Label = Annotated[str, Field(pattern=LABEL_PATTERN)]
NamespaceQuery = Annotated[str, Query(max_length=1400, description="The namespace's labels joined with '.'")]
KeyQuery = Annotated[str, Query(min_length=1, max_length=512, pattern=KEY_PATTERN)]
RefreshQuery = Annotated[bool, Query(description="Restart the item's TTL, if it has one (default true)")]
# Ten years: LangGraph's TTLs are minutes.
MAX_TTL_MINUTES = 10 * 365 * 24 * 60
# A page of a search; offset + limit stays within what one vector search returns (ports.vectors.MAX_K).
MAX_SEARCH_LIMIT = 1000
MAX_SEARCH_OFFSET = 9000

router = Router()
MASKING_DESCRIPTION = """\
Personal data is masked like a turn's before anything is stored or embedded: in the namespace's labels,
the key, the value's object keys and its strings. A JSON integer that is a payment card (a known issuer
prefix and length, a valid Luhn sum) or a phone number (10 to 15 digits valid as `+<digits>`) is stored
as its token, a string: `{"card": 5227183490615382}` is stored and answered as
`{"card": "{{PII_CREDIT_CARD_<hash>_<n>}}"}`; other numbers stay numbers. The answer holds the masked
item; reads, deletes and searches take the original namespace, key, prefix, filter and query, masked the
same way, so they find it. A user's items are erased with the user."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PutItemRequest(_Body):
    namespace: list[Label] = Field(max_length=MAX_DEPTH, description="Labels below the owner, e.g. [\"memories\"]")
    key: str = Field(min_length=1, max_length=512, pattern=KEY_PATTERN)
    value: dict[str, Any]
    index: StrictBool | list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(
        default=True,
        description="Embed the value's text for search (true), not at all (false), or the texts these paths name "
        "(LangGraph's: a.b, a[0], a[*].b, {a,b}), one vector each; an item scores by its best",
    )
    ttl: Number | None = Field(
        default=None, gt=0, le=MAX_TTL_MINUTES,
        description="Minutes the item lives after it is written or (reads refresh it by default) last read; "
        "none: for ever. An expired item is never read again; the store deletes it later.",
    )


class SearchItemsRequest(_Body):
    namespace_prefix: list[Label] = Field(default_factory=list, alias="namespacePrefix", max_length=MAX_DEPTH)
    query: str | None = Field(default=None, max_length=4000, description="Rank by similarity to this text")
    filter: dict[str, Any] | None = Field(
        default=None, description="Top-level fields the value must equal, or operators ($eq $ne $gt $gte $lt $lte)"
    )
    limit: StrictInt = Field(default=10, ge=1, le=MAX_SEARCH_LIMIT)
    offset: StrictInt = Field(default=0, ge=0, le=MAX_SEARCH_OFFSET)
    refresh_ttl: StrictBool = Field(
        default=True, alias="refreshTtl", description="Restart the TTL of the items found (those that have one)"
    )


def items() -> ItemService:
    return get_services().items


def item_json(item: Item) -> dict[str, Any]:
    return {
        "namespace": list(item.namespace), "key": item.key, "value": item.value,
        "createdAt": iso_utc(item.created_at), "updatedAt": iso_utc(item.updated_at),
        "expiresAt": None if item.expires_at is None else iso_utc(item.expires_at),
    }


def hit_json(hit: ItemHit) -> dict[str, Any]:
    return {**item_json(hit.item), "score": hit.score}


def parse_namespace(text: str) -> tuple[str, ...]:
    if not text:
        return ()
    labels = tuple(text.split("."))
    if len(labels) > MAX_DEPTH or not all(re.match(LABEL_PATTERN, label) for label in labels):
        raise InvalidInput(
            f"namespace must be 1 to {MAX_DEPTH} labels of 1 to 128 characters, no control characters"
        )
    return labels


def _put(kind: OwnerKind, owner: str, request: PutItemRequest) -> dict[str, Any]:
    if len(json.dumps(request.value)) > MAX_VALUE_BYTES:
        raise TooLarge(f"an item's value is at most {MAX_VALUE_BYTES} bytes of JSON")
    index = request.index if isinstance(request.index, bool) else tuple(request.index)
    return item_json(items().put(kind, owner, request.namespace, request.key, request.value, index, request.ttl))


def _search(kind: OwnerKind, owner: str, request: SearchItemsRequest) -> dict[str, Any]:
    hits = items().search(
        kind, owner, request.namespace_prefix, query=request.query, filter=request.filter,
        limit=request.limit, offset=request.offset, refresh_ttl=request.refresh_ttl,
    )
    return {"items": [hit_json(hit) for hit in hits]}


def _namespaces(kind: OwnerKind, owner: str) -> dict[str, Any]:
    return {"namespaces": [list(ns) for ns in items().namespaces(kind, owner)]}


def _routes(kind: OwnerKind, param: str, whose: str, label: str) -> None:
    """The five item routes of one owner kind, under `/v1/{kind}/<param>/items` (`whose`: "the user's").

    One set of handlers for users and agents: each is registered with a signature whose path
    parameter is this kind's (`userId`, `agentId`), which is what powertools validates and documents.
    """
    base = f"/v1/{kind}/<{param}>/items"
    owner = inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, annotation=PathId)
    keyword, empty = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.empty

    def route(
        method: str, path: str, name: str, summary: str, returns: Any, description: str | None = None,
        **params: tuple[Any, Any],
    ) -> Any:
        def register(handler: Any) -> Any:
            def endpoint(**arguments: Any) -> Any:
                return handler(arguments.pop(param), **arguments)

            endpoint.__name__ = endpoint.__qualname__ = name.format(label)  # the OpenAPI operationId's stem
            endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [owner, *(inspect.Parameter(n, keyword, annotation=a, default=d) for n, (a, d) in params.items())],
                return_annotation=returns,
            )
            getattr(router, method)(path, summary=summary, description=description)(endpoint)
            return handler

        return register

    keys: dict[str, Any] = {"namespace": (NamespaceQuery, empty), "key": (KeyQuery, empty)}
    put_body: dict[str, Any] = {"request": (Annotated[PutItemRequest, Body()], empty)}
    search_body: dict[str, Any] = {"request": (Annotated[SearchItemsRequest, Body()], empty)}

    @route("put", base, "put_{}_item", f"Store a JSON value under a key in one of {whose} namespaces",
           dict[str, Any], description=MASKING_DESCRIPTION, **put_body)
    def put(owner_id: str, request: PutItemRequest) -> dict[str, Any]:
        return _put(kind, owner_id, request)

    @route("get", base, "get_{}_item", f"One of {whose} items (404 when there is none, or it expired)",
           dict[str, Any], **keys, refreshTtl=(RefreshQuery, True))
    def get(owner_id: str, namespace: str, key: str, refreshTtl: bool) -> dict[str, Any]:
        return item_json(items().get(kind, owner_id, parse_namespace(namespace), key, refresh_ttl=refreshTtl))

    @route("delete", base, "delete_{}_item", f"Delete one of {whose} items (204 also when there was none)",
           Response[Any], **keys)
    def delete(owner_id: str, namespace: str, key: str) -> Response[Any]:
        items().delete(kind, owner_id, parse_namespace(namespace), key)
        return no_content()

    @route("post", f"{base}/search", "search_{}_items",
           f"{whose[:1].upper()}{whose[1:]} items under a namespace prefix, by meaning", dict[str, Any], **search_body)
    def search(owner_id: str, request: SearchItemsRequest) -> dict[str, Any]:
        return _search(kind, owner_id, request)

    @route("get", f"{base}/namespaces", "list_{}_namespaces", f"The namespaces holding {whose} items",
           dict[str, Any])
    def namespaces(owner_id: str) -> dict[str, Any]:
        return _namespaces(kind, owner_id)


_routes("users", "userId", "the user's", "user")
_routes("agents", "agentId", "the agent's", "agent")
