"""End-to-end on a phone: what a new user does at 412x839 with touch (Playwright's "Pixel 7" descriptor, in
Debian's chromium): sign in, see the projects and the flows, create a flow from the Basic Prompting starter,
open it, run it from the Playground, open and close dialogs, visit Settings and Model providers.

On every screen nothing is wider than the phone (a mobile browser would zoom the whole page out to fit it) and
the controls a step needs are inside the screen, not covered, at least 24x24 px, and answer a tap. The model is
the local OpenAI-wire test server (tests/openai_server.py), set up through the global variables a user would
set. Screenshots land in ``test-artifacts/`` (git-ignored) as ``e2e-phone-*.png``.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.editor import test_e2e
from tests.editor.conftest import provider_for_admin, signed_in_context, watched_page
from tests.editor.test_e2e import ADMIN, PASSWORD, api, cookie_header, shot
from tests.openai_server import OpenAIServer

pytestmark = test_e2e.pytestmark

WIDTH, HEIGHT = 412, 839
# Playwright's "Pixel 7" device descriptor (chromium), written out: the browser fixture is shared with the
# desktop modules, so this module has no Playwright instance of its own to read ``devices`` from
PIXEL_7 = {
    "user_agent": (
        "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Mobile Safari/537.36"
    ),
    "viewport": {"width": WIDTH, "height": HEIGHT},
    "screen": {"width": WIDTH, "height": 915},
    "device_scale_factor": 2.625,
    "is_mobile": True,
    "has_touch": True,
}
KEY = "sk-phone-test"
MIN_TAP = 24  # WCAG 2.2 target size (minimum), in CSS pixels


@pytest.fixture(scope="module")
def llm():
    with OpenAIServer(models=["gpt-4o-mini"], api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def server(shared_server, llm):
    """The shared app (tests/editor/conftest.py); the admin's OpenAI Compatible provider points at ``llm``."""
    provider_for_admin(shared_server, llm.url, KEY)
    return shared_server


def phone_page(browser, server):
    ctx = browser.new_context(**PIXEL_7, base_url=server)
    pg = ctx.new_page()
    pg.set_default_timeout(15_000)
    return ctx, pg


@pytest.fixture(scope="module")
def signed_in(browser, server):
    """One signed-in phone context for the module."""
    ctx = signed_in_context(browser, server, tap=True, **PIXEL_7)
    yield ctx
    ctx.close()


@pytest.fixture
def page(signed_in, request):
    with watched_page(signed_in, request) as pg:
        yield pg


# --- what "fits a phone" means ---------------------------------------------------------------------------------
_WIDER_THAN_SCREEN = """(width) => {
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (!r.width || r.right <= width + 0.5) continue;
    let clipped = false; // inside a box that scrolls or clips and itself fits: the page does not grow
    for (let p = el.parentElement; p && !clipped; p = p.parentElement)
      clipped = getComputedStyle(p).overflowX !== 'visible' && p.getBoundingClientRect().right <= width + 0.5;
    const name = `${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''}`;
    if (!clipped) out.push(`${name} ends at ${Math.round(r.right)}`);
  }
  return out.slice(0, 8);
}"""


def assert_fits_width(page, where: str, width: int = WIDTH) -> None:
    """Nothing scrolls sideways: a wider page makes a mobile browser lay it out wider and zoom out."""
    page.wait_for_load_state("networkidle")
    sizes = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    offenders = page.evaluate(_WIDER_THAN_SCREEN, width)
    assert sizes == [width, width] and not offenders, f"{where}: scrollWidth/innerWidth {sizes}, {offenders}"


def assert_tappable(locator, what: str) -> None:
    """Inside the screen, at least MIN_TAP px each way, and the topmost element at its centre (not covered)."""
    expect(locator).to_be_visible()
    box = locator.bounding_box()
    assert box is not None, what
    x, y, w, h = box["x"], box["y"], box["width"], box["height"]
    assert x >= 0 and y >= 0 and x + w <= WIDTH + 0.5 and y + h <= HEIGHT + 0.5, f"{what} is off-screen: {box}"
    assert w >= MIN_TAP and h >= MIN_TAP, f"{what} is {w:.0f}x{h:.0f} px, under {MIN_TAP}x{MIN_TAP}"
    on_top = locator.evaluate(
        "(el, [x, y]) => { const top = document.elementFromPoint(x, y); return !!top && el.contains(top); }",
        [x + w / 2, y + h / 2],
    )
    assert on_top, f"{what} is covered at its centre"


def assert_inside_screen(locator, what: str) -> None:
    box = locator.bounding_box()
    assert box is not None, what
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH + 0.5, f"{what} is wider than the screen: {box}"
    assert box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT + 0.5, f"{what} is taller than the screen: {box}"


def new_flow_from_starter(page, name: str) -> str:
    page.goto("/")
    # the projects and flows arrive after the page: measured before, the button moves as they fill the list
    # (on the shared served app other modules' projects push it down the screen)
    page.wait_for_load_state("networkidle")
    assert_tappable(page.get_by_role("button", name="New flow"), "New flow")
    page.get_by_role("button", name="New flow").tap()
    dialog = page.get_by_test_id("new-flow-dialog")
    expect(dialog).to_be_visible()
    assert_inside_screen(dialog, "the New flow dialog")
    assert_fits_width(page, "the New flow dialog")
    card = dialog.locator(".starter-card", has=page.locator("strong", has_text=re.compile(f"^{re.escape(name)}$")))
    card.scroll_into_view_if_needed()
    assert_tappable(card, f"the {name} starter")
    card.tap()
    expect(page).to_have_url(re.compile(r"/flow/[0-9a-f-]{36}$"))
    expect(page.locator(".react-flow__node").first).to_be_visible()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    return page.url.rsplit("/", 1)[-1]


def empty_flow(page, server: str, name: str) -> str:
    status, body = api(
        server,
        "POST",
        "/api/v1/flows/",
        body={"name": name, "data": {"nodes": [], "edges": []}},
        cookies=cookie_header(page),
    )
    assert status == 201, body
    return body["id"]


def toolbar_button(page, name: str):
    return page.get_by_role("toolbar", name="Editor").get_by_role("button", name=name, exact=True)


# --- the steps ---------------------------------------------------------------------------------------------------
def test_sign_in_at_phone_size(browser, server):
    ctx, page = phone_page(browser, server)
    try:
        page.goto("/")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        assert_fits_width(page, "the sign-in page")
        assert_inside_screen(page.locator(".login-card"), "the sign-in card")
        for label in ("Username", "Password"):
            assert_tappable(page.get_by_label(label), label)
        shot(page, "phone-01-sign-in")
        page.get_by_label("Username").fill(ADMIN)
        page.get_by_label("Password").fill("not the password")
        page.get_by_role("button", name="Sign in").tap()
        expect(page.get_by_role("alert")).to_be_visible()
        assert_fits_width(page, "the sign-in page with its error")
        page.get_by_label("Password").fill(PASSWORD)
        assert_tappable(page.get_by_role("button", name="Sign in"), "Sign in")
        page.get_by_role("button", name="Sign in").tap()
        expect(page.get_by_role("button", name="New flow")).to_be_visible(timeout=15_000)
    finally:
        ctx.close()


def test_home_lists_projects_and_flows(page, server):
    empty_flow(page, server, "Listed on the phone")
    page.goto("/")
    projects = page.get_by_role("navigation", name="Projects")
    expect(projects.get_by_role("link", name="Starter Project")).to_be_visible()
    expect(
        page.get_by_role("list", name="Flows").get_by_role("link", name=re.compile("Listed on the phone"))
    ).to_be_visible()
    assert_fits_width(page, "the home page")
    assert_tappable(page.get_by_role("button", name="New flow"), "New flow")
    assert_tappable(page.get_by_role("button", name="New project"), "New project")
    # the project's own actions show without hover (a touch screen has none)
    assert_tappable(page.get_by_role("button", name="Rename project Starter Project"), "Rename project")
    shot(page, "phone-02-home")
    # the page links scroll sideways in the top bar: Settings is reachable and opens its page
    settings = page.get_by_role("navigation", name="Account").get_by_role("link", name="Settings")
    settings.scroll_into_view_if_needed()
    assert_tappable(settings, "Settings in the top bar")
    assert_fits_width(page, "the home page, its top bar scrolled")
    settings.tap()
    expect(page).to_have_url(re.compile(r"/settings"))


def test_starter_flow_runs_in_the_playground(page, llm):
    new_flow_from_starter(page, "Basic Prompting")
    assert_fits_width(page, "the editor")
    name = page.get_by_test_id("flow-name")
    # the starter's name, numbered when the shared served app already holds one (another module's)
    expect(name).to_have_text(re.compile(r"^Basic Prompting( \(\d+\))?$"))
    assert_inside_screen(name, "the flow name")
    assert name.bounding_box()["width"] >= 96, "the flow name is squeezed to a sliver"  # type: ignore[index]
    for button in ("Run", "Playground"):
        assert_tappable(toolbar_button(page, button), f"the toolbar's {button}")
    assert_tappable(page.get_by_label("Search components"), "Search components")
    shot(page, "phone-03-editor")

    toolbar_button(page, "Playground").tap()
    playground = page.get_by_test_id("playground")
    expect(playground).to_be_visible()
    assert_inside_screen(playground, "the Playground")
    assert_fits_width(page, "the Playground")
    llm.reply("Start with a starter, then open the Playground.")
    box = page.get_by_label("Message", exact=True)
    assert_tappable(box, "the message box")
    box.tap()
    box.fill("where do I start on a phone?")
    send = playground.get_by_role("button", name="Send")
    assert_tappable(send, "Send")
    send.tap()
    expect(playground.get_by_test_id("msg-ai").last).to_contain_text("Start with a starter", timeout=30_000)
    assert [m["content"] for m in llm.chat_requests[-1]["messages"] if m["role"] == "user"][-1] == (
        "where do I start on a phone?"
    )
    assert_fits_width(page, "the Playground with its answer")
    assert_tappable(send, "Send after the answer")
    shot(page, "phone-04-playground")

    close = page.get_by_role("button", name="Close the playground")
    assert_tappable(close, "the Playground's close button")
    close.tap()
    expect(playground).to_be_hidden()
    assert_tappable(toolbar_button(page, "Run"), "the toolbar's Run")
    toolbar_button(page, "Run").tap()
    expect(page.get_by_test_id("save-state")).to_be_visible()


@pytest.mark.parametrize(
    ("button", "dialog"), [("Settings", "flow-settings"), ("Share", "share-dialog"), ("API", "api-panel")]
)
def test_editor_dialogs_fit_and_close(page, server, button, dialog):
    flow_id = empty_flow(page, server, f"Dialog {button}")
    page.goto(f"/flow/{flow_id}")
    opener = toolbar_button(page, button)
    opener.scroll_into_view_if_needed()  # the toolbar scrolls sideways
    assert_tappable(opener, f"the toolbar's {button}")
    opener.tap()
    box = page.get_by_test_id(dialog)
    expect(box).to_be_visible()
    assert_inside_screen(box, f"the {button} dialog")
    assert_fits_width(page, f"the {button} dialog")
    close = box.locator(".modal-header").get_by_role("button", name="Close")  # the one in its header
    assert_tappable(close, f"the {button} dialog's close button")
    if button == "Settings":
        shot(page, "phone-05-flow-settings")
    close.tap()
    expect(box).to_be_hidden()
    assert_fits_width(page, f"the editor after the {button} dialog")
    if button == "Settings":  # a toast stays clear of the toolbar
        opener.tap()
        box.get_by_role("button", name="Save").tap()
        toast = page.get_by_role("status").filter(has_text="Flow settings saved")
        expect(toast).to_be_visible()
        assert_inside_screen(toast, "the toast")
        page.get_by_role("toolbar", name="Editor").evaluate("el => { el.scrollLeft = 0; }")  # swiped back
        for name in ("Run", "Playground"):
            assert_tappable(toolbar_button(page, name), f"the toolbar's {name} under a toast")


def centre(locator) -> tuple[float, float]:
    box = locator.bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def touch_drag(page, start: tuple[float, float], end: tuple[float, float], steps: int = 10) -> None:
    """One finger from ``start`` to ``end`` (touch events through the DevTools protocol: Playwright taps only)."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": start[0], "y": start[1]}]})
        for i in range(1, steps + 1):
            x, y = (start[0] + (end[0] - start[0]) * i / steps, start[1] + (end[1] - start[1]) * i / steps)
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
            page.wait_for_timeout(20)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    finally:
        cdp.detach()


def test_components_are_added_moved_and_connected_by_touch(page, server):
    flow_id = empty_flow(page, server, "Touch to build")
    page.goto(f"/flow/{flow_id}")
    search = page.get_by_label("Search components")
    # the list stays folded until the search box is used (the canvas keeps the room); a tap on the canvas folds it
    first = page.get_by_test_id("component-ChatInput")
    expect(first).to_be_hidden()
    search.tap()
    expect(first).to_be_visible()
    page.locator(".react-flow__pane").tap(position={"x": 200, "y": 300})
    expect(first).to_be_hidden()
    for key, query, count in (
        ("ChatInput", "Chat Input", 1),
        ("ChatOutput", "Chat Output", 1),
        ("ChatOutput", "Chat Output", 2),
    ):
        search.tap()
        search.fill(query)
        item = page.get_by_test_id(f"component-{key}")
        assert_tappable(item, f"the {query} component")
        assert_fits_width(page, "the open component list")
        item.tap()
        expect(page.locator(f"[data-testid=node-{key}]")).to_have_count(count)
        expect(item).to_be_hidden()  # adding folds the list: the new node is in sight
    page.get_by_role("button", name="Fit View").tap()
    source = page.locator("[data-testid=node-ChatInput]")
    outputs = page.locator("[data-testid=node-ChatOutput]")

    # a finger on a node's title moves the node
    before = source.bounding_box()
    assert before is not None
    x, y = centre(source.locator(".gnode-title"))
    touch_drag(page, (x, y), (x, y + 60))
    after = source.bounding_box()
    assert after is not None and after["y"] - before["y"] > 30, (before, after)

    # selected, a node's actions are a bar inside the screen
    outputs.first.locator(".gnode-title").tap()
    actions = page.get_by_label("Actions of Chat Output", exact=True)
    expect(actions).to_be_visible()
    assert_inside_screen(actions, "the node's actions")

    # connect by tapping the output's dot, then an input's; and by dragging from the dot with a finger
    out_dot = source.locator("[data-testid^=handle-out-]").first
    page.touchscreen.tap(*centre(out_dot))
    page.touchscreen.tap(*centre(outputs.first.locator("[data-testid=handle-in-input_value]")))
    expect(page.locator(".react-flow__edge")).to_have_count(1)
    touch_drag(page, centre(out_dot), centre(outputs.last.locator("[data-testid=handle-in-input_value]")))
    expect(page.locator(".react-flow__edge")).to_have_count(2)
    shot(page, "phone-07-connected")
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    status, flow = api(server, "GET", f"/api/v1/flows/{flow_id}", cookies=cookie_header(page))
    assert status == 200 and len(flow["data"]["edges"]) == 2, flow


@pytest.mark.parametrize("path", ["/settings", "/settings/model-providers", "/settings/variables"])
def test_settings_pages_fit(page, path):
    page.goto(path)
    tabs = page.get_by_role("navigation", name="Settings")
    expect(tabs).to_be_visible()
    for tab in ("API keys", "Model providers", "Global variables"):
        assert_inside_screen(tabs.get_by_role("link", name=tab), f"the {tab} tab")
    assert_fits_width(page, path)
    if path.endswith("model-providers"):
        card = page.get_by_test_id("provider-openai-compatible")
        expect(card).to_be_visible()
        expect(card.get_by_text("Set up", exact=True)).to_be_visible()
        assert_tappable(card.get_by_role("button", name="Test connection"), "Test connection")
        shot(page, "phone-06-model-providers")


@pytest.mark.parametrize("path", ["/files", "/knowledge", "/teams", "/usage", "/admin"])
def test_other_pages_fit(page, path):
    page.goto(path)
    expect(page.get_by_role("main").or_(page.locator(".page-main, .admin-page")).first).to_be_visible()
    assert_fits_width(page, path)
    assert_tappable(page.get_by_role("link", name="Flow Builder home"), f"the home link on {path}")


def test_a_small_phone(page, server):
    """360 px wide (a small Android phone): the same pages still fit."""
    flow_id = empty_flow(page, server, "Small phone")
    page.set_viewport_size({"width": 360, "height": 740})
    for path in (
        "/",
        "/settings/model-providers",
        "/files",
        "/knowledge",
        "/teams",
        "/usage",
        "/admin",
        f"/flow/{flow_id}",
    ):
        page.goto(path)
        expect(page.get_by_role("link", name="Flow Builder home")).to_be_visible()
        assert_fits_width(page, f"{path} at 360 px", width=360)
