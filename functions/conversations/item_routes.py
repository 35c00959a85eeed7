"""The key-addressed items of a user or an agent (LangGraph's store), served by the `conversations` function.

An item is a JSON object under a key, in a namespace below its owner: `("memories",)` of user
`u-1` is `/v1/users/u-1/items?namespace=memories`. Namespace labels are joined with "." in a query
string (LangGraph forbids "." in a label), and sent as a list in a body. A user's item values are
masked like turns; an indexed item is found by meaning through `POST .../items/search`.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from agentmem.api.resolver import PathId, no_content
from agentmem.domain.errors import BackendUnavailable, InvalidInput, TooLarge
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
# No "." (the query string joins labels with it) and no control characters (the stores join with them).
LABEL_PATTERN = r"^[^.\x00-\x1f]{1,128}$"
Label = Annotated[str, Field(pattern=LABEL_PATTERN)]
NamespaceQuery = Annotated[str, Query(max_length=1400, description="The namespace's labels joined with '.'")]
KeyQuery = Annotated[str, Query(min_length=1, max_length=512)]

router = Router()


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PutItemRequest(_Body):
    namespace: list[Label] = Field(max_length=MAX_DEPTH, description="Labels below the owner, e.g. [\"memories\"]")
    key: str = Field(min_length=1, max_length=512)
    value: dict[str, Any]
    index: StrictBool | list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(
        default=True, description="Embed the value's text for search (true), not at all (false), or these fields"
    )


class SearchItemsRequest(_Body):
    namespace_prefix: list[Label] = Field(default_factory=list, alias="namespacePrefix", max_length=MAX_DEPTH)
    query: str | None = Field(default=None, max_length=4000, description="Rank by similarity to this text")
    filter: dict[str, Any] | None = Field(default=None, description="Top-level fields the value must equal")
    limit: StrictInt = Field(default=10, ge=1, le=100)
    offset: StrictInt = Field(default=0, ge=0, le=1000)


def items() -> ItemService:
    service = get_services().items
    if service is None:
        raise BackendUnavailable("items", "key-addressed items are not available on this backend yet")
    return service


def item_json(item: Item) -> dict[str, Any]:
    return {
        "namespace": list(item.namespace), "key": item.key, "value": item.value,
        "createdAt": iso_utc(item.created_at), "updatedAt": iso_utc(item.updated_at),
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
    return item_json(items().put(kind, owner, request.namespace, request.key, request.value, index))


def _search(kind: OwnerKind, owner: str, request: SearchItemsRequest) -> dict[str, Any]:
    hits = items().search(
        kind, owner, request.namespace_prefix, query=request.query, filter=request.filter,
        limit=request.limit, offset=request.offset,
    )
    return {"items": [hit_json(hit) for hit in hits]}


def _namespaces(kind: OwnerKind, owner: str) -> dict[str, Any]:
    return {"namespaces": [list(ns) for ns in items().namespaces(kind, owner)]}


@router.put("/v1/users/<userId>/items", summary="Store a JSON value under a key in one of the user's namespaces")
def put_user_item(userId: PathId, request: Annotated[PutItemRequest, Body()]) -> dict[str, Any]:
    return _put("users", userId, request)


@router.get("/v1/users/<userId>/items", summary="One of the user's items (404 when there is none)")
def get_user_item(userId: PathId, namespace: NamespaceQuery, key: KeyQuery) -> dict[str, Any]:
    return item_json(items().get("users", userId, parse_namespace(namespace), key))


@router.delete("/v1/users/<userId>/items", summary="Delete one of the user's items (204 also when there was none)")
def delete_user_item(userId: PathId, namespace: NamespaceQuery, key: KeyQuery) -> Response[Any]:
    items().delete("users", userId, parse_namespace(namespace), key)
    return no_content()


@router.post("/v1/users/<userId>/items/search", summary="The user's items under a namespace prefix, by meaning")
def search_user_items(userId: PathId, request: Annotated[SearchItemsRequest, Body()]) -> dict[str, Any]:
    return _search("users", userId, request)


@router.get("/v1/users/<userId>/items/namespaces", summary="The namespaces holding the user's items")
def list_user_namespaces(userId: PathId) -> dict[str, Any]:
    return _namespaces("users", userId)


@router.put("/v1/agents/<agentId>/items", summary="Store a JSON value under a key in one of the agent's namespaces")
def put_agent_item(agentId: PathId, request: Annotated[PutItemRequest, Body()]) -> dict[str, Any]:
    return _put("agents", agentId, request)


@router.get("/v1/agents/<agentId>/items", summary="One of the agent's items (404 when there is none)")
def get_agent_item(agentId: PathId, namespace: NamespaceQuery, key: KeyQuery) -> dict[str, Any]:
    return item_json(items().get("agents", agentId, parse_namespace(namespace), key))


@router.delete("/v1/agents/<agentId>/items", summary="Delete one of the agent's items (204 also when there was none)")
def delete_agent_item(agentId: PathId, namespace: NamespaceQuery, key: KeyQuery) -> Response[Any]:
    items().delete("agents", agentId, parse_namespace(namespace), key)
    return no_content()


@router.post("/v1/agents/<agentId>/items/search", summary="The agent's items under a namespace prefix, by meaning")
def search_agent_items(agentId: PathId, request: Annotated[SearchItemsRequest, Body()]) -> dict[str, Any]:
    return _search("agents", agentId, request)


@router.get("/v1/agents/<agentId>/items/namespaces", summary="The namespaces holding the agent's items")
def list_agent_namespaces(agentId: PathId) -> dict[str, Any]:
    return _namespaces("agents", agentId)
