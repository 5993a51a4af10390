"""End-to-end, issue 28's pages: the template gallery (categories, search, blank flow), the Admin users page
(superusers only), a flow's message logs (edit, copy, delete, feedback), a failed turn's error kept after a
reload, the Embed into site snippet, moving flows between projects and bulk actions on Home, and no sign-out
under auto-login."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests import flowkit
from tests.editor.conftest import unique
from tests.editor.test_e2e import (  # noqa: F401 - fixtures
    ADMIN,
    ARTIFACTS,
    PASSWORD,
    api,
    cookie_header,
    open_imported_chat_echo,
    pytestmark,
    running_service,
    shot,
    sign_in,
)


def _login(base: str, username: str, password: str) -> int:
    import urllib.error
    import urllib.parse
    import urllib.request

    data = urllib.parse.urlencode({"username": username, "password": password}).encode()
    req = urllib.request.Request(base + "/api/v1/login", data=data, method="POST")  # noqa: S310 - local server
    req.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def _flow(page, base: str, name: str, folder_id: str | None = None) -> str:
    node = flowkit.node("ChatOutput", "ChatOutput-00001")
    body = {"name": name, "data": flowkit.flow([node], [])}
    if folder_id:
        body["folder_id"] = folder_id
    status, created = api(base, "POST", "/api/v1/flows/", body=body, cookies=cookie_header(page))
    assert status == 201, created
    return created["id"]


def test_template_gallery_categories_search_and_blank(page, server):
    sign_in(page)
    page.get_by_role("button", name="New flow").click()
    dialog = page.get_by_test_id("new-flow-dialog")
    cards = dialog.get_by_test_id("template-card")
    expect(cards.first).to_be_visible()
    everything = cards.count()
    assert everything >= 5
    nav = dialog.get_by_role("navigation", name="Template categories")
    for label in ("All templates", "Get started", "Agents", "Chatbots"):
        expect(nav.get_by_role("button", name=label, exact=True)).to_be_visible()
    nav.get_by_role("button", name="Agents", exact=True).click()
    expect(nav.get_by_role("button", name="Agents", exact=True)).to_have_attribute("aria-pressed", "true")
    expect(cards).to_have_count(2)
    for i in range(2):
        expect(cards.nth(i)).to_contain_text("Agents")
    nav.get_by_role("button", name="All templates").click()
    expect(cards).to_have_count(everything)
    dialog.get_by_label("Search templates").fill("upper")
    expect(cards).to_have_count(1)
    expect(cards.first).to_contain_text("Text Uppercase")
    dialog.get_by_label("Search templates").fill("no such template")
    expect(cards).to_have_count(0)
    expect(dialog.get_by_text("No template matches")).to_be_visible()
    dialog.get_by_label("Search templates").fill("upper")
    shot(page, "pages-01-template-gallery")
    cards.first.click()
    expect(page.locator(".react-flow__node").first).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)

    page.goto("/")
    page.get_by_role("button", name="New flow").click()
    page.get_by_test_id("new-flow-dialog").get_by_role("button", name=re.compile("^Blank flow")).click()
    expect(page.locator(".react-flow__pane")).to_be_visible()
    expect(page.locator(".react-flow__node")).to_have_count(0)


def test_admin_users_page(page, server, browser):
    sign_in(page)
    cookies = cookie_header(page)
    prefix = unique("page").replace(" ", "")  # the shared app has other modules' users: pages of these only
    for i in range(11):  # more than a page of 10
        status, body = api(
            server,
            "POST",
            "/api/v1/users/",
            body={"username": f"{prefix}{i:02d}", "password": "Pass-word-42"},
            cookies=cookies,
        )
        assert status == 201, body

    page.get_by_role("link", name="Admin", exact=True).click()
    expect(page.get_by_role("heading", name="Admin")).to_be_visible()
    table = page.get_by_role("table", name="Users")
    expect(table.get_by_role("row")).to_have_count(11)  # header + 10
    page.get_by_label("Search users").fill(prefix)
    expect(page.get_by_test_id("users-total")).to_have_text("11 users · page 1 of 2")
    expect(table.get_by_role("row")).to_have_count(11)
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_test_id("users-total")).to_have_text("11 users · page 2 of 2")
    expect(table.get_by_role("row")).to_have_count(2)  # header + 1
    page.get_by_role("button", name="Previous").click()
    expect(page.get_by_test_id("users-total")).to_have_text("11 users · page 1 of 2")

    page.get_by_label("Search users").fill(f"{prefix}03")
    expect(table.get_by_role("row")).to_have_count(2)

    # create an active user, then reset the password, toggle flags, delete
    page.get_by_role("button", name="New user").click()
    dialog = page.get_by_test_id("user-dialog")
    dialog.get_by_label("Username").fill("carol")
    dialog.get_by_label("Password", exact=True).fill("Carol-pass-42")
    dialog.get_by_label("Confirm the password").fill("Carol-pass-42")
    dialog.get_by_role("button", name="Create").click()
    expect(dialog).to_have_count(0)
    page.get_by_label("Search users").fill("carol")
    row = page.get_by_test_id("user-row-carol")
    expect(row).to_be_visible()
    expect(row.get_by_label("carol is active")).to_be_checked()
    assert _login(server, "carol", "Carol-pass-42") == 200
    shot(page, "pages-02-admin-users")

    row.get_by_role("button", name="Edit carol").click()
    dialog = page.get_by_test_id("user-dialog")
    dialog.get_by_label("New password").fill("Carol-new-pass-43")
    dialog.get_by_label("Confirm the password").fill("Carol-new-pass-43")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0)
    assert _login(server, "carol", "Carol-new-pass-43") == 200
    assert _login(server, "carol", "Carol-pass-42") == 401

    row.get_by_label("carol is a superuser").check()
    expect(page.get_by_text("Updated carol.")).to_be_visible()
    expect(row.get_by_label("carol is a superuser")).to_be_enabled()  # disabled while the change is saved
    row.get_by_label("carol is a superuser").uncheck()
    expect(row.get_by_label("carol is a superuser")).to_be_enabled()
    expect(row.get_by_label("carol is a superuser")).not_to_be_checked()
    row.get_by_label("carol is active").uncheck()
    expect(row.get_by_label("carol is active")).not_to_be_checked()
    expect(row.get_by_label("carol is active")).to_be_enabled()
    assert _login(server, "carol", "Carol-new-pass-43") != 200  # inactive users cannot sign in
    row.get_by_label("carol is active").check()
    expect(row.get_by_label("carol is active")).to_be_checked()
    expect(row.get_by_label("carol is active")).to_be_enabled()

    # a non-superuser sees no Admin link and no users
    other = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server)
    try:
        pg = other.new_page()
        pg.goto("/")
        pg.get_by_label("Username").fill("carol")
        pg.get_by_label("Password").fill("Carol-new-pass-43")
        pg.get_by_role("button", name="Sign in").click()
        expect(pg.get_by_role("button", name="New flow")).to_be_visible()
        expect(pg.get_by_role("link", name="Admin", exact=True)).to_have_count(0)
        pg.goto("/admin")
        expect(pg.get_by_text("Only superusers can manage users.")).to_be_visible()
        expect(pg.get_by_role("table", name="Users")).to_have_count(0)
    finally:
        other.close()

    row.get_by_role("button", name="Delete carol").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_test_id("user-row-carol")).to_have_count(0)
    assert _login(server, "carol", "Carol-new-pass-43") != 200


def test_message_logs_edit_feedback_copy_delete(page, server):
    open_imported_chat_echo(page)
    flow_id = page.url.rsplit("/", 1)[1]
    page.get_by_role("button", name="Playground").click()
    box = page.get_by_label("Message", exact=True)
    box.fill("first words")
    box.press("Enter")
    playground = page.get_by_test_id("playground")
    expect(playground.get_by_test_id("msg-ai").last).to_contain_text("first words", timeout=30_000)

    playground.get_by_role("button", name="Message logs").click()
    logs = page.get_by_test_id("message-logs")
    rows = logs.get_by_test_id("message-row")
    expect(rows).to_have_count(2)
    user_row = rows.filter(has_text="User")
    answer_row = rows.filter(has_not_text="User").first

    user_row.get_by_role("button", name="Edit").click()
    logs.get_by_label("Message text").fill("edited words")
    logs.get_by_role("button", name="Save").click()
    expect(rows.filter(has_text="edited words")).to_have_count(1)
    expect(rows.filter(has_text="edited words").get_by_text("edited", exact=True)).to_be_visible()

    # the feedback buttons draw stroke icons (Debian's chromium has no emoji font: emoji were empty boxes)
    for label in ("Good answer", "Bad answer"):
        expect(answer_row.get_by_role("button", name=label).locator("svg path")).to_have_count(1)
    answer_row.get_by_role("button", name="Good answer").click()
    expect(answer_row.get_by_role("button", name="Good answer")).to_have_attribute("aria-pressed", "true")
    status, stored = api(server, "GET", f"/api/v1/monitor/messages?flow_id={flow_id}", cookies=cookie_header(page))
    assert status == 200
    by_text = {m["text"]: m for m in stored}
    assert by_text["edited words"]["edit"] is True
    answers = [m for m in stored if m["sender"] != "User"]
    assert answers[0]["properties"]["positive_feedback"] is True

    answer_row.get_by_role("button", name="Copy").click()
    expect(page.get_by_text("Copied.")).to_be_visible()
    shot(page, "pages-03-message-logs")

    user_row.get_by_role("button", name="Delete").click()
    expect(rows).to_have_count(1)
    status, stored = api(server, "GET", f"/api/v1/monitor/messages?flow_id={flow_id}", cookies=cookie_header(page))
    assert [m["sender"] for m in stored] == [answers[0]["sender"]]
    page.keyboard.press("Escape")
    page.reload()  # the Playground reads the stored messages again
    page.get_by_role("button", name="Playground").click()
    expect(page.get_by_test_id("playground").get_by_test_id("msg-ai")).to_have_count(1)
    expect(page.get_by_test_id("playground").get_by_test_id("msg-user")).to_have_count(0)


def test_failed_turn_keeps_its_error_after_a_reload(page, server):
    sign_in(page)
    url = flowkit.node("URLComponent", "URL-00001", urls=["http://10.255.0.1/"], continue_on_failure=False)
    out = flowkit.node("ChatOutput", "ChatOutput-00001")
    out["position"] = {"x": 450, "y": 0}
    data = flowkit.flow([url, out], [flowkit.edge(url, "raw_results", out, "input_value")])
    status, created = api(
        server, "POST", "/api/v1/flows/", body={"name": "fails", "data": data}, cookies=cookie_header(page)
    )
    assert status == 201, created
    page.goto(f"/flow/{created['id']}")
    page.get_by_role("button", name="Playground").click()
    playground = page.get_by_test_id("playground")
    playground.get_by_role("button", name="Run").click()
    expect(playground.get_by_role("alert")).to_contain_text("10.255.0.1", timeout=30_000)

    page.reload()
    page.get_by_role("button", name="Playground").click()
    stored = page.get_by_test_id("playground").locator("[data-error=true]")
    expect(stored).to_contain_text("10.255.0.1", timeout=15_000)
    shot(page, "pages-04-stored-error")
    status, messages = api(
        server, "GET", f"/api/v1/monitor/messages?flow_id={created['id']}", cookies=cookie_header(page)
    )
    errors = [m for m in messages if m["error"]]
    assert len(errors) == 1 and errors[0]["category"] == "error"
    assert errors[0]["content_blocks"][0]["contents"][0]["type"] == "error"


def test_embed_into_site_snippet(page, server):
    outside: list[str] = []
    page.on("request", lambda r: not r.url.startswith(server) and outside.append(r.url))
    open_imported_chat_echo(page)
    flow_id = page.url.rsplit("/", 1)[1]
    page.get_by_role("button", name="API", exact=True).click()
    panel = page.get_by_test_id("api-panel")
    panel.get_by_role("tab", name="Embed into site").click()
    snippet = panel.get_by_test_id("api-snippet").inner_text()
    assert "<service-chat" in snippet and "</service-chat>" in snippet
    assert f'flow_id="{flow_id}"' in snippet
    assert f'host_url="{server}"' in snippet
    status, flow = api(server, "GET", f"/api/v1/flows/{flow_id}", cookies=cookie_header(page))
    assert status == 200
    assert f'window_title="{flow["name"]}"' in snippet
    assert "cdn.jsdelivr.net" in snippet
    expect(panel.get_by_test_id("embed-note")).to_contain_text("this server does not host it")
    shot(page, "pages-05-embed")
    assert not outside, outside  # the editor itself loads nothing from elsewhere


def test_home_move_between_projects_and_bulk_actions(page, server):
    sign_in(page)
    cookies = cookie_header(page)
    status, archive = api(
        server,
        "POST",
        "/api/v1/projects/",
        body={"name": "Archive", "description": "", "flows_list": [], "components_list": []},
        cookies=cookies,
    )
    assert status == 201, archive
    status, home = api(
        server,
        "POST",
        "/api/v1/projects/",
        body={"name": "Bulk home", "description": "", "flows_list": [], "components_list": []},
        cookies=cookies,
    )
    assert status == 201, home
    for name in ("bulk one", "bulk two", "bulk three", "bulk four"):
        _flow(page, server, name, home["id"])
    page.goto(f"/projects/{home['id']}")
    expect(page.locator(".flow-card")).to_have_count(4)

    # one flow through its Move button
    page.get_by_role("button", name="Move bulk four").click()
    dialog = page.get_by_test_id("move-dialog")
    dialog.get_by_label("To the project").select_option(label="Archive")
    dialog.get_by_role("button", name="Move").click()
    expect(page.locator(".flow-card")).to_have_count(3)

    # select two: move them together
    page.get_by_label("Select bulk one").check()
    page.get_by_label("Select bulk two").check()
    expect(page.get_by_test_id("selected-count")).to_have_text("2 selected")
    shot(page, "pages-06-bulk")
    page.get_by_role("toolbar", name="Selected flows").get_by_role("button", name="Move to…").click()
    page.get_by_test_id("move-dialog").get_by_label("To the project").select_option(label="Archive")
    page.get_by_test_id("move-dialog").get_by_role("button", name="Move").click()
    expect(page.get_by_text("Moved 2 flows to “Archive”.")).to_be_visible()
    expect(page.locator(".flow-card")).to_have_count(1)
    status, moved = api(server, "GET", f"/api/v1/projects/{archive['id']}", cookies=cookies)
    assert sorted(f["name"] for f in moved["flows"]) == ["bulk four", "bulk one", "bulk two"]

    # in the archive: select all, export them, delete them
    page.get_by_role("link", name="Archive").click()
    expect(page.locator(".flow-card")).to_have_count(3)
    page.get_by_label("Select bulk one").check()
    page.get_by_role("toolbar", name="Selected flows").get_by_role("button", name="Select all").click()
    expect(page.get_by_test_id("selected-count")).to_have_text("3 selected")
    with page.expect_download() as download:
        page.get_by_role("button", name="Export selected").click()
    assert download.value.suggested_filename.endswith(".zip")
    page.get_by_role("button", name="Delete selected").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_text("Deleted 3 flows.")).to_be_visible()
    expect(page.locator(".flow-card")).to_have_count(0)
    status, left = api(server, "GET", f"/api/v1/projects/{archive['id']}", cookies=cookies)
    assert left["flows"] == []


@pytest.fixture(scope="module")
def auto_login_server(tmp_path_factory):
    config = tmp_path_factory.mktemp("e2e-auto-login")
    with running_service(config, SERVICE_AUTO_LOGIN="true") as base:
        yield base
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "e2e-auto-login-server.log").write_bytes((config / "server.log").read_bytes())


def test_auto_login_offers_no_sign_out(browser, auto_login_server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=auto_login_server)
    try:
        pg = ctx.new_page()
        pg.goto("/")
        expect(pg.get_by_role("button", name="New flow")).to_be_visible()
        expect(pg.get_by_role("heading", name="Sign in")).to_have_count(0)
        expect(pg.get_by_role("link", name="Settings")).to_be_visible()
        expect(pg.get_by_role("button", name="Sign out")).to_have_count(0)
        pg.reload()  # the session cookie is still there: still no way onto a sign-in form nobody can use
        expect(pg.get_by_role("button", name="New flow")).to_be_visible()
        expect(pg.get_by_role("button", name="Sign out")).to_have_count(0)
        # the session ends on the server side: the editor renews it by auto-login, no sign-in form
        ctx.clear_cookies()
        pg.get_by_role("button", name="New flow").click()
        expect(pg.get_by_test_id("new-flow-dialog")).to_be_visible()
        pg.keyboard.press("Escape")
        pg.goto("/settings")
        expect(pg.get_by_role("heading", name="Sign in")).to_have_count(0)
        expect(pg.get_by_role("link", name="Settings")).to_be_visible()
    finally:
        ctx.close()


def test_sign_out_still_there_without_auto_login(page, server):
    sign_in(page)
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


_ = (ADMIN, PASSWORD, Path, json)
