"""Every sample event in events/ runs through its function's real handler, as `agentmem invoke` runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentmem.local.lambda_runtime import invoke
from agentmem.local.server import create_app
from pydantic import ValidationError

from functions.catalog import FUNCTIONS
from tests.conftest import EVENTS

SAMPLES = sorted(EVENTS.glob("*/*.json"))
HTTP_FUNCTIONS = {spec.name for spec in FUNCTIONS if spec.routes}


@pytest.fixture(scope="module")
def app(tmp_path_factory, minilm):
    app = create_app(tmp_path_factory.mktemp("events"), start_worker=False, ports={"embedder": minilm},
                     tenant="acme", enabled_agents=["brand-auditor"])
    yield app
    app.close()


def test_there_is_a_sample_event_for_every_route_and_every_consumer():
    covered = set()
    for path in SAMPLES:
        event = json.loads(path.read_text())
        if "httpMethod" in event:
            covered.add((event["httpMethod"], event["resource"]))
        elif "Records" in event:
            # An SQS batch, as a consumer's event source mapping hands it: each body is an EventBridge event.
            covered |= {("SQS", json.loads(r["body"])["detail-type"]) for r in event["Records"]}
        else:
            covered.add(("EVENT", event["detail-type"]))
    wanted = {(m, r) for spec in FUNCTIONS for m, r in spec.routes}
    wanted |= {("EVENT", t) for spec in FUNCTIONS for t in spec.consumes}
    wanted |= {("SQS", t) for spec in FUNCTIONS for t in spec.consumes}
    wanted |= {("EVENT", "Scheduled Event") for spec in FUNCTIONS if spec.schedule}
    assert wanted <= covered, sorted(wanted - covered)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_sample_event_gets_a_contract_answer(app, path: Path):
    function = path.parent.name
    assert function in {spec.name for spec in FUNCTIONS}, f"events/{function}/ names no function"
    event = json.loads(path.read_text())
    if function not in HTTP_FUNCTIONS and "invalid" in path.stem:
        # A malformed event raises, so EventBridge retries it and then parks it in the dead-letter queue.
        with pytest.raises(ValidationError):
            invoke(function, event)
        return
    result = invoke(function, event)
    if function in HTTP_FUNCTIONS:
        status = result["statusCode"]
        body = json.loads(result["body"]) if result.get("body") else None
        if "invalid" in path.stem or "without" in path.stem:
            assert status == 400 and body["error"]["code"] == "validation_error", body
        else:
            assert status < 500, body
            if status >= 400:
                assert set(body["error"]) == {"code", "message", "details"}
    else:
        assert isinstance(result, dict)
