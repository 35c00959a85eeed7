"""`agentmem serve` when something escapes a handler: still the contract's error body, never text/plain."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentmem.local.server import create_app

from tests.integration.served import serving


def test_an_exception_escaping_the_handlers_is_a_500_in_the_contracts_body(tmp_path: Path, minilm: Any):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, enabled_agents=["auditor"])

    def broken(*_: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")  # what a 2,000-level JSON body once did

    app.handle = broken  # type: ignore[method-assign]
    try:
        with serving(app) as url:
            conn = http.client.HTTPConnection("127.0.0.1", urlsplit(url).port, timeout=10)
            conn.request("POST", "/v1/agents/auditor/retrieve", body=b'{"input": "x"}')
            response = conn.getresponse()
            status, content_type, body = response.status, response.getheader("Content-Type"), response.read()
            conn.close()
    finally:
        app.close()
    assert status == 500
    assert content_type == "application/json"
    assert json.loads(body) == {"error": {"code": "internal_error", "message": "internal error", "details": []}}
