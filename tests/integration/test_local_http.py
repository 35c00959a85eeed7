"""`agentmem serve` at the HTTP layer, over real sockets: framing, limits, errors, Host/cross-site rules,
keep-alive, and handlers that never answer one request with another's data under concurrency."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from agentmem.api.limits import MAX_BODY_BYTES, too_large_message
from agentmem.local import asgi
from agentmem.local.server import LocalApp, create_app

from tests.integration.served import raw_exchange, serving

ERROR_KEYS = {"code", "message", "details"}
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def local_app(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Iterator[LocalApp]:
    app = create_app(tmp_path_factory.mktemp("http"), start_worker=False, ports={"embedder": minilm},
                     enabled_agents=["auditor"])
    try:
        yield app
    finally:
        app.close()


@pytest.fixture(scope="module")
def server(local_app: LocalApp) -> Iterator[tuple[str, int]]:
    with serving(local_app) as url:
        yield url, int(urlsplit(url).port or 0)


def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None, conn: http.client.HTTPConnection | None = None,
            ) -> tuple[int, dict[str, str], bytes]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        if own:
            conn.close()


def contract_error(raw: bytes) -> dict[str, Any]:
    body = json.loads(raw)
    assert set(body) == {"error"} and set(body["error"]) == ERROR_KEYS, body
    return dict(body["error"])


def split_raw(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


# -- routing and framing errors, all in the contract's body ------------------------------------------


def test_unknown_route_is_a_contract_404(server):
    status, _, body = request(server[1], "GET", "/v1/nowhere")
    assert status == 404 and contract_error(body)["code"] == "not_found"


def test_wrong_method_is_405_with_allow(server):
    status, headers, body = request(server[1], "DELETE", "/v1/health")
    assert status == 405 and headers["allow"] == "GET, HEAD"
    assert contract_error(body)["code"] == "method_not_allowed"


def test_head_on_a_get_route_answers_its_headers_without_a_body(server):
    get_status, get_headers, get_body = request(server[1], "GET", "/v1/health")
    conn = http.client.HTTPConnection("127.0.0.1", server[1], timeout=10)
    try:
        conn.request("HEAD", "/v1/health")
        response = conn.getresponse()
        assert response.status == get_status == 200
        assert response.getheader("Content-Type") == get_headers["content-type"]
        assert int(response.getheader("Content-Length") or -1) == len(get_body) > 0
        assert response.read() == b""
        # The connection is still in step: the next request on it gets its own answer.
        conn.request("GET", "/v1/health")
        assert json.loads(conn.getresponse().read()) == json.loads(get_body)
    finally:
        conn.close()


def test_head_on_a_route_without_get_is_405_naming_its_methods(server):
    status, headers, body = request(server[1], "HEAD", "/v1/agents/auditor/retrieve")
    assert status == 405 and headers["allow"] == "POST" and body == b""


def test_an_overlong_request_target_is_414_in_the_contracts_body(server):
    status, _, body = request(server[1], "GET", "/v1/health?q=" + "a" * 9000)
    assert status == 414 and contract_error(body)["code"] == "uri_too_long"


def test_oversize_headers_are_431_in_the_contracts_body(server):
    status, _, body = request(server[1], "GET", "/v1/health", headers={"X-Filler": "a" * 20_000})
    assert status == 431 and contract_error(body)["code"] == "headers_too_large"


def test_a_header_block_beyond_the_parsers_buffer_is_431_from_the_framing_layer(server):
    # Sent in pieces, so the parser's buffer fills before the head is complete.
    head = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(
        b"X-Filler-%d: %s\r\n" % (n, b"a" * 1000) for n in range(80)
    )
    status, headers, body = split_raw(raw_exchange(server[1], head))
    assert status == 431 and headers["content-type"] == "application/json"
    assert contract_error(body)["code"] == "headers_too_large"


def test_a_content_length_that_is_not_a_number_is_400_in_the_contracts_body(server):
    raw = raw_exchange(server[1], b"POST /v1/agents/auditor/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                  b"Content-Length: abc\r\n\r\n{}")
    status, headers, body = split_raw(raw)
    assert status == 400 and headers["content-type"] == "application/json"
    assert contract_error(body)["code"] == "bad_request"


def test_a_malformed_request_line_is_400_in_the_contracts_body(server):
    status, _, body = split_raw(raw_exchange(server[1], b"NOT HTTP AT ALL\r\n\r\n"))
    assert status == 400 and contract_error(body)["code"] == "bad_request"


def padded_run(size: int) -> bytes:
    """A valid `POST /runs` body of exactly `size` bytes (JSON allows trailing whitespace)."""
    body = json.dumps({"input": "Audit the Ridgeline page.", "output": "No issues."}).encode()
    return body + b" " * (size - len(body))


def test_a_body_of_exactly_the_limit_is_served_and_one_byte_more_is_413(server):
    status, _, body = request(server[1], "POST", "/v1/agents/auditor/runs", padded_run(MAX_BODY_BYTES),
                              {"Content-Type": "application/json"})
    assert status == 201 and json.loads(body)["runId"]
    status, _, body = request(server[1], "POST", "/v1/agents/auditor/runs", padded_run(MAX_BODY_BYTES + 1),
                                    {"Content-Type": "application/json"})
    assert status == 413 and contract_error(body) == {
        "code": "too_large", "message": too_large_message(), "details": []}


def test_the_handlers_apply_the_same_limit_without_the_http_front(server, local_app):
    # In AWS no local front stands before the resolver: it applies the same limit to the proxy event.
    app_handle = local_app.handle
    status, _, body = app_handle("POST", "/v1/agents/auditor/runs", {"content-type": "application/json"},
                                 padded_run(MAX_BODY_BYTES), "127.0.0.1")
    assert status == 201
    status, _, body = app_handle("POST", "/v1/agents/auditor/runs", {"content-type": "application/json"},
                                 padded_run(MAX_BODY_BYTES + 1), "127.0.0.1")
    assert status == 413 and contract_error(body)["code"] == "too_large"


def test_a_body_over_the_limit_is_413_before_it_is_read(server):
    head = (b"POST /v1/agents/auditor/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (MAX_BODY_BYTES + 1))
    status, headers, body = split_raw(raw_exchange(server[1], head + b'{"input": "'))
    assert status == 413 and contract_error(body)["code"] == "too_large"
    assert headers.get("connection") == "close"


def test_a_chunked_body_over_the_limit_is_413(server):
    def chunks() -> Iterator[bytes]:
        for _ in range(MAX_BODY_BYTES // 65536 + 1):
            yield b"x" * 65536

    conn = http.client.HTTPConnection("127.0.0.1", server[1], timeout=10)
    try:
        # The server may answer and close before the client has finished sending.
        with contextlib.suppress(BrokenPipeError):
            conn.request("POST", "/v1/agents/auditor/retrieve", body=chunks(), encode_chunked=True,
                         headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        response = conn.getresponse()
        assert response.status == 413 and contract_error(response.read())["code"] == "too_large"
    finally:
        conn.close()


def turn_count(port: int, user: str, thread: str) -> int:
    status, _, body = request(port, "GET", f"/v1/users/{user}/threads/{thread}/turns")
    if status == 404:  # a thread nothing was ever appended to
        return 0
    assert status == 200, body
    return len(json.loads(body)["items"])


def test_a_body_shorter_than_its_content_length_is_never_processed(server):
    body = json.dumps({"turns": [{"role": "user", "content": "half a request"}]}).encode()
    head = (b"POST /v1/users/short-body/threads/t/turns HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (len(body) + 50))
    answer = raw_exchange(server[1], head + body, close_after_send=True, read_timeout=3)
    assert answer == b""  # the client left: nobody to answer, nothing ran
    assert turn_count(server[1], "short-body", "t") == 0


def test_a_body_that_stalls_is_cut_off_with_408_and_nothing_is_processed(server, monkeypatch):
    monkeypatch.setattr(asgi, "BODY_TIMEOUT_SECONDS", 0.5)
    body = json.dumps({"turns": [{"role": "user", "content": "a slow client"}]}).encode()
    head = (b"POST /v1/users/slow-body/threads/t/turns HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (len(body) + 50))
    # Were it not cut off, the exchange would end at its own read timeout with no answer, not a 408.
    status, headers, error = split_raw(raw_exchange(server[1], head + body, read_timeout=5))
    assert status == 408 and contract_error(error)["code"] == "request_timeout"
    assert headers.get("connection") == "close"
    assert turn_count(server[1], "slow-body", "t") == 0


def test_kept_alive_connection_serves_many_requests_and_survives_an_error(server):
    conn = http.client.HTTPConnection("127.0.0.1", server[1], timeout=10)
    try:
        for n in range(50):
            path = "/v1/nowhere" if n % 10 == 5 else "/v1/health"
            status, _, _ = request(server[1], "GET", path, conn=conn)
            assert status == (404 if n % 10 == 5 else 200)
        assert conn.sock is not None  # still the first connection
    finally:
        conn.close()


# -- Host and cross-site rules -----------------------------------------------------------------------


def test_a_foreign_host_header_is_refused_as_dns_rebinding(server):
    status, _, body = request(server[1], "GET", "/v1/health", headers={"Host": "evil.example:8765"})
    assert status == 421 and contract_error(body)["code"] == "misdirected_request"


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_host_names_are_served(server, host):
    status, _, _ = request(server[1], "GET", "/v1/health", headers={"Host": f"{host}:{server[1]}"})
    assert status == 200


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:3000"},
])
def test_a_cross_site_post_is_refused_and_writes_nothing(server, headers):
    body = json.dumps({"turns": [{"role": "user", "content": "from another site"}]}).encode()
    status, _, error = request(server[1], "POST", "/v1/users/cross-site/threads/t/turns", body,
                               {"Content-Type": "text/plain", **headers})
    assert status == 403 and contract_error(error)["code"] == "cross_site_refused"
    assert turn_count(server[1], "cross-site", "t") == 0


def test_a_same_origin_request_from_the_wall_is_served(server):
    url, port = server
    status, _, _ = request(port, "GET", "/v1/agents", headers={
        "Origin": url, "Sec-Fetch-Site": "same-origin", "Host": f"127.0.0.1:{port}"})
    assert status == 200


def test_the_wall_page_opens_from_a_link_on_another_site(server):
    status, headers, body = request(server[1], "GET", "/wall", headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 200 and headers["content-type"].startswith("text/html") and body


def test_a_terminal_post_without_origin_keeps_working(server):
    # What `curl -H 'Content-Type: application/json' -d '{...}'` sends: no Origin, no Sec-Fetch-*.
    status, _, body = request(server[1], "POST", "/v1/agents/auditor/retrieve", b'{"input": "hello"}',
                              {"Content-Type": "application/json"})
    assert status == 200 and json.loads(body)["memory"] == "enabled"


# -- one request, one answer, under concurrency --------------------------------------------------------


def test_concurrent_clients_only_ever_see_their_own_users_data(server):
    """Each client appends its own user's email, then unmasks and lists: never another user's answer.

    The resolvers keep the current event in module state; without one invocation per function at a
    time, a thread switch mid-request hands one request's event to another. Frequent switches make
    that race likely if it exists.
    """
    port = server[1]
    users = [f"stress-{n}" for n in range(12)]
    tokens: dict[str, str] = {}
    for user in users:
        body = json.dumps({"turns": [{"role": "user", "content": f"Mail me at {user}@example.com"}]}).encode()
        status, _, out = request(port, "POST", f"/v1/users/{user}/threads/t/turns", body,
                                 {"Content-Type": "application/json"})
        assert status == 201, out
        content = json.loads(out)["turns"][0]["content"]
        tokens[user] = re.findall(r"\{\{PII_[A-Z]+_[0-9a-f]+_\d+\}\}", content)[0]

    failures: list[str] = []

    def client(user: str) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        done = 0
        try:
            for _ in range(25):
                status, _, out = request(port, "POST", f"/v1/users/{user}/threads/t/unmask",
                                         json.dumps({"text": tokens[user]}).encode(),
                                         {"Content-Type": "application/json"}, conn=conn)
                if status != 200 or json.loads(out)["text"] != f"{user}@example.com":
                    failures.append(f"unmask {user}: {status} {out[:200]!r}")
                status, _, out = request(port, "GET", f"/v1/users/{user}/threads/t/turns", conn=conn)
                items = json.loads(out).get("items") if status == 200 else None
                if not items or any(tokens[user] not in t["content"] for t in items):
                    failures.append(f"list {user}: {status} {out[:200]!r}")
                done += 2
        finally:
            conn.close()
        return done

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        with ThreadPoolExecutor(len(users) * 2) as pool:
            answered = sum(pool.map(client, users * 2))
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
    assert answered == len(users) * 2 * 50


def test_two_invocations_of_one_function_never_overlap(tmp_path: Path, monkeypatch):
    from agentmem.local import lambda_runtime

    active = {"now": 0, "most": 0}
    lock = threading.Lock()

    def slow_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        with lock:
            active["now"] += 1
            active["most"] = max(active["most"], active["now"])
        time.sleep(0.01)
        with lock:
            active["now"] -= 1
        return {"statusCode": 200}

    monkeypatch.setattr(lambda_runtime, "load_handler", lambda *_: slow_handler)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: lambda_runtime.invoke("retrieve", {}), range(32)))
    assert active["most"] == 1


# -- strict input ----------------------------------------------------------------------------------


def post_json(port: int, path: str, raw: bytes | str) -> tuple[int, dict[str, Any]]:
    data = raw.encode() if isinstance(raw, str) else raw
    status, _, body = request(port, "POST", path, data, {"Content-Type": "application/json"})
    return status, json.loads(body)


@pytest.mark.parametrize(("raw", "says"), [
    ('[{"input": "taken as the object?"}, {"input": "dropped?"}]', "not an array"),
    ('"just a string"', "not a string"),
    ("null", "not null"),
    ('{"input": "x", "topK": NaN}', "NaN"),
    ("[" * 2000 + "]" * 2000, "deeper"),
    ('{"input": "x", "extra": ' + "[" * 40 + "]" * 40 + "}", "deeper"),
    ('{"input": "x", "topK": ' + "9" * 5000 + "}", "digits"),
    ('{"input": "x"', "not valid JSON"),
])
def test_a_body_that_is_not_one_json_object_is_a_400_never_a_500(server, raw, says):
    status, body = post_json(server[1], "/v1/agents/auditor/retrieve", raw)
    assert status == 400 and body["error"]["code"] == "validation_error"
    assert says.replace("not ", "") in body["error"]["message"]


@pytest.mark.parametrize(("field", "value"), [("topK", True), ("topK", "3"), ("tokenBudget", "2000"),
                                              ("tokenBudget", False), ("topK", 2.5)])
def test_booleans_and_strings_are_not_numbers_in_retrieve(server, field, value):
    status, body = post_json(server[1], "/v1/agents/auditor/retrieve", json.dumps({"input": "x", field: value}))
    assert status == 400 and [d["field"] for d in body["error"]["details"]] == [field]


def test_a_string_is_not_an_importance_multiplier(server):
    status, run = post_json(server[1], "/v1/agents/auditor/runs", json.dumps({"input": "i", "output": "o"}))
    status, receipt = post_json(server[1], f"/v1/agents/auditor/runs/{run['runId']}/feedback",
                                json.dumps({"rating": "up"}))
    assert status == 202
    path = f"/v1/agents/auditor/memories/{receipt['memoryId']}"
    for bad in ("1.5", True):
        status, _, body = request(server[1], "PATCH", path, json.dumps({"importance": bad}).encode(), JSON)
        assert status == 400 and json.loads(body)["error"]["details"][0]["field"] == "importance"
    status, _, body = request(server[1], "PATCH", path, json.dumps({"importance": 1.5}).encode(), JSON)
    assert status == 200 and json.loads(body)["importance"] == 1.5


def test_ids_are_matched_after_percent_decoding_and_the_client_agrees(server):
    from agentmem.client import MemoryClient

    url, port = server
    status, _, body = request(port, "POST", "/v1/users/a%40b.example%3A7/threads/t%3A1/turns",
                              json.dumps({"turns": [{"role": "user", "content": "hello"}]}).encode(), JSON)
    assert status == 201 and json.loads(body)["userId"] == "a@b.example:7"
    with MemoryClient(url, retries=0) as client:
        assert [t.content for t in client.list_turns("a@b.example:7", "t:1").items] == ["hello"]
        assert client.get_profile("a@b.example:7").markdown is not None
    # An encoded slash or line break decodes to an id the contract does not allow: a 400, not another route.
    for bad in ("a%2Fb", "a%0Ab", "a%0D%0Ab"):
        status, _, body = request(port, "GET", f"/v1/users/{bad}/profile")
        assert status == 400 and json.loads(body)["error"]["details"][0]["field"] == "userId", (bad, body)


# -- idempotency under concurrency -------------------------------------------------------------------


def concurrently(count: int, call: Any) -> list[Any]:
    barrier = threading.Barrier(count)

    def go(_: int) -> Any:
        barrier.wait()
        return call()

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(go, range(count)))


def test_one_feedback_key_sent_concurrently_gives_every_caller_the_same_answer(server):
    port = server[1]
    _, run = post_json(port, "/v1/agents/auditor/runs", json.dumps({"input": "i", "output": "o"}))
    path = f"/v1/agents/auditor/runs/{run['runId']}/feedback"
    body = json.dumps({"rating": "down", "comment": "Keep the brand's idioms."}).encode()
    headers = {"Content-Type": "application/json", "Idempotency-Key": "concurrent-fb-1"}
    answers = concurrently(8, lambda: request(port, "POST", path, body, headers))
    assert {status for status, _, _ in answers} == {202}
    assert all(json.loads(out) == json.loads(answers[0][2]) for _, _, out in answers)
    _, _, listing = request(port, "GET", "/v1/agents/auditor/memories?limit=100")
    memory_id = json.loads(answers[0][2])["memoryId"]
    assert [m["memoryId"] for m in json.loads(listing)["items"]].count(memory_id) == 1


def test_a_retried_turn_append_with_its_key_stores_the_turns_once(server):
    port = server[1]
    path = "/v1/users/idem-user/threads/t/turns"
    body = json.dumps({"turns": [{"role": "user", "content": "Mail idem@example.com"},
                                 {"role": "assistant", "content": "Noted."}]}).encode()
    headers = {"Content-Type": "application/json", "Idempotency-Key": "append-1"}
    answers = concurrently(6, lambda: request(port, "POST", path, body, headers))
    assert {status for status, _, _ in answers} == {201}
    assert all(json.loads(out) == json.loads(answers[0][2]) for _, _, out in answers)
    again = request(port, "POST", path, body, headers)
    assert again[0] == 201 and json.loads(again[2]) == json.loads(answers[0][2])
    assert turn_count(port, "idem-user", "t") == 2
    other = json.dumps({"turns": [{"role": "user", "content": "something else"}]}).encode()
    status, _, error = request(port, "POST", path, other, headers)
    assert status == 409 and contract_error(error)["code"] == "conflict"
    assert turn_count(port, "idem-user", "t") == 2
    # Without a key, an append is an append.
    assert request(port, "POST", path, body, {"Content-Type": "application/json"})[0] == 201
    assert turn_count(port, "idem-user", "t") == 4
