"""End-to-end versions (issue 31): the published badge, the History dialog (versions, changes, publish), and the
conflict dialog when someone else saved the flow after it was opened. Same set-up as test_e2e."""

from __future__ import annotations

import json

from tests.editor.test_e2e import (  # noqa: F401 - fixtures
    api,
    cookie_header,
    expect,
    server,
    shot,
    sign_in,
)
from tests.flowkit import reference_path


def test_history_publish_and_conflict(page, server):  # noqa: F811
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
    expect(conflict.get_by_test_id("conflict-summary")).to_contain_text("Only in their version")
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
