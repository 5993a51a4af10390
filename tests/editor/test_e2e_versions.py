"""End-to-end versions (issue 31): the published badge, the History dialog (versions, changes, publish), and the
conflict dialog when someone else saved the flow after it was opened. Same set-up as test_e2e."""

from __future__ import annotations

import json
import re
import time

from tests.editor.test_e2e import (
    ADMIN,
    add_component,
    api,
    cookie_header,
    expect,
    shot,
    sign_in,
)
from tests.flowkit import reference_path

BOB, BOB_PASSWORD = "bob_editor", "Bob-Password-42"
TEXT = "field:ChatInput-AAAAA:input_value"


def test_history_publish_and_conflict(page, server):
    sign_in(page)
    cookies = cookie_header(page)
    document = json.loads(reference_path("chat-echo.json").read_text())
    status, flow = api(
        server, "POST", "/api/v1/flows/", body={"name": "versioned", "data": document["data"]}, cookies=cookies
    )
    assert status == 201, flow
    assert api(server, "POST", f"/api/v1/flows/{flow['id']}/publish", body={}, cookies=cookies)[0] == 200

    page.goto(f"/flow/{flow['id']}")
    expect(page.get_by_test_id("published-badge")).to_have_text("Published v1")
    page.get_by_test_id("history-button").click()
    dialog = page.get_by_test_id("history-dialog")
    expect(dialog.get_by_test_id("version-1")).to_contain_text("published")
    shot(page, "40-history")
    page.keyboard.press("Escape")
    page.get_by_role("button", name="API", exact=True).click()
    expect(page.get_by_test_id("api-version")).to_contain_text("published version v1")
    page.keyboard.press("Escape")

    # someone else saves the flow (another tab, another person) while it is open here
    changed = json.loads(json.dumps(document["data"]))
    changed["nodes"][0]["position"] = {"x": 900, "y": 900}
    status, theirs = api(server, "PATCH", f"/api/v1/flows/{flow['id']}", body={"data": changed}, cookies=cookies)
    assert status == 200, theirs

    # an edit here: the save is refused with both versions, and the dialog offers the ways out
    page.get_by_test_id("node-ChatInput").locator(".gnode-title").click()
    page.keyboard.press("Delete")
    expect(page.get_by_test_id("node-ChatInput")).to_have_count(0)
    page.keyboard.press("Control+s")
    conflict = page.get_by_test_id("conflict-dialog")
    expect(conflict).to_be_visible(timeout=10_000)
    # they moved the Chat Input that was deleted here: one change, a conflict
    expect(conflict.get_by_test_id("conflict-summary")).to_contain_text(
        "Chat Input: removed on one side, edited on the other (and 1 connection)"
    )
    shot(page, "41-conflict")
    conflict.get_by_test_id("conflict-overwrite").click()
    expect(conflict).to_have_count(0)
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")

    status, stored = api(server, "GET", f"/api/v1/flows/{flow['id']}", cookies=cookies)
    assert not [n for n in stored["data"]["nodes"] if n["data"]["type"] == "ChatInput"]
    # nothing lost: the other save is a version in the history
    status, listed = api(server, "GET", f"/api/v1/flows/{flow['id']}/versions/", cookies=cookies)
    texts = []
    for entry in listed["entries"]:
        _s, full = api(server, "GET", f"/api/v1/flows/{flow['id']}/versions/{entry['id']}", cookies=cookies)
        texts.append(json.dumps(full["data"]))
    assert any('"x": 900' in t or '"x":900' in t for t in texts)
    # the published version is untouched by the draft's edits
    page.get_by_test_id("history-button").click()
    expect(page.get_by_test_id("publication-state")).to_contain_text("Published: v1")


def _as_bob(browser, server):
    page = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server).new_page()
    page.set_default_timeout(15_000)
    page.goto("/")
    page.get_by_label("Username").fill(BOB)
    page.get_by_label("Password").fill(BOB_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="New flow")).to_be_visible()
    return page


def _type_text(page, text: str) -> None:
    field = page.get_by_test_id("node-ChatInput").get_by_label("Input Text", exact=True)
    field.fill(text)
    field.blur()


def test_two_people_edit_one_flow_and_merge(page, browser, server):
    """Alice (the owner) and Bob (a team member who may write) edit one flow in two browsers at once. Each
    save over the other's is refused; the conflict dialog lists each side's changes since the common base,
    node by node and field by field, and saves the merged flow: neither loses work."""
    sign_in(page)
    cookies = cookie_header(page)
    status, bob = api(
        server, "POST", "/api/v1/users/", body={"username": BOB, "password": BOB_PASSWORD}, cookies=cookies
    )
    assert status == 201, bob
    assert api(server, "PATCH", f"/api/v1/users/{bob['id']}", body={"is_active": True}, cookies=cookies)[0] == 200
    _s, project = api(server, "POST", "/api/v1/projects/", body={"name": "Merge desk"}, cookies=cookies)
    status, team = api(
        server, "POST", "/api/v1/authz/teams", body={"team_name": "editors", "adom_name": "t-ed"}, cookies=cookies
    )
    assert status == 201, team
    member = {"user_id": bob["id"]}
    assert api(server, "POST", f"/api/v1/authz/teams/{team['id']}/members", body=member, cookies=cookies)[0] == 201
    share = {"resource_type": "project", "resource_id": project["id"], "scope": "team", "target_id": team["id"],
             "permission_level": "write"}  # fmt: skip
    assert api(server, "POST", "/api/v1/authz/shares", body=share, cookies=cookies)[0] == 201
    document = json.loads(reference_path("chat-echo.json").read_text())
    body = {"name": "edited by two", "data": document["data"], "folder_id": project["id"]}
    status, flow = api(server, "POST", "/api/v1/flows/", body=body, cookies=cookies)
    assert status == 201, flow
    url = f"/flow/{flow['id']}"

    # both open the flow
    page.goto(url)
    expect(page.get_by_test_id("node-ChatInput")).to_be_visible()
    other = _as_bob(browser, server)
    other.goto(url)
    expect(other.get_by_test_id("node-ChatInput")).to_be_visible()

    # Alice adds a component and it is saved
    add_component(page, "CalculatorComponent", 700, 500)
    page.keyboard.press("Control+s")
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=15_000)

    # Bob, still on the version he opened, types a text: his save is refused, and the dialog names Alice
    _type_text(other, "bob's text")
    other.keyboard.press("Control+s")
    dialog = other.get_by_test_id("conflict-dialog")
    expect(dialog).to_be_visible(timeout=15_000)
    expect(dialog).to_contain_text(f"{ADMIN} saved this flow")
    expect(dialog.get_by_test_id(f"merge-{TEXT}")).to_contain_text("changed by you")
    added = dialog.get_by_test_id(re.compile("^merge-node:"))
    expect(added).to_have_count(1)
    expect(added).to_contain_text("added by them")
    expect(dialog.get_by_test_id(f"pick-theirs-{TEXT}")).not_to_be_checked()
    shot(other, "42-merge-bob")
    dialog.get_by_test_id("conflict-merge").click()
    # the merged flow is loaded: Alice's component and Bob's text
    expect(other.get_by_test_id("node-CalculatorComponent")).to_be_visible(timeout=15_000)
    expect(other.get_by_test_id("node-ChatInput").get_by_label("Input Text", exact=True)).to_have_value("bob's text")

    # Alice, now behind, types another text: both changed that field; she keeps Bob's, per change
    _type_text(page, "alice's text")
    page.keyboard.press("Control+s")
    dialog = page.get_by_test_id("conflict-dialog")
    expect(dialog).to_be_visible(timeout=15_000)
    expect(dialog).to_contain_text(f"{BOB} saved this flow")
    row = dialog.get_by_test_id(f"merge-{TEXT}")
    expect(row).to_contain_text("changed on both sides")
    expect(row).to_contain_text("alice's text")
    expect(row).to_contain_text("bob's text")
    dialog.get_by_test_id(f"pick-theirs-{TEXT}").check()
    shot(page, "43-merge-alice")
    dialog.get_by_test_id("conflict-merge").click()
    expect(page.get_by_test_id("node-ChatInput").get_by_label("Input Text", exact=True)).to_have_value(
        "bob's text", timeout=15_000
    )

    status, stored = api(server, "GET", f"/api/v1/flows/{flow['id']}", cookies=cookies)
    types = sorted(n["data"]["type"] for n in stored["data"]["nodes"])
    assert types == ["CalculatorComponent", "ChatInput", "ChatOutput"]
    chat_input = next(n for n in stored["data"]["nodes"] if n["data"]["type"] == "ChatInput")
    assert chat_input["data"]["node"]["template"]["input_value"]["value"] == "bob's text"
    assert len(stored["data"]["edges"]) == 1
    # the history names both authors
    _s, listed = api(server, "GET", f"/api/v1/flows/{flow['id']}/versions/", cookies=cookies)
    assert {e["username"] for e in listed["entries"]} >= {ADMIN, BOB}
    page.get_by_test_id("history-button").click()
    expect(page.get_by_test_id("history-dialog")).to_contain_text(f"by {BOB}")
    other.context.close()


def _ask(server: str, key: str, flow_id: str, text: str) -> tuple[int, str | None]:
    """An API caller's run (an API key, ``/api/v1/run``): the status and the answer's text, if any."""
    status, body = api(server, "POST", f"/api/v1/run/{flow_id}", body={"input_value": text}, headers={"x-api-key": key})
    try:
        return status, body["outputs"][0]["outputs"][0]["results"]["message"]["text"]
    except (KeyError, IndexError, TypeError):
        return status, None


def _answers(server: str, key: str, flow_id: str, expected: tuple[int, str]) -> None:
    """The API caller gets ``expected`` within the publication refresh (SERVICE_FLOW_PUBLICATION_REFRESH_SECONDS,
    1 s: ``service run`` has two web workers, and the one that did not take the publish sees it within that)."""
    started = time.monotonic()
    while (got := _ask(server, key, flow_id, "hello")) != expected and time.monotonic() - started < 2.5:
        time.sleep(0.1)
    assert got == expected, f"after {time.monotonic() - started:.1f} s"


def test_bad_edit_rolled_back_in_one_click_while_api_callers_never_notice(page, server):
    """'Done when', in the editor: the owner publishes from History, breaks the draft (deletes the Chat Input)
    and saves; an API caller keeps getting the published answer all along; one click on Restore (v1) puts the
    good graph back in the draft. Then the broken draft is published by mistake (callers do notice: that is the
    mistake) and one click on v1's Publish rolls them back."""
    sign_in(page)
    cookies = cookie_header(page)
    document = json.loads(reference_path("chat-echo.json").read_text())
    status, flow = api(
        server, "POST", "/api/v1/flows/", body={"name": "rolled back", "data": document["data"]}, cookies=cookies
    )
    assert status == 201, flow
    status, key = api(server, "POST", "/api/v1/api_key/", body={"name": "caller"}, cookies=cookies)
    assert status in (200, 201), key
    key = key["api_key"]
    good = (200, "hello")
    assert _ask(server, key, flow["id"], "hello") == good

    page.goto(f"/flow/{flow['id']}")
    expect(page.get_by_test_id("node-ChatInput")).to_be_visible()
    page.get_by_test_id("history-button").click()
    history = page.get_by_test_id("history-dialog")
    history.get_by_test_id("publish-draft").click()
    expect(history.get_by_test_id("publication-state")).to_contain_text("Published: v1")
    expect(history.get_by_test_id("published-by")).to_have_text(f"by {ADMIN}")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("published-badge")).to_have_text("Published v1")

    def break_the_draft() -> None:
        page.get_by_test_id("node-ChatInput").locator(".gnode-title").click()
        page.keyboard.press("Delete")
        expect(page.get_by_test_id("node-ChatInput")).to_have_count(0)
        page.keyboard.press("Control+s")
        expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=15_000)

    # a bad edit is saved: the draft has no Chat Input, API callers still get the published answer
    break_the_draft()
    _s, stored = api(server, "GET", f"/api/v1/flows/{flow['id']}", cookies=cookies)
    assert "ChatInput" not in {n["data"]["type"] for n in stored["data"]["nodes"]}
    assert _ask(server, key, flow["id"], "hello") == good

    # one click: Restore v1 (the good graph back in the draft; the bad one stays a version)
    page.get_by_test_id("history-button").click()
    history = page.get_by_test_id("history-dialog")
    expect(history.get_by_test_id("version-2")).to_be_visible()
    history.get_by_test_id("version-1").get_by_role("button", name="Restore").click()
    expect(page.get_by_test_id("node-ChatInput")).to_be_visible(timeout=15_000)
    _s, stored = api(server, "GET", f"/api/v1/flows/{flow['id']}", cookies=cookies)
    assert sorted(n["data"]["type"] for n in stored["data"]["nodes"]) == ["ChatInput", "ChatOutput"]
    assert len(stored["data"]["edges"]) == 1
    assert _ask(server, key, flow["id"], "hello") == good
    _s, publication = api(server, "GET", f"/api/v1/flows/{flow['id']}/publish", cookies=cookies)
    assert publication["version"]["version_number"] == 1

    # the other way round: the broken draft is published by mistake, and callers do get the broken flow
    page.reload()
    expect(page.get_by_test_id("node-ChatInput")).to_be_visible()
    break_the_draft()
    page.get_by_test_id("history-button").click()
    history = page.get_by_test_id("history-dialog")
    history.get_by_test_id("publish-draft").click()
    expect(history.get_by_test_id("publication-state")).not_to_contain_text("Published: v1")
    _answers(server, key, flow["id"], (200, ""))  # a Chat Output with nothing to say
    # one click: v1's Publish rolls API callers back; the draft (the editor's) is left as it is
    history.get_by_test_id("version-1").get_by_role("button", name="Publish").click()
    expect(history.get_by_test_id("publication-state")).to_contain_text("Published: v1")
    expect(history.get_by_test_id("version-1").get_by_test_id("published-mark")).to_be_visible()
    _answers(server, key, flow["id"], good)
    # the audit log tells the story (each web worker writes its entries within half a second)
    deadline = time.monotonic() + 10
    while True:
        _s, audits = api(server, "GET", f"/api/v1/flows/audits?flow_id={flow['id']}", cookies=cookies)
        actions = [item["action"] for item in audits["items"]]
        told = "flow:rollback" in actions and actions.count("flow:publish") == 2
        if told or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert actions[0] == "flow:rollback", actions
    assert actions.count("flow:publish") == 2 and "flow:restore" in actions, actions
