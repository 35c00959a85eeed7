"""The Memory Learning Wall in a real browser: headless Chromium (Debian's) against a running local server.

Lessons are seeded through the real API (retrieve -> output -> feedback -> the worker indexes them),
then the page is clicked through and every change is checked through the API. Screenshots go to
test-artifacts/. Skipped, with the reason shown, when /usr/bin/chromium or Playwright is absent (a failure with
CI=true: tests/ci_skips.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from agentmem.client import MemoryClient
from agentmem.client.signing import SigV4Signer
from agentmem.local.server import LocalApp, create_app, make_http_server
from agentmem.local.wall_proxy import WallProxy, make_proxy_server
from botocore.credentials import Credentials

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
DESKTOP = {"width": 1280, "height": 900}
NARROW = {"width": 360, "height": 780}

TRAIL_MAGIC = "'Trail magic' is our brand's own idiom, used on purpose. Do not flag it."
PASSIVE = "Good catch of the passive voice; keep doing this."
HOSTILE = '<img src=x onerror="window.__pwned=1"> is text, not markup'
UNDO_ME = "Undo me: 'summit-ready' is an approved claim."
DELETE_ME = "Delete me: an outdated rule about price formatting."
KEYBOARD = "Keyboard: 'gear up' is fine in headlines."
BLURB = "Too flat. Lead with the benefit (all-day comfort), then the spec."
USER = "u-dana"
SERIAL_COMMA = [  # three editors, one teaching in their own words (domain/teaching.py): one group
    "Always use the serial comma in lists.",
    "Use the serial comma in every list.",
    "Lists always need the serial comma.",
]
EPIC_UP = "Flag 'epic' as hype."  # then, newer, the opposite about the same thing: a conflict
EPIC_DOWN = "Do not flag 'epic' as hype."
EXTRA_LESSONS = 22  # more than the page's first page (20), so "Load more" appears

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(),
                       reason="browser tests need Debian's Chromium at /usr/bin/chromium (apt-get install chromium)"),
]
# Collected only with Playwright; the Python package alone is enough (no `playwright install`).
sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright (pip install playwright)")
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright",
                               reason="the accessibility pass needs axe-playwright-python (it ships axe-core)")


@dataclass
class Wall:
    app: LocalApp
    url: str
    client: MemoryClient
    ids: dict[str, str]  # comment -> memoryId
    run_of: dict[str, str]  # comment -> runId

    def memory(self, agent: str, comment: str) -> Any:
        """The lesson as the API has it now, or None when it is gone."""
        memory_id = self.ids[comment]
        return next((m for m in self.client.iter_memories(agent) if m.memory_id == memory_id), None)


def _teach(client: MemoryClient, agent: str, text: str, output: str, rating: str, comment: str,
           user: str | None = None) -> tuple[str, str]:
    run = client.retrieve(agent, text, user_id=user, thread_id="t-1" if user else None)
    client.set_output(agent, run.run_id, output)
    receipt = client.feedback(agent, run.run_id, rating, comment)  # type: ignore[arg-type]
    assert receipt.memory_id
    return receipt.memory_id, run.run_id


@pytest.fixture(scope="module")
def wall(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Iterator[Wall]:
    app = create_app(tmp_path_factory.mktemp("wall"), start_worker=False, ports={"embedder": minilm},
                     enabled_agents=["auditor", "writer", "summariser"])
    server = make_http_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    client = MemoryClient(url, retries=0)
    ids: dict[str, str] = {}
    runs: dict[str, str] = {}
    seeds = [
        ("auditor", "Audit this outdoor gear article: our trail magic moments make every hike special.",
         "FLAG: 'trail magic' (cliché)", "down", TRAIL_MAGIC, None),
        ("auditor", "Audit the spring catalogue intro for passive voice.", "FLAG: 'was designed' (passive)",
         "up", PASSIVE, None),
        ("auditor", "Audit a newsletter <script>window.__pwned=2</script>", "ok", "down", HOSTILE, None),
        ("auditor", "Audit the summit-ready jacket page.", "FLAG: 'summit-ready' (unproven)", "down", UNDO_ME, None),
        ("auditor", "Audit the price list.", "FLAG: '$99' format", "down", DELETE_ME, None),
        ("auditor", "Audit the headline 'Gear up for autumn'.", "FLAG: 'gear up' (slang)", "down", KEYBOARD, None),
        ("writer", "Write a product blurb for the Alpine 40L pack.", "The Alpine 40L is a pack.", "down", BLURB,
         USER),
        *[("auditor", f"Audit the gear list {n}.", "ok", "down", comment, None)
          for n, comment in enumerate(SERIAL_COMMA)],
        ("auditor", "Audit the epic trails page.", "FLAG: 'epic' (hype)", "up", EPIC_UP, None),
        ("auditor", "Audit the epic views page.", "FLAG: 'epic' (hype)", "down", EPIC_DOWN, None),
    ]
    for agent, text, output, rating, comment, user in seeds:
        ids[comment], runs[comment] = _teach(client, agent, text, output, rating, comment, user)
    for n in range(EXTRA_LESSONS):
        run_id = client.record_run("summariser", f"Summarise report {n}", f"Summary {n}")
        client.feedback("summariser", run_id, "up", f"Summary {n} kept the key figure.")
    client.append_turns(USER, "t-1", [
        {"role": "user",
         "content": "Hi, I'm Dana. I work as a data engineer. I prefer short answers in bullet points."},
        {"role": "assistant", "content": "Noted."},
    ])
    app.worker.drain()
    # A similar run: the trail-magic lesson is injected once, so the wall has a count to show.
    injected = client.retrieve("auditor", "Audit this hiking article: trail magic moments keep every hike special.")
    assert ids[TRAIL_MAGIC] in [lesson.memory_id for lesson in injected.lessons]
    ARTIFACTS.mkdir(exist_ok=True)
    yield Wall(app, url, client, ids, runs)
    client.close()
    server.shutdown()
    server.server_close()
    app.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium through Playwright (no browser download)."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def browser(wall: Wall) -> Iterator[Any]:
    with chromium() as browser:
        yield browser


class PageErrors(list[str]):
    """Uncaught exceptions and Content-Security-Policy violations seen by a page."""


def _open(browser: Any, url: str, viewport: dict[str, int], *, clock: bool = False) -> tuple[Any, Any, PageErrors]:
    context = browser.new_context(viewport=viewport, reduced_motion="reduce")
    if clock:
        # The page's timers on Playwright's clock (running until a test pauses it), installed before any script runs.
        context.clock.install()
    page = context.new_page()
    # Generous: on a loaded 2-core machine the page can take seconds to answer a click.
    page.set_default_timeout(15000)
    errors = PageErrors()
    page.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))
    page.on("console", lambda msg: errors.append(f"console: {msg.text}")
            if "Content Security Policy" in msg.text else None)
    page.goto(url)
    return context, page, errors


@contextmanager
def opened(browser: Any, url: str, viewport: dict[str, int], *, clock: bool = False) -> Iterator[Any]:
    """A page at `url`, closed afterwards; no uncaught exception or CSP violation may have happened on it."""
    context, page, errors = _open(browser, url, viewport, clock=clock)
    try:
        yield page
    finally:
        context.close()
    assert not errors, errors


@pytest.fixture
def page(browser: Any, wall: Wall) -> Iterator[Any]:
    with opened(browser, f"{wall.url}/wall", DESKTOP) as page:
        page.wait_for_selector("li[data-memory-id]")
        yield page


@pytest.fixture
def clocked_page(browser: Any, wall: Wall) -> Iterator[Any]:
    """The wall loaded with time flowing, then its clock paused: a test moves the page's time on itself."""
    with opened(browser, f"{wall.url}/wall", DESKTOP, clock=True) as page:
        page.wait_for_selector("li[data-memory-id]")
        page.clock.pause_at(datetime.now() + timedelta(seconds=1))
        yield page


@pytest.fixture
def narrow_page(browser: Any, wall: Wall) -> Iterator[Any]:
    with opened(browser, f"{wall.url}/wall", NARROW) as page:
        page.wait_for_selector("li[data-memory-id]")
        yield page


def lesson(page: Any, wall: Wall, comment: str) -> Any:
    return page.locator(f"li[data-memory-id='{wall.ids[comment]}']")


# Playwright's auto-waiting assertions: wait_for_function's string predicates need 'unsafe-eval', which the
# page's Content-Security-Policy forbids.
expect = sync_api.expect


def pressed(page: Any, memory_id: str, importance: str) -> None:
    """Wait until the lesson's `importance` button shows as pressed (the PATCH answer came back)."""
    button = page.locator(f"li[data-memory-id='{memory_id}'] [data-importance={importance}]")
    expect(button).to_have_attribute("aria-pressed", "true")


def shoot(page: Any, name: str, *, full_page: bool = False) -> None:
    page.screenshot(path=str(ARTIFACTS / f"wall-{name}.png"), full_page=full_page)


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    results = axe_sync.Axe().run(page)
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
            for v in results.response["violations"] if v["impact"] in ("serious", "critical")]


def groups_in_api(wall: Wall, agent: str) -> dict[str, dict[str, Any]]:
    """Every lesson's `group` as GET .../memories gives it, by memoryId."""
    items = wall.client.request("GET", f"/v1/agents/{agent}/memories", query={"limit": 100})["items"]
    return {item["memoryId"]: item["group"] for item in items}


# -- what the wall shows --------------------------------------------------------------------------------


def test_every_lesson_is_shown_by_agent_with_comment_rating_importance_digest_run_and_injections(page, wall):
    sections = page.locator("section.agent h2")
    assert sections.all_inner_texts() == ["auditor", "summariser", "writer"]
    card = lesson(page, wall, TRAIL_MAGIC)
    assert card.locator("blockquote.comment").inner_text() == TRAIL_MAGIC
    text = card.inner_text()
    assert "Thumbs down" in text and "👎" in text and "Neutral ×1" in text
    assert "Injected into 1 run since" in text
    assert "Editor: " + TRAIL_MAGIC in card.locator(".digest-text").inner_text()
    assert card.locator("time").get_attribute("datetime")
    assert card.locator("a.run-link").inner_text() == wall.run_of[TRAIL_MAGIC]
    assert "Thumbs up" in lesson(page, wall, PASSIVE).inner_text()
    shoot(page, "desktop-lessons", full_page=True)


def test_text_from_the_api_is_shown_as_text_never_run_as_markup(page, wall):
    card = lesson(page, wall, HOSTILE)
    assert card.locator("blockquote.comment").inner_text() == HOSTILE
    assert card.locator("img").count() == 0 and page.locator("script", has_text="__pwned").count() == 0
    page.locator("a.run-link", has_text=wall.run_of[HOSTILE]).click()
    page.wait_for_selector("#run-body dl")
    assert "<script>window.__pwned=2</script>" in page.locator("#run-body").inner_text()
    assert page.evaluate("window.__pwned") is None


def test_filters_by_agent_and_by_text(page, wall):
    page.select_option("#agent-filter", "writer")
    assert page.locator("section.agent:visible h2").all_inner_texts() == ["writer"]
    assert lesson(page, wall, BLURB).is_visible() and not lesson(page, wall, TRAIL_MAGIC).is_visible()

    page.select_option("#agent-filter", "")
    page.fill("#text-filter", "TRAIL magic")
    expect(page.locator("li[data-memory-id]:visible")).to_have_count(1)
    assert lesson(page, wall, TRAIL_MAGIC).is_visible()
    loaded = page.locator("li[data-memory-id]").count()
    assert page.locator("#summary").inner_text() == f"1 of {loaded} loaded lessons match"
    shoot(page, "desktop-filtered")

    page.fill("#text-filter", "no lesson says this")
    page.wait_for_selector("#no-match:visible")
    page.fill("#text-filter", "")
    page.select_option("#rating-filter", "up")
    expect(lesson(page, wall, TRAIL_MAGIC)).to_be_hidden()
    assert lesson(page, wall, PASSIVE).is_visible()


def test_mark_important_then_neutral_is_stored_through_the_api(page, wall):
    card = lesson(page, wall, PASSIVE)
    card.get_by_role("button", name="Important", exact=True).click()
    pressed(page, wall.ids[PASSIVE], "important")
    assert wall.memory("auditor", PASSIVE).importance == 1.5
    expect(card).to_contain_text("Important ×1.5")
    # The status line is written a moment after it is cleared (so a screen reader reads a repeat): wait for it.
    expect(page.locator("#status")).to_contain_text("Marked important")

    card.get_by_role("button", name="Neutral", exact=True).click()
    pressed(page, wall.ids[PASSIVE], "neutral")
    assert wall.memory("auditor", PASSIVE).importance == 1.0


def test_delete_hides_at_once_undo_keeps_the_lesson_and_a_closed_window_deletes_it(clocked_page, wall):
    page = clocked_page
    undo_card, gone_card = lesson(page, wall, UNDO_ME), lesson(page, wall, DELETE_ME)
    undo_card.get_by_role("button", name="Delete lesson").click()
    expect(undo_card).to_be_hidden()
    page.locator(f".toast[data-memory-id='{wall.ids[UNDO_ME]}']").get_by_role("button", name="Undo delete").click()
    expect(undo_card).to_be_visible()

    gone_card.get_by_role("button", name="Delete lesson").click()
    expect(gone_card).to_be_hidden()
    shoot(page, "desktop-undo-window")
    # Nothing is sent while the 5-second undo window is open, to its last moment.
    page.clock.run_for(4_900)
    assert wall.memory("auditor", DELETE_ME) is not None
    expect(gone_card).to_be_attached()
    page.clock.run_for(200)
    page.wait_for_selector(f"li[data-memory-id='{wall.ids[DELETE_ME]}']", state="detached")
    assert wall.memory("auditor", DELETE_ME) is None
    assert wall.memory("auditor", UNDO_ME) is not None
    assert page.locator(".toast").count() == 0


def test_the_run_link_opens_the_run_and_its_user_opens_on_the_users_tab(page, wall):
    page.locator("a.run-link", has_text=wall.run_of[BLURB]).click()
    dialog = page.locator("#run-dialog")
    page.wait_for_selector("#run-body dl")
    text = dialog.inner_text()
    # "Alpine 40L" reads as an organisation to the local name detector, so the run of a user shows a token there.
    assert "Write a product blurb for the " in text and " is a pack." in text
    assert BLURB in text
    shoot(page, "desktop-run")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.locator("a.run-link", has_text=wall.run_of[BLURB]).click()
    dialog.get_by_role("button", name=USER).click()
    page.wait_for_selector("#facts-card li.fact")
    assert page.locator("#tab-users").get_attribute("aria-selected") == "true"


def test_load_more_pages_with_next_cursor(page, wall):
    section = page.locator("section.agent[data-agent-id='summariser']")
    assert section.locator("li[data-memory-id]").count() == 20
    assert section.locator(".agent-count").inner_text() == "20+ lessons"
    section.get_by_role("button", name="Load more lessons of summariser").click()
    expect(section.locator("li[data-memory-id]")).to_have_count(EXTRA_LESSONS)
    assert section.get_by_role("button", name=re.compile("Load more")).count() == 0


def test_agreeing_lessons_are_one_card_naming_its_editors_whose_members_stay_markable_and_deletable(page, wall):
    serial = [wall.ids[c] for c in SERIAL_COMMA]
    assert {groups_in_api(wall, "auditor")[m]["groupId"] for m in serial} == {serial[0]}  # the oldest names it
    card = page.locator(f"li.group-card[data-group-id='{serial[0]}']")
    expect(card.locator(".group-title")).to_have_text("3 editors said this")
    expect(card.locator("blockquote.comment").first).to_have_text(SERIAL_COMMA[-1])  # the newest speaks for it
    members = card.locator(".group-members > li[data-memory-id]")
    expect(members).to_have_count(3)
    expect(members.first).to_be_hidden()
    toggle = card.locator("[data-action='expand-group']")
    expect(toggle).to_have_accessible_name(re.compile("^Show the 3 lessons of the group"))
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(toggle).to_have_accessible_name(re.compile("^Hide the lessons"))
    expect(lesson(page, wall, SERIAL_COMMA[1])).to_be_visible()
    shoot(page, "desktop-group-open")
    assert serious_violations(page) == []

    lesson(page, wall, SERIAL_COMMA[1]).get_by_role("button", name="Important", exact=True).click()
    pressed(page, wall.ids[SERIAL_COMMA[1]], "important")
    assert wall.memory("auditor", SERIAL_COMMA[1]).importance == 1.5
    expect(lesson(page, wall, SERIAL_COMMA[1])).to_contain_text("Important ×1.5")

    gone = lesson(page, wall, SERIAL_COMMA[2])
    gone.get_by_role("button", name="Delete lesson").click()
    expect(gone).to_be_hidden()
    expect(card.locator(".group-title")).to_have_text("2 editors said this")  # at once, in the undo window
    page.wait_for_selector(f"li[data-memory-id='{serial[2]}']", state="detached", timeout=8000)
    assert wall.memory("auditor", SERIAL_COMMA[2]) is None
    # Deleting one member left the rest of its group, on the page and in the API.
    expect(card.locator(".group-title")).to_have_text("2 editors said this")
    expect(members).to_have_count(2)
    after = groups_in_api(wall, "auditor")
    assert {(after[m]["groupId"], after[m]["size"]) for m in serial[:2]} == {(serial[0], 2)}


def test_a_thumbs_up_and_a_newer_thumbs_down_on_near_identical_text_are_marked_as_a_conflict_in_words(page, wall):
    older, newer = lesson(page, wall, EPIC_UP), lesson(page, wall, EPIC_DOWN)
    note = older.locator(".conflict-note")
    expect(note).to_contain_text("Conflict")
    expect(note).to_contain_text("A newer lesson says the opposite on near-identical text, so this one is not injected")
    assert note.locator("a.lesson-link").get_attribute("data-memory-id") == wall.ids[EPIC_DOWN]
    expect(newer.locator(".conflict-note")).to_contain_text("this newer one is injected instead of it")
    assert newer.locator(".conflict-note a.lesson-link").get_attribute("data-memory-id") == wall.ids[EPIC_UP]
    older.scroll_into_view_if_needed()
    shoot(page, "desktop-conflict")
    assert serious_violations(page) == []
    note.locator("a.lesson-link").click()  # the mark leads to the other side of the conflict
    expect(newer).to_be_focused()


def test_users_tab_shows_profile_and_facts_read_only_until_edit_and_a_409_is_explained(page, wall):
    page.get_by_role("tab", name="Users").click()
    assert page.locator("#profile-editor").count() == 0
    page.get_by_label("User id").fill(USER)
    page.get_by_role("button", name="Show user").click()
    page.wait_for_selector("#facts-card li.fact")
    assert "data engineer" in page.locator("#facts-card").inner_text()
    profile = page.locator("#profile-card")
    assert "short answers in bullet points" in profile.inner_text()
    assert profile.locator("textarea").count() == 0
    shoot(page, "desktop-users")

    before = wall.client.get_profile(USER).version
    profile.get_by_role("button", name="Edit").click()
    editor = page.get_by_label(f"Profile of {USER} (Markdown)")
    editor.fill(editor.input_value().replace("## Skills & Expertise\n_(empty)_", "## Skills & Expertise\n- SQL"))
    page.get_by_role("button", name="Save profile").click()
    page.wait_for_selector("#profile-card h3:has-text('Skills & Expertise') + ul li")
    saved = wall.client.get_profile(USER)
    assert saved.version == before + 1 and "- SQL" in saved.markdown

    # Someone else saves while the operator edits: the save is refused, clearly, and the text is kept.
    profile.get_by_role("button", name="Edit").click()
    body = editor.input_value()
    wall.client.put_profile(USER, body.replace("- SQL", "- SQL\n- Airflow"), if_match=saved.version)
    editor.fill(body.replace("- SQL", "- SQL\n- dbt"))
    page.get_by_role("button", name="Save profile").click()
    alert = page.locator("#profile-problem [role=alert]")
    alert.wait_for()
    newer = wall.client.get_profile(USER)
    explained = alert.inner_text()
    assert "Conflict (409): not saved." in explained
    assert f"You were editing version {saved.version}, but version {newer.version} was saved since" in explained
    assert "- dbt" in editor.input_value() and "dbt" not in newer.markdown
    shoot(page, "desktop-users-conflict")

    # Keeping the draft over the newer version is an explicit second step.
    alert.get_by_role("button", name=f"Keep my text over version {newer.version}").click()
    page.get_by_role("button", name="Save profile").click()
    page.wait_for_selector("#profile-card li:has-text('dbt')")
    final = wall.client.get_profile(USER)
    assert final.version == newer.version + 1 and "- dbt" in final.markdown and "Airflow" not in final.markdown


DIRECTORY_USERS = [f"p-{n:02d}" for n in range(55)]  # more than one page of the Users tab's list (50)


def test_users_tab_lists_users_paged_and_by_id_prefix_and_a_click_shows_the_user(page, wall):
    for user_id in DIRECTORY_USERS:
        wall.client.append_turns(user_id, "t-1", [("user", "hello")])

    page.get_by_role("tab", name="Users").click()
    listed = page.locator("#user-list button")
    expect(listed).to_have_count(50)
    assert listed.all_inner_texts()[:2] == ["p-00", "p-01"]
    page.get_by_role("button", name="Load more users").click()
    expect(listed).to_have_count(len(DIRECTORY_USERS) + 1)
    expect(page.get_by_role("button", name="Load more users")).to_be_hidden()
    assert listed.all_inner_texts()[-1] == USER

    page.get_by_label("Find users by the start of their id").fill("u-")
    expect(listed).to_have_count(1)
    expect(page.locator("#user-directory-summary")).to_have_text('1 user starting with "u-"')
    listed.first.click()
    expect(page.locator("#facts-card")).to_contain_text("data engineer")
    expect(listed.first).to_have_attribute("aria-current", "true")
    shoot(page, "desktop-user-directory")
    assert serious_violations(page) == []


@pytest.mark.parametrize("viewport", ["page", "narrow_page"])
def test_the_verdict_filters_text_is_not_clipped(viewport, request, wall):
    page = request.getfixturevalue(viewport)
    page.get_by_role("tab", name="Runs").click()
    select = page.locator("#run-verdict")
    for option in ("none", "down", "up", "any"):
        select.select_option(option)
        room, needed = select.evaluate("""(el) => {
            const style = getComputedStyle(el);
            const ctx = document.createElement("canvas").getContext("2d");
            ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
            const text = ctx.measureText(el.options[el.selectedIndex].text).width;
            // The arrow of a select takes about 20px of its padding box on the right.
            return [el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20, text];
        }""")
        assert needed <= room, (option, needed, room)


def test_narrow_screen_has_no_sideways_scroll_and_works(narrow_page, wall):
    page = narrow_page
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
    shoot(page, "narrow-lessons")
    card = lesson(page, wall, BLURB)
    card.get_by_role("button", name="Unimportant").click()
    pressed(page, wall.ids[BLURB], "unimportant")
    assert wall.memory("writer", BLURB).importance == pytest.approx(0.3)
    page.locator("a.run-link", has_text=wall.run_of[BLURB]).click()
    page.wait_for_selector("#run-body dl")
    assert page.evaluate("document.getElementById('run-dialog').getBoundingClientRect().right") <= NARROW["width"]
    shoot(page, "narrow-run")
    page.get_by_role("button", name="Close").click()
    page.get_by_role("tab", name="Users").click()
    page.get_by_label("User id").fill(USER)
    page.keyboard.press("Enter")
    page.wait_for_selector("#facts-card li.fact")
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
    shoot(page, "narrow-users")


# -- accessibility sanity ---------------------------------------------------------------------------------

NAMELESS_CONTROLS = """() => {
  const nameless = [];
  for (const el of document.querySelectorAll('button, input, select, textarea, a[href], [role=tab]')) {
    if (!el.getClientRects().length) continue;
    const labelled = (el.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean)
      .map((id) => (document.getElementById(id) || {}).textContent || '').join(' ');
    const fromLabels = Array.from(el.labels || []).map((l) => l.textContent).join(' ');
    const isField = ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName);
    const name = (el.getAttribute('aria-label') || labelled || fromLabels || (isField ? '' : el.textContent)
      || el.getAttribute('title') || '').trim();
    if (!name) nameless.push(el.outerHTML.slice(0, 120));
  }
  return nameless;
}"""

LOW_CONTRAST = """() => {
  const parse = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const c = parse(getComputedStyle(node).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.99)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const failures = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el.getClientRects().length || el.closest('.sr-only')) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || Number(style.opacity) < 1) continue;
    const [a, b] = [lum(parse(style.color).slice(0, 3)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) failures.push(`${node.textContent.trim().slice(0, 40)}: ${ratio.toFixed(2)}`);
  }
  return failures;
}"""


def test_every_control_has_a_name_and_text_meets_wcag_aa_contrast(page, wall):
    assert page.evaluate(NAMELESS_CONTROLS) == []
    assert page.evaluate(LOW_CONTRAST) == []
    page.get_by_role("tab", name="Users").click()
    page.get_by_label("User id").fill(USER)
    page.get_by_role("button", name="Show user").click()
    page.wait_for_selector("#facts-card li.fact")
    page.locator("#profile-card").get_by_role("button", name="Edit").click()
    assert page.evaluate(NAMELESS_CONTROLS) == []
    assert page.evaluate(LOW_CONTRAST) == []


def test_the_keyboard_reaches_the_filters_and_lesson_buttons_with_a_visible_focus(page, wall):
    reached: list[str] = []
    outlines: dict[str, str] = {}
    for _ in range(40):
        page.keyboard.press("Tab")
        focused = page.evaluate("""() => {
          const el = document.activeElement;
          const li = el.closest('li[data-memory-id]');
          const kind = el.dataset.importance || el.dataset.action || el.tagName;
          return {key: el.id || `${kind}@${li ? li.dataset.memoryId : ''}`,
                  outline: getComputedStyle(el).outlineStyle + ' ' + getComputedStyle(el).outlineWidth};
        }""")
        reached.append(focused["key"])
        outlines[focused["key"]] = focused["outline"]
    keyboard_card = wall.ids[KEYBOARD]
    for wanted in ("tab-lessons", "agent-filter", "text-filter", "refresh", f"important@{keyboard_card}",
                   f"delete@{keyboard_card}"):
        assert wanted in reached, (wanted, reached)
        assert outlines[wanted].startswith("solid") and not outlines[wanted].endswith(" 0px"), outlines[wanted]

    # Operable without a mouse: focus the lesson's "Important" button by Tab and press Enter.
    page.locator("#text-filter").focus()
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('li[data-memory-id]')?.dataset.memoryId") == keyboard_card:
            break
    for _ in range(5):
        if page.evaluate("document.activeElement.dataset.importance") == "important":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('li').dataset.memoryId") == keyboard_card
    assert page.evaluate("document.activeElement.dataset.importance") == "important"
    page.keyboard.press("Enter")
    pressed(page, keyboard_card, "important")
    assert wall.memory("auditor", KEYBOARD).importance == 1.5
    # The tabs follow the ARIA pattern: arrows move between them.
    page.locator("#tab-lessons").focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.id") == "tab-users"
    assert page.locator("#panel-users").is_visible() and not page.locator("#panel-lessons").is_visible()


# -- the signing proxy, in the browser --------------------------------------------------------------------


def test_through_the_wall_proxy_the_page_asks_for_the_token_once_and_keeps_it_for_the_tab(browser, wall):
    proxy = WallProxy(wall.url, SigV4Signer("eu-west-1", Credentials("AKIDEXAMPLE", "secret")), token="t0ken-42")
    server = make_proxy_server(proxy, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    context, page, errors = _open(browser, f"{base}/wall", DESKTOP)
    try:
        dialog = page.locator("#token-dialog")
        dialog.wait_for()
        assert page.locator("li[data-memory-id]").count() == 0
        shoot(page, "proxy-token")
        page.get_by_label("API token", exact=True).fill("wrong")
        page.get_by_role("button", name="Use token").click()
        page.wait_for_selector("#token-title:has-text('not accepted')")
        page.get_by_label("API token", exact=True).fill("t0ken-42")
        page.get_by_role("button", name="Use token").click()
        page.wait_for_selector("li[data-memory-id]")
        assert page.evaluate("sessionStorage.getItem('agentmem.wall.token')") == "t0ken-42"
        page.reload()
        page.wait_for_selector("li[data-memory-id]")
        assert not dialog.is_visible()

        # The link `agentmem wall` prints: the token rides in the fragment and leaves the address bar.
        fresh = browser.new_context(viewport=DESKTOP)
        linked = fresh.new_page()
        linked.goto(f"{base}/wall#token=t0ken-42")
        linked.wait_for_selector("li[data-memory-id]")
        assert "token" not in linked.url
        fresh.close()
    finally:
        context.close()
        server.shutdown()
        server.server_close()
    assert not errors, errors
