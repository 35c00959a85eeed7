"""Every MCP tool that stores user text masks it, seen from outside: personal values made up at test
time (so no file of the project holds them) go through the tools of `agentmem mcp`'s in-process
server, and then every file of the data folder (databases, WAL, keys) is searched for their raw bytes.

The tools that store text: retrieve_memory (the run's input), record_run (input and output),
set_run_output, give_feedback (the comment, which becomes a lesson), append_turns (and the profile and
facts consolidated from the turns), edit_profile and update_fact. search_memory and unmask take text
too and must store none of it.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.cli.target import InProcessTransport
from agentmem.client import MemoryClient
from agentmem.domain.pii import TOKEN_PATTERN
from agentmem.domain.profile import SECTIONS
from agentmem.integrations.mcp import TOOLS, Identity, build_server
from agentmem.local.server import create_app
from mcp.client import Client

from tests.integration.indexer_watch import watch_functions
from tests.integration.privacy_values import MadeUpPerson, files_holding, made_up_person, raw_values
from tests.integration.test_mcp_server import call, eventually, payload

AGENT = "privacy-auditor"
USER = "u-private"
# The tools whose arguments are stored (or reach a stored record); the read-only ones are searched too.
WRITING_TOOLS = {"retrieve_memory", "record_run", "set_run_output", "give_feedback", "append_turns",
                 "edit_profile", "update_fact"}
TEXT_TOOLS_THAT_STORE_NOTHING = {"search_memory", "unmask"}


def made_up_name(rng: random.Random) -> str:
    """Two capitalised words of random syllables: a name no gazetteer and no project file holds."""

    def word() -> str:
        syllables = [rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(3, 4))]
        return "".join(syllables).capitalize()

    return f"{word()} {word()}"


@pytest.fixture
def consumed(monkeypatch: pytest.MonkeyPatch) -> threading.Semaphore:
    return watch_functions(monkeypatch, "indexer", "consolidate")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def client(data_dir: Path, minilm: Any, consumed: threading.Semaphore) -> Iterator[MemoryClient]:
    app = create_app(data_dir, start_worker=True, ports={"embedder": minilm}, enabled_agents=[AGENT])
    memory = MemoryClient("http://agentmem.local", transport=InProcessTransport(app))
    yield memory
    memory.close()


@pytest.fixture
def person() -> MadeUpPerson:
    return made_up_person(random.SystemRandom().randrange(2**32))


@pytest.fixture
def name() -> str:
    return made_up_name(random.Random(random.SystemRandom().randrange(2**32)))


def test_the_tools_that_store_text_are_the_ones_this_test_writes_through() -> None:
    """A new tool that takes text must be added here (and to the test below) to be checked."""
    taking_text = {spec.name for spec in TOOLS if set(spec.arguments.model_fields) & {
        "input", "output", "comment", "turns", "markdown", "text", "query"}}
    assert taking_text == WRITING_TOOLS | TEXT_TOOLS_THAT_STORE_NOTHING


def test_no_file_of_the_data_folder_holds_a_value_written_through_any_mcp_tool(
    client: MemoryClient, data_dir: Path, person: MadeUpPerson, name: str, consumed: threading.Semaphore
) -> None:
    def says(where: str) -> str:
        return (f"{where}: my name is {name}, mail {person.email}, card {person.card}, "
                f"call {person.phone_text}.")

    needles = [*raw_values(person), name.encode(), *(part.encode() for part in name.split())]
    unmasked_texts: list[str] = []

    async def steps(c: Client) -> None:
        run = payload(await c.call_tool("retrieve_memory", {"input": says("task"), "threadId": "t-1"}))
        payload(await c.call_tool("set_run_output", {"runId": run["runId"], "output": says("output")}))
        payload(await c.call_tool("give_feedback", {"runId": run["runId"], "rating": "down",
                                                    "comment": says("comment")}))
        recorded = payload(await c.call_tool("record_run", {"input": says("input"), "output": says("answer")}))
        assert recorded["runId"].startswith("run_")
        stored = payload(await c.call_tool("append_turns", {"turns": [
            {"role": "user", "content": says("turn") + " I live in Lisbon and I like ramen."}]}))
        masked_turn = stored["turns"][0]["content"]
        assert TOKEN_PATTERN.search(masked_turn) and person.email not in masked_turn and name not in masked_turn

        async def lessons() -> list[Any]:
            items = payload(await c.call_tool("list_lessons", {}))["items"]
            return items if items and all(x.get("status") != "pending" for x in items) else []

        async def facts() -> list[Any]:
            return list(payload(await c.call_tool("list_facts", {}))["items"])

        async def profile() -> Any:
            current = payload(await c.call_tool("get_profile", {}))
            return current if current["version"] >= 1 else None

        (lesson,) = await eventually(lessons, consumed)
        fact = (await eventually(facts, consumed))[0]
        consolidated = await eventually(profile, consumed)
        body = "".join(f"## {section}\n" + (f"- {says('profile')}\n" if i == 0 else "")
                       for i, section in enumerate(SECTIONS))
        edited = payload(await c.call_tool("edit_profile", {"markdown": body, "version": consolidated["version"]}))
        updated = payload(await c.call_tool("update_fact", {"factId": fact["factId"], "text": says("fact")}))
        payload(await c.call_tool("search_memory", {"query": says("query")}))
        payload(await c.call_tool("unmask", {"text": says("unmask")}))

        # What was stored is tokens that the user's own unmask turns back into the values: the values went in.
        for text in (masked_turn, lesson["comment"], edited["markdown"], updated["text"]):
            unmasked_texts.append(payload(await c.call_tool("unmask", {"text": text}))["text"])

    call(build_server(client, Identity(AGENT, USER, "t-1")), steps)

    assert all(person.email in text and name in text for text in unmasked_texts), unmasked_texts
    # The search reads what was stored: a word of the same turn that is no personal data is found.
    assert files_holding(data_dir, [b"ramen"]), sorted(data_dir.rglob("*"))
    assert files_holding(data_dir, needles) == {}
