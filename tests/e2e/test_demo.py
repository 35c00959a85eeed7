"""`agentmem demo` end to end: a real local server on a socket, the real client, the real model."""

from __future__ import annotations

import re

from agentmem.cli.main import cli
from agentmem.demo.auditor import CLICHES, HYPE, INTENSIFIERS
from click.testing import CliRunner

README_LINE = "flags: 19 -> 12"


def test_the_demo_shows_fewer_flags_after_feedback_and_leaves_other_agents_untouched():
    result = CliRunner().invoke(cli, ["demo", "--batch"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    last = re.fullmatch(r"flags: (\d+) -> (\d+)", lines[-1])
    assert last, lines[-1]
    before, after = int(last.group(1)), int(last.group(2))
    assert before >= 12 and after < before
    assert "Lessons from past runs" in result.output
    # Articles never given feedback lose flags too; the other agent got no lesson.
    unseen = re.search(r"(\d+) articles never given feedback: (\d+) -> (\d+) flags", result.output)
    assert unseen and int(unseen.group(3)) < int(unseen.group(2))
    assert "'copy-editor': 30 flags, 0 lessons injected" in result.output


class ChatServerDouble:
    """A stand-in for an OpenAI-compatible chat SERVER (not for the demo under test), on 127.0.0.1.

    It answers like a model that knows only its prompt and follows it: it knows the generic style guide
    the agent's instruction names (clichés, hype, filler intensifiers, stacked exclamation marks) and
    flags what of it it finds in the article (the last user message), except phrases an editor quoted
    in a bullet under "Mistakes to avoid" of a system message. It never sees `lessons[]`: whatever
    agentmem fails to put in the prompt, this model cannot learn. What is tested is the demo's LLM
    path and what `retrieve` puts in `messages`.
    """

    PHRASES = (*CLICHES, *HYPE, *INTENSIFIERS)

    def __init__(self) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        double = self
        self.requests: list[dict] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                double.requests.append(body)
                answer = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"], "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                                      "content": double.audit(body["messages"])}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer.encode())

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def audit(self, messages: list[dict]) -> str:
        avoid: set[str] = set()
        for message in (m for m in messages if m["role"] == "system"):
            section = ""
            for line in message["content"].lower().splitlines():
                if line.startswith("- ") and "mistakes to avoid" in section:
                    avoid.update(re.findall(r"'([^']+)'", line))
                elif not line.startswith("- "):
                    section = line
        article = [m["content"] for m in messages if m["role"] == "user"][-1].lower()
        found = [p for p in self.PHRASES if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", article)]
        flags = [p for p in found if p not in avoid]
        if "!!" in article:
            flags.append("!!")
        return "\n".join(f"FLAG '{p}': off-brand" for p in flags) or "No brand-voice issues found."


def test_the_rule_based_demo_ends_at_the_readmes_line():
    result = CliRunner().invoke(cli, ["demo"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == README_LINE


def test_a_model_that_knows_only_its_prompt_learns_what_the_rule_based_auditor_learns(monkeypatch):
    """The three editors' lessons are three teachings: each must reach the prompt, or this model flags it."""
    server = ChatServerDouble()
    monkeypatch.setenv("AGENTMEM_OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("AGENTMEM_OPENAI_MODEL", "auditor-model")
    try:
        result = CliRunner().invoke(cli, ["demo", "--llm", "openai"], catch_exceptions=False)
    finally:
        server.server.shutdown()
    assert result.exit_code == 0, result.output
    assert "using an LLM" in result.output
    assert result.output.strip().splitlines()[-1] == README_LINE
    second_pass = server.requests[len(server.requests) // 2:]
    systems = [m["content"] for r in second_pass for m in r["messages"]
               if m["role"] == "system" and "Lessons from past runs" in m["content"]]
    for idiom in ("'Trail magic'", "'Pack it in, pack it out'", "'Hike your own hike'"):
        assert any(idiom in system for system in systems), idiom
    # What the runs held (the article, the agent's own FLAG lines) is never in agentmem's system message.
    run_text = ("FLAG 'trail magic'", "FLAG 'revolutionary'", "Brand-voice audit for", "Nobody forgets their first")
    assert systems and not any(text in system for system in systems for text in run_text)


def test_with_a_model_configured_the_demo_agent_audits_through_it(monkeypatch):
    server = ChatServerDouble()
    monkeypatch.setenv("AGENTMEM_OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("AGENTMEM_OPENAI_MODEL", "auditor-model")
    try:
        result = CliRunner().invoke(cli, ["demo"], catch_exceptions=False)
    finally:
        server.server.shutdown()
    assert result.exit_code == 0, result.output
    assert "using an LLM" in result.output
    before, after = map(int, re.fullmatch(r"flags: (\d+) -> (\d+)", result.output.strip().splitlines()[-1]).groups())
    assert after < before
    # The second pass sent the injected lessons in front of the agent's own prompt.
    second_pass = server.requests[len(server.requests) // 2:]
    assert any("Lessons from past runs" in r["messages"][0]["content"] for r in second_pass)
    assert all(r["model"] == "auditor-model" for r in server.requests)
