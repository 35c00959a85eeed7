"""`agentmem wall`'s proxy: loopback only, token-gated, and every forwarded request validly SigV4-signed."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from agentmem.client.signing import SigV4Signer
from agentmem.local.static_files import WALL_SCRIPT_PATH, wall_script
from agentmem.local.wall_proxy import NotLoopback, WallProxy, ensure_loopback, make_proxy_server, wall_page, wall_url
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from click.testing import CliRunner

CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token-1")
REGION = "eu-west-1"
TOKEN = "wall-token-for-tests"


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeStackApi:
    """A real HTTP server standing in for API Gateway: records what arrives, answers what it is told."""

    server: ThreadingHTTPServer
    received: list[Received] = field(default_factory=list)
    answer: tuple[int, dict[str, str], bytes] = (200, {"Content-Type": "application/json"}, b'{"items": []}')

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/prod"


@pytest.fixture
def stack_api() -> Iterator[FakeStackApi]:
    holder: dict[str, FakeStackApi] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            api = holder["api"]
            api.received.append(Received(self.command, self.path, dict(self.headers.items()),
                                         self.rfile.read(length) if length else b""))
            status, headers, body = api.answer
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder["api"] = FakeStackApi(server)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield holder["api"]
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy_server(stack_api: FakeStackApi) -> Iterator[tuple[ThreadingHTTPServer, WallProxy]]:
    proxy = WallProxy(stack_api.url, SigV4Signer(REGION, CREDENTIALS), token=TOKEN)
    server = make_proxy_server(proxy, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield server, proxy
    server.shutdown()
    server.server_close()


def send(
    server: ThreadingHTTPServer, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        conn.request(method, path, body=body or None, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def authorized(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}", **(extra or {})}


def signature_is_valid(request: Received, host_url: str) -> bool:
    """Recompute the SigV4 signature over exactly what the upstream received, for the headers it names."""
    authorization = request.headers["Authorization"]
    signed_names = re.search(r"SignedHeaders=([^,]+)", authorization).group(1).split(";")
    given = re.search(r"Signature=([0-9a-f]+)", authorization).group(1)
    headers = {k: v for k, v in request.headers.items() if k.lower() in signed_names}
    to_check = AWSRequest(method=request.method, url=host_url + request.path, data=request.body, headers=headers)
    to_check.context["timestamp"] = request.headers["X-Amz-Date"]
    auth = SigV4Auth(CREDENTIALS, "execute-api", REGION)
    canonical = auth.canonical_request(to_check)
    expected = auth.signature(auth.string_to_sign(to_check, canonical), to_check)
    return expected == given


def test_an_api_call_is_forwarded_under_the_stage_and_signed_for_execute_api(proxy_server, stack_api):
    server, _ = proxy_server
    stack_api.answer = (200, {"Content-Type": "application/json", "ETag": '"4"', "Set-Cookie": "x=1"},
                        b'{"version": 4}')
    body = json.dumps({"markdown": "## Identity\n- Dana"}).encode()
    status, headers, answer = send(server, "PUT", "/v1/users/dana%40example/profile", body, authorized({
        "Content-Type": "application/json", "If-Match": '"3"', "Cookie": "session=secret",
        "X-Forwarded-For": "10.0.0.1",
    }))

    assert status == 200 and json.loads(answer) == {"version": 4}
    assert headers["etag"] == '"4"' and "set-cookie" not in headers
    [request] = stack_api.received
    assert request.method == "PUT" and request.path == "/prod/v1/users/dana%40example/profile"
    assert request.body == body and request.headers["If-Match"] == '"3"'
    # The wall token and the browser's cookies stay on this machine; AWS credentials sign instead.
    assert TOKEN not in json.dumps(request.headers)
    assert "Cookie" not in request.headers and "X-Forwarded-For" not in request.headers
    assert request.headers["Authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{request.headers['X-Amz-Date'][:8]}/{REGION}/execute-api/aws4_request"
    )
    assert request.headers["X-Amz-Security-Token"] == "session-token-1"
    assert signature_is_valid(request, f"http://127.0.0.1:{stack_api.server.server_address[1]}")


def test_the_browser_form_encoded_query_is_resent_in_the_rfc3986_form_sigv4_signs(proxy_server, stack_api):
    server, _ = proxy_server
    status, _, _ = send(server, "GET", "/v1/agents/auditor/memories?limit=20&cursor=a+b%2Fc%3D%3D", b"", authorized())

    assert status == 200
    [request] = stack_api.received
    assert request.path == "/prod/v1/agents/auditor/memories?limit=20&cursor=a%20b%2Fc%3D%3D"
    assert signature_is_valid(request, f"http://127.0.0.1:{stack_api.server.server_address[1]}")


def test_an_api_call_without_the_wall_token_is_refused_and_never_reaches_the_stack(proxy_server, stack_api):
    server, _ = proxy_server
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        status, _, body = send(server, "DELETE", "/v1/agents/auditor/memories/mem_1", b"", headers)
        assert status == 403 and json.loads(body)["error"]["code"] == "forbidden"
    assert stack_api.received == []


def test_a_request_naming_another_host_is_refused_against_dns_rebinding(proxy_server, stack_api):
    server, _ = proxy_server
    status, _, body = send(server, "GET", "/v1/agents", b"", authorized({"Host": "attacker.example:80"}))
    assert status == 421 and json.loads(body)["error"]["code"] == "misdirected_request"
    assert stack_api.received == []


def test_a_cors_preflight_gets_no_permission(proxy_server, stack_api):
    server, _ = proxy_server
    status, headers, body = send(server, "OPTIONS", "/v1/agents/auditor/memories/m1", b"", {
        "Origin": "https://attacker.example", "Access-Control-Request-Method": "DELETE",
    })
    assert status == 403 and json.loads(body)["error"]["code"] == "cross_site_refused"
    assert not any(name.startswith("access-control-") for name in headers)
    # Without an Origin (not a browser's preflight) OPTIONS is still no way in.
    status, headers, _ = send(server, "OPTIONS", "/v1/agents/auditor/memories/m1", b"", authorized())
    assert status == 405 and not any(name.startswith("access-control-") for name in headers)
    assert stack_api.received == []


def test_a_cross_site_request_is_refused_even_with_the_token(proxy_server, stack_api):
    server, _ = proxy_server
    for extra in ({"Origin": "https://attacker.example"}, {"Sec-Fetch-Site": "cross-site"}):
        status, _, body = send(server, "DELETE", "/v1/agents/auditor/memories/m1", b"", authorized(extra))
        assert status == 403 and json.loads(body)["error"]["code"] == "cross_site_refused"
    assert stack_api.received == []


def test_framing_errors_and_oversize_bodies_are_answered_in_the_contracts_body(proxy_server, stack_api):
    from agentmem.api.limits import MAX_BODY_BYTES

    from tests.integration.served import raw_exchange

    server, _ = proxy_server
    port = server.server_address[1]
    raw = raw_exchange(port, b"POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 400") and b'"code": "bad_request"' in raw
    status, _, body = send(server, "POST", "/v1/agents/auditor/runs", b"x" * (MAX_BODY_BYTES + 1), authorized())
    assert status == 413 and json.loads(body)["error"]["code"] == "too_large"
    status, _, body = send(server, "GET", "/v1/agents?q=" + "a" * 9000, b"", authorized())
    assert status == 414 and json.loads(body)["error"]["code"] == "uri_too_long"
    assert stack_api.received == []


def test_a_kept_alive_connection_carries_one_request_after_another(proxy_server, stack_api):
    server, _ = proxy_server
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        for _ in range(3):
            conn.request("GET", "/v1/agents", headers=authorized())
            response = conn.getresponse()
            assert response.status == 200 and response.read() == stack_api.answer[2]
        conn.request("HEAD", "/wall")
        response = conn.getresponse()
        assert response.status == 200 and response.read() == b""
        assert int(response.getheader("Content-Length") or 0) == len(wall_page())
    finally:
        conn.close()
    assert len(stack_api.received) == 3


def test_only_v1_paths_are_forwarded(proxy_server, stack_api):
    server, _ = proxy_server
    for path in ("/admin", "/v1/../prod/secret", "/v1/agents/%2e%2e/x", "/v2/agents"):
        status, _, _ = send(server, "GET", path, b"", authorized())
        assert status == 404, path
    assert stack_api.received == []


def test_the_wall_page_is_served_without_a_token_and_cannot_be_framed(proxy_server):
    server, _ = proxy_server
    status, headers, body = send(server, "GET", "/wall")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    assert body == wall_page() and b"Memory Learning Wall" in body
    status, headers, _ = send(server, "GET", "/")
    assert status == 302 and headers["location"] == "/wall"


def test_api_gateways_own_iam_denial_becomes_a_contract_error_that_does_not_ask_for_a_token(proxy_server, stack_api):
    server, _ = proxy_server
    stack_api.answer = (403, {"Content-Type": "application/json", "x-amzn-ErrorType": "AccessDeniedException"},
                        b'{"message": "User: arn:aws:iam::1:user/x is not authorized to perform: execute-api:Invoke"}')
    status, _, body = send(server, "GET", "/v1/agents", b"", authorized())
    error = json.loads(body)["error"]
    assert status == 403 and error["code"] == "access_denied"
    assert "AccessDeniedException" in error["message"] and "not authorized" in error["message"]


def test_a_contract_error_from_the_stack_passes_through_unchanged(proxy_server, stack_api):
    server, _ = proxy_server
    original = {"error": {"code": "conflict", "message": "version mismatch", "details": []}}
    stack_api.answer = (409, {"Content-Type": "application/json"}, json.dumps(original).encode())
    status, _, body = send(server, "PUT", "/v1/users/u1/profile", b"{}", authorized({"If-Match": "1"}))
    assert status == 409 and json.loads(body) == original


def test_an_unreachable_stack_is_a_502_with_a_reason(stack_api):
    proxy = WallProxy("http://127.0.0.1:9/prod", SigV4Signer(REGION, CREDENTIALS), token=TOKEN, connect_timeout=2)
    status, _, body = proxy.handle("GET", "/v1/agents", authorized(), b"")
    assert status == 502 and json.loads(body)["error"]["code"] == "bad_gateway"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.5", "8.8.8.8"])
def test_the_proxy_refuses_to_listen_beyond_loopback(host):
    proxy = WallProxy("https://abc.execute-api.eu-west-1.amazonaws.com/prod", SigV4Signer(REGION, CREDENTIALS))
    with pytest.raises(NotLoopback):
        make_proxy_server(proxy, host, 0)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_addresses_are_accepted(host):
    ensure_loopback(host)


def test_the_printed_link_carries_the_token_in_the_fragment_only(proxy_server):
    server, proxy = proxy_server
    link = wall_url(server, proxy.token)
    assert link == f"http://127.0.0.1:{server.server_address[1]}/wall#token={TOKEN}"


def test_each_proxy_gets_its_own_unguessable_token():
    signer = SigV4Signer(REGION, CREDENTIALS)
    tokens = {WallProxy("https://example.com/prod", signer).token for _ in range(5)}
    assert len(tokens) == 5 and all(len(t) >= 32 for t in tokens)


def test_the_wall_page_runs_under_its_own_content_security_policy():
    """Script only from the server's own files, none inline; the inline style by hash (an edit updates it)."""
    page = wall_page().decode("utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page), "inline script: move it to static/wall.js"
    assert not re.search(r"<[^>]+\son[a-z]+=", page), "inline event handler: attach it in static/wall.js"
    [inline] = re.findall(r"<style>(.*?)</style>", page, re.S)
    expected = "sha256-" + base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
    assert directives["style-src"] == f"'{expected}'", f"set style-src '{expected}' in wall.html's CSP"
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'self'"


def test_the_wall_page_loads_its_script_from_static():
    page = wall_page().decode("utf-8")
    assert f'<script src="{WALL_SCRIPT_PATH}"></script>' in page


def test_the_page_never_writes_api_text_as_html():
    page = wall_page().decode("utf-8") + wall_script().decode("utf-8")
    assert not re.search(r"\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write", page)


# -- the click command --------------------------------------------------------------------------------


def test_wall_help_names_its_options():
    from agentmem.cli.wall import wall

    result = CliRunner().invoke(wall, ["--help"])
    assert result.exit_code == 0
    for option in ("--stack", "--url", "--host", "--port", "--region"):
        assert option in result.output


def test_wall_refuses_a_public_host_before_touching_aws():
    from agentmem.cli.wall import wall

    result = CliRunner().invoke(wall, ["--url", "https://abc.execute-api.eu-west-1.amazonaws.com/prod",
                                       "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "not a loopback address" in result.output


def test_wall_needs_exactly_one_of_stack_and_url():
    from agentmem.cli.wall import wall

    assert CliRunner().invoke(wall, []).exit_code == 2
    both = CliRunner().invoke(wall, ["--stack", "s", "--url", "https://example.com"])
    assert both.exit_code == 2 and "exactly one" in both.output


def test_a_stack_resolves_to_its_api_url_and_the_callers_credentials(monkeypatch):
    from agentmem.local.wall_proxy import proxy_for_stack
    from moto import mock_aws

    monkeypatch.delenv("AWS_PROFILE", raising=False)
    api_url = "https://a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com/prod/"
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"ApiUrl": {"Value": api_url}},
    }
    with mock_aws():
        import boto3

        # Set inside: mock_aws puts its own fake keys in the environment on entry.
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSTACK")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")

        boto3.client("cloudformation", region_name="eu-central-1").create_stack(
            StackName="agentmem-acme", TemplateBody=json.dumps(template)
        )
        proxy = proxy_for_stack("agentmem-acme", "eu-central-1")

    assert proxy.upstream == api_url.rstrip("/")
    signed = proxy.signer.sign("GET", api_url + "v1/agents", {}, b"")
    assert "Credential=AKIDSTACK/" in signed["Authorization"]
    assert "/eu-central-1/execute-api/aws4_request" in signed["Authorization"]
