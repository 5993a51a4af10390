"""End-to-end, a flow shared through a team project in the editor (issue 33): a run-only member opens it read-only
(the role banner and badge, the canvas refuses edits, nothing is saved and no draft is written), runs it in the
Playground and renames their own session (no ``flow_id``: their messages only); the owner renames a session of
the flow in the Playground with ``flow_id`` (every user's messages of that flow's session)."""

from __future__ import annotations

import json
import urllib.parse

from playwright.sync_api import expect

from tests.editor.conftest import unique
from tests.editor.test_e2e import ADMIN, PASSWORD, pytestmark, sign_in  # noqa: F401 - the module's marks
from tests.editor.test_e2e_team_switcher import _call, _token
from tests.flowkit import reference_path

MEMBER, MEMBER_PASSWORD = "rosa", "Rosa-Password-42"
BANNER = "Shared with you as run-only: you can run this flow but not change it"


def _is_sessions_load(response) -> bool:
    return response.request.method == "GET" and "/api/v1/monitor/messages/sessions" in response.url


def _run_in_playground(page, text: str) -> None:
    """Open the Playground, send ``text`` and wait for the echo and for the sessions reloaded after the run
    (a session is renamed on the server only once the Playground knows it is stored)."""
    with page.expect_response(_is_sessions_load):
        page.get_by_role("button", name="Playground").click()
    expect(page.get_by_test_id("playground")).to_be_visible()
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    with page.expect_response(_is_sessions_load, timeout=30_000):
        box.press("Enter")
        expect(page.get_by_test_id("msg-ai").last).to_contain_text(text, timeout=30_000)


def _rename_default_session(page, flow_id: str, name: str) -> None:
    """Rename the flow's default session in the open Playground to ``name``: the PATCH answered 200 and the
    session list shows the new name."""
    playground = page.get_by_test_id("playground")
    playground.get_by_role("button", name=f"Rename session {flow_id}").click()
    page.get_by_label("Session name").fill(name)
    with page.expect_response(lambda r: r.request.method == "PATCH" and "/monitor/messages/session/" in r.url) as got:
        page.get_by_label("Session name").press("Enter")
    assert got.value.status == 200, got.value.text()
    expect(playground.get_by_role("button", name=name, exact=True)).to_be_visible()


def _session_calls(requests: list[tuple[str, str]], method: str) -> list[urllib.parse.SplitResult]:
    return [
        urllib.parse.urlsplit(url)
        for m, url in requests
        if m == method and "/api/v1/monitor/messages/session/" in urllib.parse.urlsplit(url).path
    ]


def test_a_run_only_member_runs_a_shared_flow_read_only(browser, server):
    admin_token = _token(server, ADMIN, PASSWORD)
    member = _call(server, "POST", "/api/v1/users/", admin_token, {"username": MEMBER, "password": MEMBER_PASSWORD})
    _call(server, "PATCH", f"/api/v1/users/{member['id']}", admin_token, {"is_active": True})
    project = _call(server, "POST", "/api/v1/projects/", admin_token, {"name": unique("Support desk")})
    echo = json.loads(reference_path("chat-echo.json").read_text())
    flow = _call(
        server, "POST", "/api/v1/flows/", admin_token,
        {"name": "Shared echo", "folder_id": project["id"], "data": echo["data"]},
    )  # fmt: skip
    flow_id = flow["id"]
    name = unique("Support")  # the shared app has other modules' teams
    team = _call(server, "POST", "/api/v1/authz/teams", admin_token, {"team_name": name, "adom_name": name.lower()})
    _call(server, "POST", f"/api/v1/authz/teams/{team['id']}/members", admin_token, {"user_id": member["id"]})
    body = {"resource_type": "project", "resource_id": project["id"], "scope": "team", "target_id": team["id"]}
    _call(server, "POST", "/api/v1/authz/shares", admin_token, {**body, "permission_level": "execute"})

    # the member opens the shared flow: read-only, as a locked flow
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server)
    rosa = context.new_page()
    rosa.set_default_timeout(15_000)
    sent: list[tuple[str, str]] = []
    rosa.on("request", lambda r: sent.append((r.method, r.url)))
    rosa.goto("/")
    rosa.get_by_label("Username").fill(MEMBER)
    rosa.get_by_label("Password").fill(MEMBER_PASSWORD)
    rosa.get_by_role("button", name="Sign in").click()
    expect(rosa.get_by_role("button", name="New flow")).to_be_visible()
    rosa.goto(f"/flow/{flow_id}")
    chat_input = rosa.get_by_test_id("node-ChatInput")
    expect(chat_input).to_be_visible()
    expect(rosa.get_by_test_id("role-banner")).to_contain_text(BANNER)
    expect(rosa.get_by_test_id("locked-banner")).to_have_count(0)
    expect(rosa.get_by_test_id("role-badge")).to_have_text("run-only")
    expect(rosa.get_by_test_id("save-state")).to_contain_text("Read only")
    expect(rosa.get_by_role("button", name="Save", exact=True)).to_be_disabled()
    # edits are refused: a drag moves no node (the view may pan: the nodes keep their places relative to each
    # other), Delete keeps it, Ctrl+S sends nothing
    chat_output = rosa.get_by_test_id("node-ChatOutput")

    def apart() -> tuple[float, float]:
        a, b = chat_input.bounding_box(), chat_output.bounding_box()
        assert a is not None and b is not None
        return b["x"] - a["x"], b["y"] - a["y"]

    before, start = apart(), chat_input.bounding_box()
    assert start is not None
    rosa.mouse.move(start["x"] + 40, start["y"] + 12)
    rosa.mouse.down()
    rosa.mouse.move(start["x"] + 240, start["y"] + 160, steps=8)
    rosa.mouse.up()
    after = apart()
    assert abs(after[0] - before[0]) < 2 and abs(after[1] - before[1]) < 2, (before, after)
    chat_input.click()
    rosa.keyboard.press("Delete")
    expect(chat_input).to_have_count(1)
    rosa.keyboard.press("Control+s")
    rosa.get_by_test_id("flow-name").click()  # no rename dialog: the role's notice instead
    expect(rosa.get_by_role("dialog", name="Rename flow")).to_have_count(0)
    expect(rosa.locator(".toast").filter(has_text=BANNER)).to_be_visible()
    # the flow's settings can be read, not changed: the role's notice, every field and Save disabled
    rosa.get_by_role("button", name="Settings", exact=True).click()
    settings = rosa.get_by_test_id("flow-settings")
    expect(settings.get_by_test_id("modal-read-only")).to_contain_text(BANNER)
    expect(settings.get_by_label("Description")).to_be_disabled()
    expect(settings.get_by_role("button", name="Save", exact=True)).to_be_disabled()
    settings.get_by_role("button", name="Close").click()
    expect(settings).to_have_count(0)

    # the Playground runs it (run-only may run), and renames the member's own session without flow_id
    _run_in_playground(rosa, "hello from rosa")
    _rename_default_session(rosa, flow_id, "rosa-session")
    [renamed] = _session_calls(sent, "PATCH")
    query = urllib.parse.parse_qs(renamed.query)
    assert query == {"new_session_id": ["rosa-session"]}, renamed  # no flow_id: the member's own messages
    # after the autosave interval (1 s by default), still no write of the flow, and no draft kept in the browser
    rosa.wait_for_timeout(2500)
    writes = [(m, u) for m, u in sent if m in ("PATCH", "PUT") and f"/api/v1/flows/{flow_id}" in u]
    assert writes == [], writes
    drafts = rosa.evaluate("() => Object.keys(localStorage).filter((k) => k.startsWith('service-editor:draft:'))")
    assert drafts == [], drafts
    context.close()

    # the owner renames a session of the flow in the Playground: with flow_id (every user's messages of it)
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    owned: list[tuple[str, str]] = []
    page.on("request", lambda r: owned.append((r.method, r.url)))
    sign_in(page)
    page.goto(f"/flow/{flow_id}")
    expect(page.get_by_test_id("node-ChatInput")).to_be_visible()
    expect(page.get_by_test_id("role-badge")).to_have_count(0)
    expect(page.get_by_test_id("role-banner")).to_have_count(0)
    page.get_by_role("button", name="Settings", exact=True).click()  # the owner's settings: editable
    expect(page.get_by_test_id("flow-settings").get_by_label("Description")).to_be_enabled()
    expect(page.get_by_test_id("modal-read-only")).to_have_count(0)
    page.get_by_test_id("flow-settings").get_by_role("button", name="Close").click()
    _run_in_playground(page, "hello from the owner")
    _rename_default_session(page, flow_id, "owner-session")
    [renamed] = _session_calls(owned, "PATCH")
    assert urllib.parse.parse_qs(renamed.query) == {"new_session_id": ["owner-session"], "flow_id": [flow_id]}, renamed
    # each kept their own session of the flow (the owner's rename took the flow's default session only)
    member_token = _token(server, MEMBER, MEMBER_PASSWORD)
    for token, expected in ((admin_token, ["owner-session"]), (member_token, ["rosa-session"])):
        sessions = _call(server, "GET", f"/api/v1/monitor/messages/sessions?flow_id={flow_id}", token)
        assert sessions == expected, sessions
    context.close()
