"""The local server prints no CloudWatch metric JSON, not even after 100 appends (powertools' auto-flush)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from agentmem.local.server import create_app

from tests.integration.local_client import LocalCaller


def test_a_hundred_and_twenty_appends_print_no_metric_json(tmp_path: Path, minilm):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm})
    call = LocalCaller(app)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            for n in range(120):
                status, _ = call("POST", f"/v1/users/u-1/threads/t-{n}/turns",
                                 {"turns": [{"role": "user", "content": f"turn {n}"}]})
                assert status == 201
    finally:
        app.close()
    assert "_aws" not in printed.getvalue() and "CloudWatchMetrics" not in json.dumps(printed.getvalue())
