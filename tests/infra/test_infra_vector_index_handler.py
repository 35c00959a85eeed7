"""The `Custom::VectorIndex` provider: what it does per CloudFormation request, and what it sends.

The index API is an in-memory fake of the four OpenSearch calls; the signed HTTP
client and the CloudFormation response are exercised against a loopback server.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from agentmem.adapters.aws.vector_mapping import index_body
from botocore.credentials import Credentials

from infra.custom_resources.vector_index import handler
from infra.custom_resources.vector_index.handler import (
    FAILED_PHYSICAL_ID,
    IndexApiError,
    MappingConflict,
    SigV4IndexApi,
    handle,
)

ENDPOINT = "https://abc123.us-east-1.aoss.amazonaws.com"


class FakeIndexApi:
    """The index calls of one collection, kept in a dict."""

    def __init__(self, indexes: dict[str, dict[str, Any]] | None = None) -> None:
        self.indexes = indexes or {}
        self.calls: list[tuple[str, str]] = []

    def get_mapping(self, index: str) -> dict[str, Any] | None:
        self.calls.append(("get", index))
        return self.indexes[index]["mappings"] if index in self.indexes else None

    def create(self, index: str, body: Mapping[str, Any]) -> None:
        self.calls.append(("create", index))
        self.indexes[index] = json.loads(json.dumps(body))

    def put_mapping(self, index: str, mapping: Mapping[str, Any]) -> None:
        self.calls.append(("put_mapping", index))
        current = self.indexes[index]["mappings"]
        current.setdefault("properties", {}).update(mapping.get("properties", {}))
        if "dynamic" in mapping:
            current["dynamic"] = mapping["dynamic"]

    def delete(self, index: str) -> bool:
        self.calls.append(("delete", index))
        return self.indexes.pop(index, None) is not None


def event(request_type: str, *, dimension: int = 1024, name: str = "agentmem-acme", retain: bool = False,
          physical_id: str | None = None) -> dict[str, Any]:  # fmt: skip
    body = {
        "RequestType": request_type,
        "ResourceProperties": {
            "ServiceToken": "arn:aws:lambda:us-east-1:111122223333:function:provider",
            "Endpoint": ENDPOINT,
            "CollectionName": "agentmem-acme",
            "IndexName": name,
            "IndexBody": json.dumps(index_body(dimension)),
            "RetainOnDelete": "true" if retain else "false",
        },
    }
    if physical_id is not None:
        body["PhysicalResourceId"] = physical_id
    return body


def test_create_makes_the_index_with_the_body() -> None:
    api = FakeIndexApi()
    physical_id, data = handle(event("Create"), lambda endpoint: api)

    assert physical_id == "index/agentmem-acme/agentmem-acme"
    assert data["Outcome"] == "created"
    assert api.indexes["agentmem-acme"] == index_body(1024)


def test_create_adopts_an_existing_index_that_agrees() -> None:
    api = FakeIndexApi({"agentmem-acme": index_body(1024)})
    _, data = handle(event("Create"), lambda endpoint: api)

    assert data["Outcome"] == "unchanged"
    assert ("create", "agentmem-acme") not in api.calls


def test_a_field_missing_from_an_existing_index_is_added_alone() -> None:
    existing = index_body(1024)
    del existing["mappings"]["properties"]["userId"]
    api = FakeIndexApi({"agentmem-acme": existing})

    _, data = handle(event("Update", physical_id="index/agentmem-acme/agentmem-acme"), lambda endpoint: api)

    assert data["Outcome"] == "updated"
    assert api.indexes["agentmem-acme"]["mappings"]["properties"]["userId"] == {"type": "keyword"}


def test_another_vector_dimension_fails_naming_the_field() -> None:
    api = FakeIndexApi({"agentmem-acme": index_body(512)})
    with pytest.raises(MappingConflict, match="vector"):
        handle(event("Update", physical_id="index/agentmem-acme/agentmem-acme"), lambda endpoint: api)
    assert api.indexes["agentmem-acme"] == index_body(512)


def test_defaults_opensearch_adds_do_not_count_as_a_difference() -> None:
    existing = index_body(1024)
    existing["mappings"]["properties"]["vector"]["data_type"] = "float"
    existing["mappings"]["properties"]["vector"]["dimension"] = "1024"
    api = FakeIndexApi({"agentmem-acme": existing})

    _, data = handle(event("Create"), lambda endpoint: api)
    assert data["Outcome"] == "unchanged"


def test_a_new_index_name_is_a_new_physical_resource() -> None:
    api = FakeIndexApi({"agentmem-acme": index_body(1024)})
    physical_id, _ = handle(
        event("Update", name="agentmem-acme-v2", physical_id="index/agentmem-acme/agentmem-acme"),
        lambda endpoint: api,
    )
    assert physical_id == "index/agentmem-acme/agentmem-acme-v2"
    assert set(api.indexes) == {"agentmem-acme", "agentmem-acme-v2"}


@pytest.mark.parametrize(("retain", "remaining"), [(True, {"agentmem-acme"}), (False, set())])
def test_delete_follows_the_removal_policy(retain: bool, remaining: set[str]) -> None:
    api = FakeIndexApi({"agentmem-acme": index_body(1024)})
    handle(event("Delete", retain=retain, physical_id="index/agentmem-acme/agentmem-acme"), lambda endpoint: api)
    assert set(api.indexes) == remaining


def test_delete_after_a_failed_create_touches_nothing() -> None:
    api = FakeIndexApi({"agentmem-acme": index_body(1024)})
    physical_id, _ = handle(event("Delete", physical_id=FAILED_PHYSICAL_ID), lambda endpoint: api)
    assert physical_id == FAILED_PHYSICAL_ID
    assert api.calls == []


# --- over HTTP -------------------------------------------------------------------------------


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class LoopbackServer:
    url: str
    requests: list[Recorded] = field(default_factory=list)
    # (status, body) answered in turn; the last one repeats.
    answers: list[tuple[int, str]] = field(default_factory=lambda: [(200, "{}")])


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    state = LoopbackServer(url="")

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            state.requests.append(
                Recorded(self.command, self.path, dict(self.headers.items()), self.rfile.read(length))
            )
            status, text = state.answers[0] if len(state.answers) == 1 else state.answers.pop(0)
            payload = text.encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_PUT = do_DELETE = _answer

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


def signed_api(server: LoopbackServer, sleeps: list[float] | None = None) -> SigV4IndexApi:
    return SigV4IndexApi(
        server.url,
        region="us-east-1",
        credentials=Credentials("AKIDEXAMPLE", "secret"),
        sleep=(sleeps.append if sleeps is not None else lambda seconds: None),
    )


def test_requests_are_sigv4_signed_for_aoss_with_the_payload_hash(server: LoopbackServer) -> None:
    signed_api(server).create("agentmem-acme", index_body(256))

    [request] = server.requests
    assert (request.method, request.path) == ("PUT", "/agentmem-acme")
    assert json.loads(request.body) == index_body(256)
    headers = {name.lower(): value for name, value in request.headers.items()}
    assert headers["x-amz-content-sha256"] == hashlib.sha256(request.body).hexdigest()
    authorization = headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/aoss/aws4_request" in authorization
    assert "x-amz-content-sha256" in authorization


def test_a_missing_index_reads_as_none_and_a_mapping_as_its_mappings(server: LoopbackServer) -> None:
    server.answers = [(404, '{"error": "index_not_found_exception"}'),
                      (200, json.dumps({"agentmem-acme": {"mappings": {"dynamic": "strict"}}}))]  # fmt: skip
    api = signed_api(server)

    assert api.get_mapping("agentmem-acme") is None
    assert api.get_mapping("agentmem-acme") == {"dynamic": "strict"}
    assert [r.path for r in server.requests] == ["/agentmem-acme/_mapping"] * 2


def test_forbidden_is_retried_while_the_access_policy_applies(server: LoopbackServer) -> None:
    server.answers = [(403, "{}"), (403, "{}"), (200, "{}")]
    sleeps: list[float] = []
    signed_api(server, sleeps).create("agentmem-acme", index_body(256))

    assert len(server.requests) == 3
    assert sleeps == [2.0, 4.0]


def test_a_client_error_is_not_retried(server: LoopbackServer) -> None:
    server.answers = [(400, '{"error": "mapper_parsing_exception"}')]
    with pytest.raises(IndexApiError, match="400"):
        signed_api(server).create("agentmem-acme", index_body(256))
    assert len(server.requests) == 1


class FakeContext:
    def get_remaining_time_in_millis(self) -> int:
        return 600_000


def cloudformation_event(server: LoopbackServer, request_type: str, **properties: Any) -> dict[str, Any]:
    base = event(request_type, **properties)
    base["ResourceProperties"]["Endpoint"] = server.url
    base.update(
        ResponseURL=f"{server.url}/cloudformation-response",
        StackId="arn:aws:cloudformation:us-east-1:111122223333:stack/AgentMem-acme/1",
        RequestId="req-1",
        LogicalResourceId="VectorIndex",
    )
    return base


def test_a_failed_create_reports_failed_with_a_physical_id_delete_ignores(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    # GET mapping: 404 (no index); PUT index: 400; then the CloudFormation response.
    server.answers = [(404, "{}"), (400, '{"error": "bad mapping"}'), (200, "")]

    handler.on_event(cloudformation_event(server, "Create"), FakeContext())

    response = server.requests[-1]
    assert (response.method, response.path) == ("PUT", "/cloudformation-response")
    # The pre-signed URL is signed without a content type: sending one would void the signature.
    assert {k.lower(): v for k, v in response.headers.items()}.get("content-type", "") == ""
    sent = json.loads(response.body)
    assert sent["Status"] == "FAILED"
    assert "400" in sent["Reason"]
    assert sent["PhysicalResourceId"] == FAILED_PHYSICAL_ID
    assert (sent["RequestId"], sent["LogicalResourceId"]) == ("req-1", "VectorIndex")


def test_a_successful_create_reports_success_and_the_index_id(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    server.answers = [(404, "{}"), (200, '{"acknowledged": true}'), (200, "")]

    handler.on_event(cloudformation_event(server, "Create"), FakeContext())

    sent = json.loads(server.requests[-1].body)
    assert sent["Status"] == "SUCCESS"
    assert sent["PhysicalResourceId"] == "index/agentmem-acme/agentmem-acme"
    assert sent["Data"]["Outcome"] == "created"
