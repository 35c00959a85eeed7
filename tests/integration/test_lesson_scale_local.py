"""Hundreds of lessons cut from one template (conversation lines): topK still counts distinct teachings."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from agentmem.domain.lessons import MAX_LISTED_MEMBERS
from agentmem.local.server import create_app

from tests.integration.local_client import LocalCaller

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October")
PLACES = ("the LGBTQ support group", "the pottery class", "a charity run", "the beach", "a concert", "the museum")


def conversation_lines(count: int) -> list[str]:
    """Lines like the ones LoCoMo's sessions are made of: one template, a different date or place each."""
    lines = []
    for i, (month, place) in enumerate(itertools.product(MONTHS, PLACES)):
        lines.append(f"Caroline went to {place} on {i % 27 + 1} {month} 2023.")
        lines.append(f"Caroline and Melanie spoke at {i % 12 + 1}:{i % 60:02d} pm on {i % 27 + 1} {month}, 2023.")
        lines.append(f"John adopted a {('dog', 'cat', 'parrot')[i % 3]} in {month} {2019 + i % 4}.")
    return lines[:count]


@pytest.fixture
def app(tmp_path: Path, minilm):
    app = create_app(tmp_path, start_worker=False, ports={"embedder": minilm}, enabled_agents=["memo"])
    yield app
    app.close()


def test_a_top_k_of_five_is_five_bullets_and_a_bounded_list_in_a_store_of_one_template(app):
    call = LocalCaller(app)
    lines = conversation_lines(180)
    for line in lines:
        _, answer = call("POST", "/v1/agents/memo/retrieve", {"input": f"What happened? {line}"})
        status, _ = call("POST", f"/v1/agents/memo/runs/{answer['runId']}/feedback", {"rating": "up", "comment": line})
        assert status == 202
    assert app.worker.drain(timeout=600) >= len(lines)  # a bound for a busy machine, not a timing
    for question in ("When did Caroline go to the LGBTQ support group?", "What did John adopt in April 2022?"):
        status, answer = call("POST", "/v1/agents/memo/retrieve", {"input": question, "topK": 5})
        assert status == 200
        system = answer["messages"][0]["content"]
        bullets = [line for line in system.splitlines() if line.startswith("- ")]
        assert len(bullets) == 5, system
        assert len(answer["lessons"]) <= 5 * MAX_LISTED_MEMBERS
        assert len({lesson["groupId"] for lesson in answer["lessons"]}) == 5
