"""Strict request bodies, the same through `agentmem serve` (real HTTP) and a Lambda handler given the
proxy event API Gateway would send: only application/json is read (415 otherwise), and duplicate keys,
numbers out of range and control characters in ids, keys and namespaces are 400; none writes anything."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from agentmem.local import apigateway
from agentmem.local.lambda_runtime import LocalLambdaContext
from agentmem.local.server import LocalApp, create_app
from agentmem.wiring import set_services

from tests.integration.served import serving

TURN = '{"role": "user", "content": "hello"}'
# (path, body, what the 400 is about): each would write a turn or an item were it read leniently.
INVALID_BODIES = {
    "a key twice: the role": ("/v1/users/{user}/threads/t-1/turns",
                              '{"turns": [{"role": "user", "role": "assistant", "content": "x"}]}'),
    "a key twice: the turns": ("/v1/users/{user}/threads/t-1/turns", f'{{"turns": [{TURN}], "turns": [{TURN}]}}'),
    "1e400 in a value": ("/v1/users/{user}/items", '{"namespace": ["m"], "key": "k", "value": {"n": 1e400}}'),
    "-1e400 in a value": ("/v1/users/{user}/items", '{"namespace": ["m"], "key": "k", "value": {"n": -1e400}}'),
    "NaN in a value": ("/v1/users/{user}/items", '{"namespace": ["m"], "key": "k", "value": {"n": NaN}}'),
    "a NUL in an item key": ("/v1/users/{user}/items", '{"namespace": ["m"], "key": "a\\u0000b", "value": {}}'),
    "a DEL in an item key": ("/v1/users/{user}/items", '{"namespace": ["m"], "key": "a\\u007fb", "value": {}}'),
    "a BEL in a namespace": ("/v1/users/{user}/items", '{"namespace": ["m\\u0007"], "key": "k", "value": {}}'),
    "a C1 control in a namespace": ("/v1/users/{user}/items",
                                    '{"namespace": ["m\\u0085"], "key": "k", "value": {}}'),
}
REFUSED_MEDIA_TYPES = [
    "text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data; boundary=x",
    "application/json; charset=iso-8859-1", "application/jsonp", None,
]
ACCEPTED_MEDIA_TYPES = ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"]


@pytest.fixture(scope="module")
def local_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalApp]:
    from tests.integration.conversations_harness import HashingEmbedder

    app = create_app(tmp_path_factory.mktemp("strict"), start_worker=False, ports={"embedder": HashingEmbedder()})
    try:
        yield app
    finally:
        app.close()


@pytest.fixture(scope="module")
def port(local_app: LocalApp) -> Iterator[int]:
    with serving(local_app) as url:
        yield int(urlsplit(url).port or 0)


def over_http(port: int, method: str, path: str, body: str | None, content_type: str | None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Content-Type": content_type} if content_type else {}
        conn.request(method, path, body=body.encode() if body is not None else None, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def through_lambda(local_app: LocalApp, method: str, path: str, body: str | None, content_type: str | None
                   ) -> tuple[int, Any]:
    """The conversations function's own `lambda_handler`, called as Lambda calls it."""
    from functions.conversations.handler import lambda_handler

    set_services(local_app.services)
    found = apigateway.match(method, path.split("?", 1)[0])
    assert found.route is not None
    headers = {"Content-Type": content_type} if content_type else {}
    event = apigateway.proxy_event(found.route, found.path_parameters, method, path, headers, body, "127.0.0.1")
    result = lambda_handler(event, LocalLambdaContext("conversations"))
    return int(result["statusCode"]), json.loads(result["body"]) if result.get("body") else None


def nothing_stored_for(send: Any, user: str) -> bool:
    turns, _ = send("GET", f"/v1/users/{user}/threads/t-1/turns", None, None)
    _, namespaces = send("GET", f"/v1/users/{user}/items/namespaces", None, None)
    return turns == 404 and namespaces == {"namespaces": []}


@pytest.fixture(params=["http", "lambda"])
def send(request: pytest.FixtureRequest, local_app: LocalApp) -> Any:
    if request.param == "http":
        served_port = request.getfixturevalue("port")
        return lambda *args: over_http(served_port, *args)
    return lambda *args: through_lambda(local_app, *args)


_users = iter(range(10_000))


@pytest.mark.parametrize("content_type", REFUSED_MEDIA_TYPES)
def test_a_body_not_sent_as_application_json_is_415_and_writes_nothing(send, content_type):
    user = f"media-{next(_users)}"
    status, answer = send("POST", f"/v1/users/{user}/threads/t-1/turns", f'{{"turns": [{TURN}]}}', content_type)
    assert status == 415 and answer["error"]["code"] == "unsupported_media_type", answer
    assert nothing_stored_for(send, user)


@pytest.mark.parametrize("content_type", ACCEPTED_MEDIA_TYPES)
def test_application_json_with_or_without_a_utf8_charset_is_read(send, content_type):
    user = f"media-{next(_users)}"
    status, answer = send("POST", f"/v1/users/{user}/threads/t-1/turns", f'{{"turns": [{TURN}]}}', content_type)
    assert status == 201, answer


@pytest.mark.parametrize("case", INVALID_BODIES)
def test_duplicate_keys_out_of_range_numbers_and_control_characters_are_400_and_write_nothing(send, case):
    user = f"strict-{next(_users)}"
    path, body = INVALID_BODIES[case]
    status, answer = send("PUT" if path.endswith("items") else "POST", path.format(user=user), body,
                          "application/json")
    assert status == 400 and answer["error"]["code"] == "validation_error", answer
    assert answer["error"]["details"]
    assert nothing_stored_for(send, user)


def test_a_control_character_in_an_item_key_of_a_read_is_400(send):
    status, answer = send("GET", "/v1/users/u-1/items?namespace=m&key=a%00b", None, None)
    assert status == 400 and answer["error"]["code"] == "validation_error", answer


def test_a_duplicate_key_is_refused_without_echoing_the_key(send):
    secret_key = "ana.silva@example.com"
    body = f'{{"namespace": ["m"], "key": "k", "value": {{"{secret_key}": 1, "{secret_key}": 2}}}}'
    status, answer = send("PUT", "/v1/users/u-1/items", body, "application/json")
    assert status == 400 and secret_key not in json.dumps(answer)


