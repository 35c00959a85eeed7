"""Where `agentmem serve` may listen: loopback freely, anything wider only with an API token.

Its own module: each test wires its own app (the wiring is process-wide), so none shares a server.
"""

from __future__ import annotations

import http.client
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from agentmem.local.security import UnsafeBind
from agentmem.local.server import create_app, make_http_server

from tests.integration.served import serving

TOKEN = "http-test-token"


def status_of(port: int, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/v1/health", headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_listening_beyond_loopback_without_a_token_is_refused(tmp_path: Path, minilm):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    try:
        with pytest.raises(UnsafeBind, match="apiToken"):
            make_http_server(app, "0.0.0.0", 0)
    finally:
        app.close()


def test_with_a_token_a_wildcard_bind_serves_and_asks_for_the_token(tmp_path: Path, minilm):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, api_token=TOKEN)
    try:
        with serving(app, "0.0.0.0") as url:
            port = int(urlsplit(url).port or 0)
            assert status_of(port, {}) == 403
            assert status_of(port, {"Authorization": f"Bearer {TOKEN}", "Host": "my-workstation.lan"}) == 200
    finally:
        app.close()


def test_serve_refuses_a_wildcard_bind_before_starting_a_worker_or_writing_a_file(tmp_path: Path, monkeypatch):
    import threading

    from agentmem.cli.main import cli
    from click.testing import CliRunner

    monkeypatch.delenv("AGENTMEM_API_TOKEN", raising=False)
    data_dir = tmp_path / "fresh"
    threads_before = {t.ident for t in threading.enumerate()}
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", str(data_dir)])
    assert result.exit_code == 1 and "apiToken" in result.output
    assert not data_dir.exists()
    started = [t.name for t in threading.enumerate() if t.ident not in threads_before]
    assert started == []


def test_create_app_for_a_wildcard_host_without_a_token_raises_before_wiring(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("AGENTMEM_API_TOKEN", raising=False)
    with pytest.raises(UnsafeBind, match="apiToken"):
        create_app(tmp_path / "fresh", host="0.0.0.0")
    assert not (tmp_path / "fresh").exists()
