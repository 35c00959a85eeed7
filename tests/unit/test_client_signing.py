"""SigV4 signing by MemoryClient: what goes on the wire verifies, by the spec and by botocore, and
credentials come from botocore's chain or the CloudFormation stack's caller."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import boto3
import pytest
from agentmem.client import MemoryClient, MissingCredentials
from agentmem.client.signing import region_from_url
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from moto import mock_aws

ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE//session+token="
REGION = "eu-west-1"
ANSWERS = {
    "retrieve": {
        "runId": "run_1",
        "memory": "enabled",
        "lessons": [],
        "profile": None,
        "facts": [],
        "history": [],
        "messages": [],
        "tokens": 0,
        "degraded": [],
    },
    "memories": {"items": [], "nextCursor": None},
    "health": {"status": "ok", "backend": "aws", "version": "0.1.0"},
}


@dataclass
class Received:
    method: str
    raw_path: str
    headers: dict[str, str]
    body: bytes


class RecordingServer:
    """A loopback HTTP server that records every request as received and answers with the JSON of its route."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        recorded = self.requests

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorded.append(
                    Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                route = urlsplit(self.path).path.rstrip("/").rsplit("/", 1)[-1]
                payload = json.dumps(ANSWERS[route]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    srv = RecordingServer()
    yield srv
    srv.close()


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def spec_signature(req: Received, secret: str, region: str) -> str:
    """The SigV4 signature of a request as received, computed from the spec (no botocore)."""
    amz_date = req.headers["x-amz-date"]
    signed_names = _authorization(req)["SignedHeaders"].split(";")
    split = urlsplit(req.raw_path)
    # Non-S3 services URI-encode each path segment of the path as sent (so %3A becomes %253A).
    canonical_uri = "/".join(quote(segment, safe="-_.~") for segment in split.path.split("/"))
    pairs = sorted(
        (quote(unquote(k), safe="-_.~"), quote(unquote(v), safe="-_.~"))
        for k, _, v in (p.partition("=") for p in split.query.split("&") if p)
    )
    canonical_query = "&".join(f"{k}={v}" for k, v in pairs)
    canonical_headers = "".join(f"{n}:{' '.join(req.headers[n].split())}\n" for n in signed_names)
    canonical_request = "\n".join(
        [
            req.method,
            canonical_uri,
            canonical_query,
            canonical_headers,
            ";".join(signed_names),
            hashlib.sha256(req.body).hexdigest(),
        ]
    )
    scope = f"{amz_date[:8]}/{region}/execute-api/aws4_request"
    string_to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()]
    )
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret}".encode(), amz_date[:8]), region), "execute-api"), "aws4_request")
    return hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()


def botocore_signature(req: Received, url: str, region: str, token: str | None) -> str:
    """The signature botocore computes for the same request (method, URL, signed headers, bytes, time)."""
    signed_names = _authorization(req)["SignedHeaders"].split(";")
    request = AWSRequest(
        method=req.method, url=url + req.raw_path, data=req.body, headers={n: req.headers[n] for n in signed_names}
    )
    request.context["timestamp"] = req.headers["x-amz-date"]
    auth = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, token), "execute-api", region)
    return auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)


def _authorization(req: Received) -> dict[str, str]:
    scheme, _, rest = req.headers["authorization"].partition(" ")
    assert scheme == "AWS4-HMAC-SHA256"
    return dict(part.strip().split("=", 1) for part in rest.split(","))


def signed_client(url: str, token: str | None = SESSION_TOKEN) -> MemoryClient:
    return MemoryClient(url, region=REGION, credentials=Credentials(ACCESS_KEY, SECRET_KEY, token), retries=0)


def test_a_signed_request_carries_the_sigv4_headers_and_its_signature_verifies(server):
    signed_client(server.url).retrieve("auditor", "Audit this café article ✓", token_budget=500)

    [req] = server.requests
    auth = _authorization(req)
    date = req.headers["x-amz-date"]
    assert len(date) == 16 and date.endswith("Z") and date[8] == "T"
    assert auth["Credential"] == f"{ACCESS_KEY}/{date[:8]}/{REGION}/execute-api/aws4_request"
    assert req.headers["x-amz-security-token"] == SESSION_TOKEN
    assert {"host", "x-amz-date", "x-amz-security-token", "content-type"} <= set(auth["SignedHeaders"].split(";"))
    assert json.loads(req.body) == {"input": "Audit this café article ✓", "tokenBudget": 500}
    assert auth["Signature"] == spec_signature(req, SECRET_KEY, REGION)
    assert auth["Signature"] == botocore_signature(req, server.url, REGION, SESSION_TOKEN)


def test_the_signature_covers_the_bytes_sent(server):
    signed_client(server.url).retrieve("auditor", "the original input")
    [req] = server.requests
    tampered = Received(req.method, req.raw_path, req.headers, req.body.replace(b"original", b"modified"))
    assert _authorization(req)["Signature"] != spec_signature(tampered, SECRET_KEY, REGION)
    assert _authorization(req)["Signature"] != spec_signature(req, "another-secret", REGION)


def test_reserved_characters_in_path_and_query_are_signed_as_sent(server):
    # A cursor is opaque (base64 with + / =) and ids may hold `:` and `@`: both must canonicalise alike.
    signed_client(server.url).list_memories("agent:a@b", limit=2, cursor="ab+c/d==")
    [req] = server.requests
    assert req.raw_path == "/v1/agents/agent%3Aa%40b/memories?limit=2&cursor=ab%2Bc%2Fd%3D%3D"
    assert _authorization(req)["Signature"] == spec_signature(req, SECRET_KEY, REGION)
    assert _authorization(req)["Signature"] == botocore_signature(req, server.url, REGION, SESSION_TOKEN)


def test_without_a_session_token_no_token_header_is_sent(server):
    signed_client(server.url, token=None).health()
    [req] = server.requests
    assert "x-amz-security-token" not in req.headers
    assert "x-amz-security-token" not in _authorization(req)["SignedHeaders"]
    assert _authorization(req)["Signature"] == spec_signature(req, SECRET_KEY, REGION)


def test_a_local_url_gets_no_signature_and_a_token_becomes_a_bearer_header(server):
    MemoryClient(server.url).health()
    MemoryClient(server.url, token="local-secret").health()
    plain, bearer = server.requests
    assert "authorization" not in plain.headers and "x-amz-date" not in plain.headers
    assert bearer.headers["authorization"] == "Bearer local-secret"


def test_auto_credentials_come_from_botocores_chain(server, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    MemoryClient(server.url, region="us-east-2", credentials="auto").health()
    [req] = server.requests
    assert _authorization(req)["Credential"].startswith("AKIDFROMENV/")
    assert _authorization(req)["Credential"].endswith("/us-east-2/execute-api/aws4_request")
    assert _authorization(req)["Signature"] == spec_signature(req, SECRET_KEY, "us-east-2")


def test_no_credentials_anywhere_is_a_clear_error_and_nothing_is_sent(server, monkeypatch):
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(MissingCredentials):
        MemoryClient(server.url, region=REGION, credentials="auto").health()
    assert server.requests == []


def test_token_and_credentials_together_are_refused():
    with pytest.raises(ValueError, match="either token"):
        MemoryClient("https://abc123.execute-api.eu-west-1.amazonaws.com/prod", token="t")


@pytest.mark.parametrize(
    ("url", "region"),
    [
        ("https://abc123defg.execute-api.eu-west-1.amazonaws.com/prod", "eu-west-1"),
        ("https://abc123defg.execute-api.us-gov-west-1.amazonaws.com/v1", "us-gov-west-1"),
        ("https://abc123-vpce-0a1b2c.execute-api.ap-southeast-2.vpce.amazonaws.com/prod", "ap-southeast-2"),
        ("https://abc123.execute-api.cn-north-1.amazonaws.com.cn/prod", "cn-north-1"),
        ("https://memory.example.com/prod", None),
        ("http://127.0.0.1:8765", None),
    ],
)
def test_the_region_is_read_from_an_execute_api_url(url, region):
    assert region_from_url(url) == region


def test_an_execute_api_url_is_signed_by_default_with_its_region(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    client = MemoryClient("https://abc123.execute-api.ap-south-1.amazonaws.com/prod/")
    headers = client.policy.signed_headers("GET", client.url + "/v1/health", {}, b"")
    assert client.url == "https://abc123.execute-api.ap-south-1.amazonaws.com/prod"
    assert headers["Host"] == "abc123.execute-api.ap-south-1.amazonaws.com"
    assert "/ap-south-1/execute-api/aws4_request" in headers["Authorization"]


def _create_stack(name: str, outputs: dict[str, str]) -> None:
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(StackName=name, TemplateBody=json.dumps(template))


@pytest.fixture
def aws_env(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSTACKCALLER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")


def test_for_stack_reads_api_url_and_signs_with_the_callers_credentials(server, aws_env):
    with mock_aws():
        _create_stack("agentmem-acme", {"ApiUrl": server.url + "/prod/", "TableName": "t"})
        client = MemoryClient.for_stack("agentmem-acme", region=REGION, retries=0)
        # The caller's credentials, as botocore's chain finds them (moto sets its own inside mock_aws).
        caller = boto3.Session(region_name=REGION).get_credentials().get_frozen_credentials()
    assert client.url == server.url + "/prod"
    client.health()
    [req] = server.requests
    assert req.raw_path == "/prod/v1/health"
    assert _authorization(req)["Credential"].startswith(f"{caller.access_key}/")
    assert _authorization(req)["Credential"].endswith(f"/{REGION}/execute-api/aws4_request")
    assert req.headers.get("x-amz-security-token") == caller.token
    assert _authorization(req)["Signature"] == spec_signature(req, caller.secret_key, REGION)


def test_for_stack_finds_an_api_url_output_nested_in_a_construct(aws_env):
    with mock_aws():
        _create_stack("nested", {"ApiApiUrlC0FFEE12": "https://abc123.execute-api.eu-west-1.amazonaws.com/prod/"})
        client = MemoryClient.for_stack("nested", region=REGION)
    assert client.url == "https://abc123.execute-api.eu-west-1.amazonaws.com/prod"


def test_for_stack_without_an_api_url_output_says_so(aws_env):
    with mock_aws():
        _create_stack("no-api", {"TableName": "t"})
        with pytest.raises(ValueError, match="no ApiUrl output"):
            MemoryClient.for_stack("no-api", region=REGION)
