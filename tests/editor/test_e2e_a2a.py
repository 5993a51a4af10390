"""End-to-end, as a new user: open a flow's Settings, make it an agent, publish it over A2A, edit the agent card's
overrides and watch the live preview (invalid overrides show the server's validation errors), copy the card URL,
save, then fetch the card over HTTP and find the override in it. Chromium from the system package, as
tests/editor/test_e2e.py."""

from __future__ import annotations

import urllib.error
import urllib.request

from tests.editor import test_e2e
from tests.editor.test_e2e import ADMIN, PASSWORD, api, expect, shot, sign_in
from tests.run.runkit import chat_echo

pytestmark = test_e2e.pytestmark  # the module's marks


def _token(server: str) -> dict[str, str]:
    import json

    req = urllib.request.Request(  # noqa: S310 - local server
        server + "/api/v1/login", data=f"username={ADMIN}&password={PASSWORD}".encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        return {"Authorization": f"Bearer {json.loads(r.read())['access_token']}"}


def test_flow_settings_publish_an_agent_with_card_overrides(page, server):
    auth = _token(server)
    status, folder = api(
        server,
        "POST",
        "/api/v1/projects/",
        body={"name": "agents", "auth_settings": {"auth_type": "apikey"}},
        headers=auth,
    )
    assert status == 201, folder
    status, flow = api(
        server,
        "POST",
        "/api/v1/flows/",
        body={"name": "Echo", "description": "Says it back", "data": chat_echo(), "folder_id": folder["id"]},
        headers=auth,
    )
    assert status == 201, flow
    card_path = f"/api/v1/a2a/{flow['id']}/.well-known/agent-card.json"
    assert api(server, "GET", card_path)[0] == 404  # a workflow: no card yet

    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    sign_in(page)
    page.goto(f"/flow/{flow['id']}")
    page.get_by_role("button", name="Settings").click()
    dialog = page.get_by_test_id("flow-settings")
    expect(dialog).to_be_visible()
    preview = dialog.get_by_test_id("card-preview")
    expect(preview).to_contain_text('"name": "Echo"')  # the preview before any override: the flow's own name
    expect(preview).to_contain_text('"apiKey"')  # the project needs a key: the card names the scheme

    # 1. an agent, published over A2A
    publish = dialog.get_by_label("Publish over A2A")
    expect(publish).to_be_disabled()  # a workflow cannot be published
    dialog.get_by_label("Flow type").select_option("agent")
    publish.check()

    # 2. overrides: bad JSON (the editor says so), a wrong member (the server says so), then a good one
    overrides = dialog.get_by_label("Card overrides")
    overrides.fill('{"name": ')
    expect(dialog.get_by_test_id("card-json-error")).to_contain_text("Not valid JSON")
    overrides.fill('{"name": "Parrot", "tags": "echo", "colour": "red"}')
    errors = dialog.get_by_test_id("card-errors")
    expect(errors).to_contain_text("a2a_card_overrides.colour: unknown member")
    expect(errors).to_contain_text("a2a_card_overrides.tags: must be a list of strings")
    expect(dialog.get_by_role("button", name="Save")).to_be_disabled()
    overrides.fill('{"name": "Parrot", "version": "2.1", "tags": ["echo"], "examples": ["hello"]}')
    expect(errors).to_have_count(0)
    expect(preview).to_contain_text('"name": "Parrot"')
    expect(preview).to_contain_text('"version": "2.1"')
    expect(preview).to_contain_text('"examples"')
    shot(page, "a2a-01-flow-settings")

    # 3. the card URL, copied
    url = dialog.get_by_test_id("card-url").inner_text().strip()
    assert url == f"{server}{card_path}"
    dialog.get_by_role("button", name="Copy URL").click()
    expect(dialog.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == url

    # 4. save, then the card over HTTP carries the overrides (and the preview was the card)
    dialog.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Flow settings saved")).to_be_visible()
    expect(dialog).to_have_count(0)
    status, card = api(server, "GET", card_path)
    assert status == 200, card
    assert card["name"] == "Parrot" and card["version"] == "2.1"
    assert card["description"] == "Says it back"
    assert card["skills"][0]["tags"] == ["echo"] and card["skills"][0]["examples"] == ["hello"]
    assert card["url"] == f"{server}/api/v1/a2a/{flow['id']}/jsonrpc"
    status, stored = api(server, "GET", f"/api/v1/flows/{flow['id']}", headers=auth)
    assert stored["flow_type"] == "agent" and stored["a2a_enabled"] is True

    # 5. reopened, the dialog shows what was saved
    page.get_by_role("button", name="Settings").click()
    expect(dialog.get_by_label("Flow type")).to_have_value("agent")
    expect(dialog.get_by_label("Publish over A2A")).to_be_checked()
    expect(dialog.get_by_test_id("card-preview")).to_contain_text('"name": "Parrot"')
