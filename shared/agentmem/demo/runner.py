"""The Brand Voice Audit: an agent audits articles, an editor corrects it, and the agent learns.

Everything goes through agentmem's HTTP API with the real client, against a
local service it starts in a temporary folder (or any running one, `--url`).
"""

from __future__ import annotations

import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem.client import MemoryClient
from agentmem.demo.articles import ARTICLES, BRAND, MORE_ARTICLES, Article
from agentmem.demo.auditor import Audit, Flag, rule_based_audit

AUDITOR = "brand-auditor"
OTHER_AGENT = "copy-editor"
# The editor's verdicts: (article slug, idiom, comment). Each names the idiom in quotes.
EDITOR_VERDICTS: tuple[tuple[str, str], ...] = (
    ("first-overnight", "'Trail magic' is our own idiom, used on purpose: it is brand voice, not a cliché. "
                        "Never flag it."),
    ("stove-guide", "'Pack it in, pack it out' is our house motto and belongs in every gear article. "
                    "Do not flag it as a cliché."),
    ("rain-layers", "'Hike your own hike' is an intentional brand idiom; our readers know and love it. "
                    "Do not flag it."),
)

Say = Callable[[str], None]
LlmCall = Callable[[list[dict[str, str]]], str]


@dataclass
class Pass:
    """One audit pass over some articles by one agent."""

    flags: dict[str, list[Flag]] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)
    lessons: dict[str, list[Any]] = field(default_factory=dict)

    def total(self, slugs: Sequence[str] | None = None) -> int:
        return sum(len(v) for k, v in self.flags.items() if slugs is None or k in slugs)


def audit_input(article: Article) -> str:
    return f"Brand-voice audit for {BRAND}.\n\n{article.text}"


def run_audit(client: MemoryClient, agent: str, articles: Sequence[Article], llm: LlmCall | None, say: Say) -> Pass:
    result = Pass()
    for article in articles:
        memory = client.retrieve(agent, audit_input(article))
        # Either way the agent decides from what `retrieve` put in its prompt, never from `lessons[]`.
        messages = [{"role": m.role, "content": m.content} for m in memory.messages]
        audit = llm_audit(llm, memory.messages, article) if llm else rule_based_audit(article.text, messages)
        client.set_output(agent, memory.run_id, audit.output())
        result.flags[article.slug] = audit.flags
        result.runs[article.slug] = memory.run_id
        result.lessons[article.slug] = memory.lessons
        shown = ", ".join(f"'{f.phrase}'" for f in audit.flags) or "none"
        say(f"  {article.slug:<18} {len(audit.flags):>2} flag(s): {shown}")
        for phrase, label in audit.suppressed:
            say(f"  {'':<18}    not flagged: '{phrase}' (lesson [{label}] of the prompt)")
    return result


def llm_audit(llm: LlmCall, memory_messages: Sequence[Any], article: Article) -> Audit:
    """Ask a model for the audit, with agentmem's messages in front of the agent's own prompt."""
    messages = [{"role": m.role, "content": m.content} for m in memory_messages]
    messages.append({"role": "system", "content": (
        f"You audit articles for the brand voice of {BRAND}: plain, warm, no hype, no filler intensifiers, "
        "no stacked exclamation marks, no clichés. Answer only with lines of the form "
        "FLAG '<exact phrase>': <reason>, or 'No brand-voice issues found.'")})
    messages.append({"role": "user", "content": article.text})
    answer = llm(messages)
    flags = [Flag(m.group(1), m.group(2).strip()) for m in re.finditer(r"FLAG '([^']+)':\s*(.+)", answer)]
    return Audit(flags, [])


# Indexing takes well under a second on a quiet machine; a busy one (a test run beside it) can take
# many seconds. The demo waits on the lessons' own state for as long as they are pending, up to this.
INDEXING_PATIENCE_SECONDS = 300.0


def wait_until_indexed(
    client: MemoryClient, agent: str, memory_ids: set[str], *, say: Say | None = None,
    patience: float = INDEXING_PATIENCE_SECONDS, poll: float = 0.05,
) -> float:
    """Seconds until every lesson is indexed (the indexer runs asynchronously).

    Waits on their state, not on a clock: while a lesson is pending it is being indexed (the worker
    retries failures), so the wait goes on, saying so after a few seconds, up to `patience`. A lesson
    that is gone or deleted ends the wait at once with an error.
    """
    start = time.monotonic()
    told = False
    while True:
        statuses = {m.memory_id: m.status for m in client.iter_memories(agent)}
        waiting = {i: statuses.get(i) for i in memory_ids if statuses.get(i) != "indexed"}
        if not waiting:
            return time.monotonic() - start
        lost = sorted(i for i, status in waiting.items() if i not in statuses or status == "deleted")
        if lost:
            raise RuntimeError(f"lesson(s) {', '.join(lost)} deleted or gone: they will not be indexed")
        waited = time.monotonic() - start
        if waited > patience:
            raise TimeoutError(f"{len(waiting)} lesson(s) still pending after {patience:.0f} s")
        if say is not None and not told and waited > 5:
            say(f"  (still indexing {len(waiting)} lesson(s): the machine is busy; waiting on their state)")
            told = True
        time.sleep(poll)


@contextmanager
def local_service(agents: Sequence[str]) -> Iterator[str]:
    """A local agentmem on a free loopback port, in a temporary data folder."""
    from agentmem.local.server import create_app, make_http_server

    with tempfile.TemporaryDirectory(prefix="agentmem-demo-") as tmp:
        app = create_app(Path(tmp), enabled_agents=list(agents))
        server = make_http_server(app, "127.0.0.1", 0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            host, port = str(server.server_address[0]), int(server.server_address[1])
            yield f"http://{host}:{port}"
        finally:
            server.shutdown()
            server.server_close()
            app.close()


def demo(client: MemoryClient, *, batch: bool, llm: LlmCall | None, say: Say) -> tuple[int, int]:
    """The whole story; returns (flags before, flags after)."""
    articles = list(ARTICLES) + (list(MORE_ARTICLES) if batch else [])
    mode = "an LLM" if llm else "the rule-based auditor (no LLM configured)"
    say(f"Brand Voice Audit of {len(articles)} {BRAND} articles by '{AUDITOR}', using {mode}.\n")
    say("1. First audit, no lessons yet:")
    before = run_audit(client, AUDITOR, articles, llm, say)

    say("\n2. The editor gives 👎 with a reason on three runs that flagged the brand's own idioms:")
    memory_ids = set()
    for slug, comment in EDITOR_VERDICTS:
        receipt = client.feedback(AUDITOR, before.runs[slug], "down", comment)
        memory_ids.add(receipt.memory_id or "")
        say(f"  👎 {slug:<18} \"{comment}\"")
    waited = wait_until_indexed(client, AUDITOR, memory_ids, say=say)
    say(f"  (the three lessons were indexed {waited:.2f} s after the feedback)")

    say("\n3. Second audit: agentmem injects the lessons before each run:")
    after = run_audit(client, AUDITOR, articles, llm, say)
    sample = next((v for v in after.lessons.values() if v), [])
    if sample:
        say("\n   Lessons injected into one run (as the agent sees them, under \"Lessons from past runs\"):")
        for lesson in sample:
            say(f"   - [{lesson.rating}] similarity {lesson.similarity:.2f}, score {lesson.score:.2f}: "
                f"{lesson.text[:110]}…")

    if batch:
        fed = [slug for slug, _ in EDITOR_VERDICTS]
        unseen = [a.slug for a in MORE_ARTICLES]
        say(f"\n4. {len(unseen)} articles never given feedback: {before.total(unseen)} -> {after.total(unseen)} flags "
            f"(articles with feedback: {before.total(fed)} -> {after.total(fed)}).")
        say(f"   A different agent, '{OTHER_AGENT}', audits the same articles; lessons never cross agents:")
        other = run_audit(client, OTHER_AGENT, articles, llm, say)
        injected = sum(len(v) for v in other.lessons.values())
        say(f"   '{OTHER_AGENT}': {other.total()} flags, {injected} lessons injected (its runs are untouched).")
    return before.total(), after.total()
