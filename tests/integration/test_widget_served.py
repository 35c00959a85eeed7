"""The feedback widget's file at its stable, versioned path, and the wall's script: from `agentmem serve` and from
`agentmem wall`'s proxy."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from agentmem.client.signing import SigV4Signer
from agentmem.local.server import create_app
from agentmem.local.static_files import WALL_SCRIPT_PATH, WIDGET_PATH, wall_script, widget_script
from agentmem.local.wall_proxy import WallProxy
from botocore.credentials import Credentials

from tests.integration.served import serving

TOKEN = "widget-test-token"
CROSS_SITE = {"Origin": "https://shop.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "script"}


def get(url: str, method: str = "GET", path: str = WIDGET_PATH, headers: dict[str, str] | None = None,
        ) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", urlsplit(url).port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, minilm: Any):
    # With a token: the widget is public code, so even then it loads without one.
    app = create_app(tmp_path_factory.mktemp("widget"), start_worker=False, ports={"embedder": minilm},
                     enabled_agents=["auditor"], api_token=TOKEN)
    try:
        with serving(app) as url:
            yield url
    finally:
        app.close()


def test_the_widget_is_served_as_javascript_at_its_versioned_path(served):
    status, headers, body = get(served)
    assert status == 200
    assert headers["content-type"].startswith("text/javascript")
    assert headers["x-content-type-options"] == "nosniff"
    assert body == widget_script()
    assert b'customElements.define(TAG' in body and b'const TAG = "agentmem-feedback"' in body


def test_a_host_page_on_another_origin_may_load_it_without_a_token(served):
    status, headers, body = get(served, headers=CROSS_SITE)
    assert status == 200 and body == widget_script()
    # Open to every origin, so a host may pin it with integrity= and crossorigin=.
    assert headers["access-control-allow-origin"] == "*"
    assert headers["cross-origin-resource-policy"] == "cross-origin"
    assert "etag" in headers


def test_head_answers_without_a_body(served):
    status, headers, body = get(served, "HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) == len(widget_script())


def test_the_api_beside_it_still_refuses_cross_site_and_tokenless_callers(served):
    status, _, body = get(served, path="/v1/agents", headers=CROSS_SITE)
    assert status == 403 and json.loads(body)["error"]["code"] == "cross_site_refused"
    status, _, body = get(served, path="/v1/agents")
    assert status == 403 and json.loads(body)["error"]["code"] == "forbidden"


def test_an_unknown_static_file_is_a_404(served):
    status, _, body = get(served, path="/static/agentmem-feedback.v0.js")
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"


def test_writing_to_the_static_path_is_refused(served):
    status, _, _ = get(served, "POST", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 405
    status, _, body = get(served, "POST", headers=CROSS_SITE)
    assert status == 403 and json.loads(body)["error"]["code"] == "cross_site_refused"


def test_the_wall_proxy_serves_the_same_file_for_the_walls_runs_tab(tmp_path: Path):
    proxy = WallProxy("https://abc.execute-api.eu-west-1.amazonaws.com/v1",
                      SigV4Signer("eu-west-1", Credentials("AKIDEXAMPLE", "secret")))
    status, headers, body = proxy.handle("GET", WIDGET_PATH, {}, b"")
    assert status == 200 and body == widget_script()
    assert headers["Content-Type"].startswith("text/javascript")


@pytest.mark.parametrize("path", ["/wall", WIDGET_PATH])
def test_no_other_site_may_frame_the_wall_or_a_static_file(served, path):
    status, headers, _ = get(served, path=path, headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "iframe"})
    assert status == 200
    assert headers["content-security-policy"] == "frame-ancestors 'none'"
    assert headers["x-frame-options"] == "DENY"


def test_the_widget_script_stays_loadable_as_a_script_from_any_origin_despite_the_framing_rule(served):
    status, headers, body = get(served, headers=CROSS_SITE)
    assert status == 200 and body == widget_script() and headers["content-type"].startswith("text/javascript")
    # frame-ancestors and X-Frame-Options govern documents in frames; a script has neither and no other CSP.
    assert headers["content-security-policy"] == "frame-ancestors 'none'"
    assert headers["access-control-allow-origin"] == "*" and headers["cross-origin-resource-policy"] == "cross-origin"


def test_the_wall_proxys_page_and_widget_cannot_be_framed_either(tmp_path: Path):
    proxy = WallProxy("https://abc.execute-api.eu-west-1.amazonaws.com/v1",
                      SigV4Signer("eu-west-1", Credentials("AKIDEXAMPLE", "secret")))
    for path in ("/wall", WIDGET_PATH):
        status, headers, _ = proxy.handle("GET", path, {}, b"")
        lowered = {k.lower(): v for k, v in headers.items()}
        assert status == 200 and lowered["content-security-policy"] == "frame-ancestors 'none'"
        assert lowered["x-frame-options"] == "DENY"


def test_the_walls_script_is_served_as_javascript_and_revalidated_on_every_load(served):
    status, headers, body = get(served, path=WALL_SCRIPT_PATH)
    assert status == 200 and body == wall_script()
    assert headers["content-type"].startswith("text/javascript")
    assert headers["cache-control"] == "no-cache" and "etag" in headers
    status, _, body = get(served, path=WALL_SCRIPT_PATH, headers={"If-None-Match": headers["etag"]})
    assert status == 304 and body == b""


def test_the_wall_proxy_serves_the_walls_script_without_a_token():
    proxy = WallProxy("https://abc.execute-api.eu-west-1.amazonaws.com/v1",
                      SigV4Signer("eu-west-1", Credentials("AKIDEXAMPLE", "secret")))
    status, headers, body = proxy.handle("GET", WALL_SCRIPT_PATH, {}, b"")
    assert status == 200 and body == wall_script()
    assert headers["Content-Type"].startswith("text/javascript") and headers["cache-control"] == "no-cache"
