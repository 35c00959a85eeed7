"""The wall's Runs tab and the embeddable feedback widget in a real browser: Debian's headless Chromium.

A local server (with its event worker, so lessons really get indexed) holds seeded runs. The editor's
path is clicked and typed through: the queue, a run, 👎 with a comment sent by a double click, the
lesson on the Lessons tab once indexed, the run gone from "awaiting a verdict". The widget is then
put on a plain page of another origin (a host application) whose own backend forwards its two calls
with `forward_widget_call`, as the README shows. axe-core (shipped in the axe-playwright-python
package) checks both pages. Screenshots go to test-artifacts/runs-*.png.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from agentmem.client import MemoryClient
from agentmem.client.widget_backend import forward_widget_call
from agentmem.local.http_server import LocalHttpServer
from agentmem.local.server import LocalApp, create_app
from agentmem.local.static_files import WIDGET_PATH, widget_script

from tests.e2e.test_wall_browser import ARTIFACTS, CHROMIUM, DESKTOP, NARROW, chromium, opened, serious_violations
from tests.integration.indexer_watch import after_indexing, watch_indexer
from tests.integration.served import serving

TAUGHT = "'Trail magic' is our brand's own idiom, used on purpose. Do not flag it."
QUEUE_INPUT = "Audit this hiking article: trail magic moments keep every hike special."
QUEUE_OUTPUT = "FLAG: 'trail magic' (cliché)"
VERDICT = "Wrong again: 'trail magic' is house style. Flag real clichés only."
WIDGET_VERDICT = "The blurb buries the benefit: lead with all-day comfort."

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(),
                       reason="browser tests need Debian's Chromium at /usr/bin/chromium (apt-get install chromium)"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright (pip install playwright)")
expect = sync_api.expect


@dataclass
class Served:
    app: LocalApp
    url: str
    client: MemoryClient
    taught_memory: str  # the lesson injected into the queued run
    queued: str  # a run awaiting a verdict, with that lesson injected
    for_widget: str  # another run awaiting a verdict, judged through the widget
    judged: str  # a run that already has a 👍


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Iterator[Served]:
    with pytest.MonkeyPatch.context() as patch:
        # Watched before the worker runs: each run of the indexer function is signalled, and waited on.
        indexed = watch_indexer(patch)
        yield from _served(tmp_path_factory, minilm, indexed)


def _served(tmp_path_factory: pytest.TempPathFactory, minilm: Any, indexed: threading.Semaphore) -> Iterator[Served]:
    # The worker runs: a lesson becomes "indexed" on its own, as with `agentmem serve`.
    app = create_app(tmp_path_factory.mktemp("runs"), ports={"embedder": minilm}, enabled_agents=["auditor", "writer"])
    with serving(app) as url:
        client = MemoryClient(url, retries=0)
        teacher = client.retrieve("auditor",
                                  "Audit this outdoor gear article: our trail magic moments make every hike special.")
        client.set_output("auditor", teacher.run_id, QUEUE_OUTPUT)
        taught = client.feedback("auditor", teacher.run_id, "down", TAUGHT).memory_id
        assert taught
        after_indexing(indexed, lambda: {m.memory_id: m.status for m in client.iter_memories("auditor")}[taught]
                       == "indexed")
        queued = client.retrieve("auditor", QUEUE_INPUT)
        assert [lesson.memory_id for lesson in queued.lessons] == [taught]
        client.set_output("auditor", queued.run_id, QUEUE_OUTPUT)
        judged = client.record_run("auditor", "Audit the spring catalogue intro for passive voice.",
                                   "FLAG: 'was designed' (passive)")
        client.feedback("auditor", judged, "up", "Good catch of the passive voice.")
        client.record_run("auditor", "Audit the price list page.", "ok")
        for_widget = client.record_run("writer", "Write a product blurb for the Alpine 40L pack.",
                                       "The Alpine 40L is a pack. It has straps.", user_id="u-dana")
        ARTIFACTS.mkdir(exist_ok=True)
        yield Served(app, url, client, taught, queued.run_id, for_widget, judged)
        client.close()
    app.close()


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def shoot(page: Any, name: str, *, full_page: bool = False) -> None:
    page.screenshot(path=str(ARTIFACTS / f"runs-{name}.png"), full_page=full_page)


def awaiting(served: Served, agent: str) -> list[str]:
    return [item["runId"] for item in served.client.request("GET", f"/v1/agents/{agent}/runs",
                                                            query={"feedback": "none"})["items"]]


def lessons_with(served: Served, agent: str, comment: str) -> list[Any]:
    return [m for m in served.client.iter_memories(agent) if m.comment == comment]


def open_runs_tab(page: Any) -> None:
    # The Lessons tab has loaded (its first lesson may be folded into a group card).
    page.wait_for_selector("li[data-memory-id]", state="attached")
    page.get_by_role("tab", name="Runs").click()
    page.wait_for_selector("li[data-run-id]")


def card(page: Any, run_id: str) -> Any:
    return page.locator(f"li[data-run-id='{run_id}']")


def review(page: Any, run_id: str) -> None:
    """Open the run from the Runs tab's full list (any verdict)."""
    open_runs_tab(page)
    page.get_by_label("Verdict").select_option("any")
    card(page, run_id).get_by_role("button", name="Review").click()


def give_thumbs_down(page: Any, form: Any, comment: str, send: Callable[[], Any], *, by_keyboard: bool = False) -> Any:
    """The editor's 👎 with `comment` in a feedback form (the wall's run view or the widget), sent by `send`
    (which sends twice at once); returns what `send` returned once the form says the lesson is indexed."""
    thumbs_down = form.get_by_role("button", name="Thumbs down")
    if by_keyboard:
        thumbs_down.focus()
        page.keyboard.press("Space")
    else:
        thumbs_down.click()
    expect(thumbs_down).to_have_attribute("aria-pressed", "true")
    form.get_by_label("What should the agent learn?").fill(comment)
    sent = send()
    expect(form.get_by_role("status")).to_contain_text("Lesson indexed", timeout=30000)
    return sent


def one_lesson_and_out_of_the_queue(served: Served, agent: str, run_id: str, comment: str) -> Any:
    """The one 👎 lesson a verdict sent twice made; its run no longer awaits a verdict."""
    [lesson] = lessons_with(served, agent, comment)
    assert lesson.rating == "down"
    assert run_id not in awaiting(served, agent)
    return lesson


def lesson_card_on_wall(page: Any, memory_id: str, comment: str) -> Any:
    lesson_card = page.locator(f"li[data-memory-id='{memory_id}']")
    expect(lesson_card).to_be_visible()
    expect(lesson_card.locator("blockquote.comment")).to_have_text(comment)
    return lesson_card


# -- the wall's Runs tab ----------------------------------------------------------------------------


def test_an_editor_gives_a_thumbs_down_from_the_queue_and_finds_the_lesson_on_the_lessons_tab(browser, served):
    with opened(browser, f"{served.url}/wall", DESKTOP) as page:
        open_runs_tab(page)
        # The queue: runs awaiting a verdict only, newest first.
        assert served.judged not in page.locator("li[data-run-id]").evaluate_all("els => els.map(e => e.dataset.runId)")
        expect(card(page, served.queued)).to_contain_text(QUEUE_INPUT)
        expect(card(page, served.queued)).to_contain_text("1 lesson injected")
        page.get_by_label("Search inputs, outputs and users").fill("hiking")
        expect(page.locator("li[data-run-id]")).to_have_count(1)
        assert "1 of 2 loaded runs match" in page.locator("#runs-summary").inner_text()
        shoot(page, "queue")

        # Opened from the keyboard; focus moves to the run's heading.
        card(page, served.queued).get_by_role("button", name=f"Review run {served.queued}").focus()
        page.keyboard.press("Enter")
        view = page.locator("#run-view")
        expect(view.locator("pre").first).to_have_text(QUEUE_INPUT)
        assert page.evaluate("document.activeElement.id") == "run-view-title"
        expect(view).to_contain_text(QUEUE_OUTPUT)
        injected = view.locator("a.lesson-link").first
        expect(injected).to_contain_text(TAUGHT)
        shoot(page, "run-view")

        # A double click sends once; the Idempotency-Key would make a second request the same lesson anyway.
        give_thumbs_down(page, view, VERDICT, view.get_by_role("button", name="Send feedback").dblclick,
                         by_keyboard=True)
        lesson = one_lesson_and_out_of_the_queue(served, "auditor", served.queued, VERDICT)
        # "Feedback so far" is read again: the verdict just given is listed, "None yet" is gone.
        expect(view.locator("#run-view-feedback li")).to_have_count(1)
        expect(view.locator("#run-view-feedback")).to_contain_text(VERDICT)
        expect(view.locator("#run-view-feedback")).not_to_contain_text("None yet")
        # The run left the queue in the page too.
        expect(card(page, served.queued)).to_have_count(0)
        expect(page.locator("#runs-summary")).to_contain_text(f"Run {served.queued} left this list")
        shoot(page, "sent")

        # The new lesson is on the Lessons tab, reached from the run view.
        view.get_by_role("link", name="see the lesson").click()
        lesson_card_on_wall(page, lesson.memory_id, VERDICT)
        assert page.evaluate("document.activeElement.dataset.memoryId") == lesson.memory_id
        assert page.locator("#tab-lessons").get_attribute("aria-selected") == "true"
        shoot(page, "lesson-on-wall")

        # Back on the Runs tab the run is listed under 👎.
        page.get_by_role("tab", name="Runs").click()
        page.get_by_label("Verdict").select_option("down")
        expect(card(page, served.queued)).to_be_visible()
        expect(card(page, served.queued)).to_contain_text("Thumbs down")


def test_an_injected_lesson_links_to_its_card_on_the_lessons_tab(browser, served):
    with opened(browser, f"{served.url}/wall", DESKTOP) as page:
        review(page, served.queued)
        page.locator("#run-view a.lesson-link", has_text=TAUGHT).click()
        taught = page.locator(f"li[data-memory-id='{served.taught_memory}']")
        expect(taught).to_be_focused()
        expect(taught).to_be_in_viewport()


def test_the_runs_tab_fits_a_narrow_screen_and_passes_axe(browser, served):
    with opened(browser, f"{served.url}/wall", NARROW) as page:
        review(page, served.judged)
        expect(page.locator("#run-view").get_by_role("button", name="Send feedback")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        right = page.evaluate("document.querySelector('agentmem-feedback').getBoundingClientRect().right")
        assert right <= NARROW["width"]
        shoot(page, "narrow-run", full_page=True)
        assert serious_violations(page) == []
        # Escape leaves the run view and gives focus back to the button that opened it.
        page.locator("#run-view").get_by_label("What should the agent learn?").focus()
        page.keyboard.press("Escape")
        expect(page.locator("#run-view")).to_be_hidden()
        assert page.evaluate("document.activeElement.closest('li').dataset.runId") == served.judged


# -- the widget on a host application's own page ----------------------------------------------------

HOST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Run {run_id} · Acme editorial</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src {agentmem}; connect-src 'self'">
<script src="{agentmem}{widget}" defer></script></head>
<body><main><h1>Run {run_id}</h1><p>The Alpine 40L is a pack. It has straps.</p>
<agentmem-feedback agent-id="writer" run-id="{run_id}" endpoint="/agentmem"></agentmem-feedback>
</main></body></html>"""


def host_app(served: Served, run_id: str) -> Any:
    """A host application: its run page, and the few lines of backend that forward the widget's calls."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    memory = MemoryClient(served.url, retries=0)  # in production: MemoryClient.for_stack("AgentMem-acme")

    async def run_page(request: Request) -> HTMLResponse:
        return HTMLResponse(HOST_PAGE.format(run_id=run_id, agentmem=served.url, widget=WIDGET_PATH))

    async def widget_call(request: Request) -> JSONResponse:
        # (The host checks its own session here: is this user an editor of this agent?)
        path = request.url.path.removeprefix("/agentmem")
        status, body = forward_widget_call(memory, request.method, path, await request.body(),
                                           request.headers.get("idempotency-key"))
        return JSONResponse(body, status)

    return Starlette(routes=[
        Route("/runs/{run_id}", run_page),
        Route("/agentmem/{path:path}", widget_call, methods=["GET", "POST"]),
    ])


# The widget's submit button clicked twice at once; resolves with the widget's "sent" event.
SUBMIT_TWICE = """() => new Promise((resolve) => {
    const el = document.querySelector('agentmem-feedback');
    el.addEventListener('agentmem-feedback-sent', (e) => resolve(e.detail), { once: true });
    el.shadowRoot.querySelector('button[type=submit]').click();
    el.shadowRoot.querySelector('button[type=submit]').click();
})"""


def test_the_widget_on_a_host_page_of_another_origin_gives_one_lesson_through_the_hosts_backend(browser, served):
    server = LocalHttpServer(host_app(served, served.for_widget), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    assert server.wait_started(60), "the host page's server did not start"
    host = f"http://127.0.0.1:{server.server_address[1]}"
    # Another origin: the page is served by the host, the widget's file by agentmem.
    host = host.replace("127.0.0.1", "localhost")
    try:
        with opened(browser, f"{host}/runs/{served.for_widget}", DESKTOP) as page:
            widget = page.locator("agentmem-feedback")
            widget.get_by_role("button", name="Send feedback").click()
            expect(widget.get_by_role("alert")).to_have_text("Choose Thumbs up or Thumbs down first.")
            assert served.for_widget in awaiting(served, "writer")

            sent = give_thumbs_down(page, widget, WIDGET_VERDICT, lambda: page.evaluate(SUBMIT_TWICE))
            assert sent["rating"] == "down"
            lesson = one_lesson_and_out_of_the_queue(served, "writer", served.for_widget, WIDGET_VERDICT)
            assert lesson.memory_id == sent["memoryId"]
            # The host's backend answers the widget's run look-up with the feedback only, never the run's text.
            status, body = forward_widget_call(served.client, "GET", f"/v1/agents/writer/runs/{served.for_widget}")
            assert status == 200 and set(body) == {"runId", "feedback"}
            assert json.dumps(body).count(WIDGET_VERDICT) == 1
            shoot(page, "widget-host-page")
            assert serious_violations(page) == []

            # The lesson shows on the wall's Lessons tab, and the run is out of the wall's queue.
            with opened(browser, f"{served.url}/wall", DESKTOP) as wall:
                wall.get_by_label("Search comments and digests").fill("all-day comfort")
                expect(wall.locator("li[data-memory-id]:visible")).to_have_count(1)
                lesson_card_on_wall(wall, lesson.memory_id, WIDGET_VERDICT)
                wall.get_by_role("tab", name="Runs").click()
                wall.locator("#run-agent").select_option("writer")
                expect(wall.locator("#runs-summary")).to_have_text("No run of writer awaits a verdict.")
                assert serious_violations(wall) == []
    finally:
        server.shutdown()
        server.server_close()


REFUSED_HOST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Run {run_id} · another origin</title>
<script src="{agentmem}{widget}" defer></script></head>
<body><main><h1>Run {run_id}</h1>
<agentmem-feedback agent-id="writer" run-id="{run_id}" endpoint="{agentmem}"></agentmem-feedback>
</main></body></html>"""


def test_the_widget_pointed_at_a_server_that_refuses_its_page_says_why_with_the_status(browser, served):
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    async def page_of_another_origin(_: Any) -> HTMLResponse:
        page = REFUSED_HOST_PAGE.format(run_id=served.for_widget, agentmem=served.url, widget=WIDGET_PATH)
        return HTMLResponse(page)

    server = LocalHttpServer(Starlette(routes=[Route("/", page_of_another_origin)]), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    assert server.wait_started(60), "the host page's server did not start"
    host = f"http://localhost:{server.server_address[1]}"
    try:
        with opened(browser, f"{host}/", DESKTOP) as page:
            widget = page.locator("agentmem-feedback")
            widget.get_by_role("button", name="Thumbs down").click()
            widget.get_by_label("What should the agent learn?").fill("Refused: this verdict never arrives.")
            widget.get_by_role("button", name="Send feedback").click()

            alert = widget.get_by_role("alert")
            expect(alert).to_contain_text("refused this page (HTTP 403 cross_site_refused)")
            expect(alert).to_contain_text("cross-site requests are refused (Sec-Fetch-Site: cross-site)")
            expect(alert).not_to_contain_text("Could not reach")
            shoot(page, "widget-refused")
        assert lessons_with(served, "writer", "Refused: this verdict never arrives.") == []
    finally:
        server.shutdown()
        server.server_close()


def test_a_resend_after_a_lost_answer_or_a_busy_key_reuses_the_key_and_a_new_verdict_gets_a_new_one(browser, served):
    """The widget (the packaged file) against a scripted server (Playwright's routing): what it sends when
    answers go wrong."""
    page_url = "http://host.example/runs/r-1"
    keys: list[str] = []
    answers = iter(["abort", "busy", "accepted", "accepted"])

    def feedback(route: Any) -> None:
        keys.append(route.request.headers["idempotency-key"])
        answer = next(answers)
        if answer == "abort":
            route.abort("connectionreset")
        elif answer == "busy":
            route.fulfill(status=409, headers={"Retry-After": "0", "Content-Type": "application/json"},
                          body=json.dumps({"error": {"code": "conflict", "message": "in progress", "details": []}}))
        else:
            route.fulfill(status=202, content_type="application/json",
                          body=json.dumps({"feedbackId": "fb-1", "memoryId": "mem-1", "status": "accepted"}))

    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(15000)
    try:
        page.route(page_url, lambda route: route.fulfill(content_type="text/html", body=(
            f'<!doctype html><html lang="en"><title>r-1</title><script src="{WIDGET_PATH}"></script>'
            '<agentmem-feedback agent-id="writer" run-id="r-1" endpoint="/api"></agentmem-feedback></html>')))
        page.route(f"http://host.example{WIDGET_PATH}", lambda route: route.fulfill(
            content_type="text/javascript", body=widget_script()))
        page.route("http://host.example/api/v1/agents/writer/runs/r-1/feedback", feedback)
        page.route("http://host.example/api/v1/agents/writer/runs/r-1", lambda route: route.fulfill(
            content_type="application/json",
            body=json.dumps({"runId": "r-1", "feedback": [{"memoryId": "mem-1", "lessonStatus": "indexed"}]})))
        page.goto(page_url)
        widget = page.locator("agentmem-feedback")
        widget.get_by_role("button", name="Thumbs up").click()
        widget.get_by_role("button", name="Send feedback").click()
        expect(widget.get_by_role("alert")).to_contain_text("send again to retry")
        expect(widget.get_by_role("button", name="Send feedback")).to_be_enabled()
        widget.get_by_role("button", name="Send feedback").click()  # 409 + Retry-After, waited out, then 202
        expect(widget.get_by_role("status")).to_contain_text("Lesson indexed")
        assert len(keys) == 3 and len(set(keys)) == 1 and keys[0].startswith("fb-")

        widget.get_by_role("button", name="Give another verdict").click()
        widget.get_by_role("button", name="Thumbs down").click()
        widget.get_by_role("button", name="Send feedback").click()
        expect(widget.get_by_role("status")).to_contain_text("Lesson indexed")
        assert len(keys) == 4 and keys[3] != keys[0]
    finally:
        context.close()
