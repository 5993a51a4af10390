"""End-to-end governance: an admin blocks a component in the Governance page; a flow using it stops running
with a clear message and is greyed in the editor; the change log shows who did it. Same set-up as test_e2e."""

from __future__ import annotations

import json
import time

import pytest

from tests.editor.conftest import bearer
from tests.editor.test_e2e import ADMIN, api, cookie_header, expect, shot, sign_in
from tests.flowkit import reference_path


@pytest.fixture(scope="module")
def server(shared_server):
    """The shared app; its catalog policy put back as it was after the module (the test blocks a component for
    every user of the app: a failure half-way must not leave it blocked for the modules after)."""
    admin = bearer(shared_server)
    status, policy = api(shared_server, "GET", "/api/v1/catalog-policy/components", headers=admin)
    assert status == 200, policy
    yield shared_server
    status, body = api(
        shared_server, "PUT", "/api/v1/catalog-policy/components", body={"blocked": policy["blocked"]}, headers=admin
    )
    assert status == 200, body


def test_admin_blocks_a_component_and_the_flow_stops_running(page, server):
    sign_in(page)
    cookies = cookie_header(page)
    document = json.loads(reference_path("chat-echo.json").read_text())
    status, flow = api(
        server, "POST", "/api/v1/flows/", body={"name": "governed echo", "data": document["data"]}, cookies=cookies
    )
    assert status == 201, flow
    status, key = api(server, "POST", "/api/v1/api_key/", body={"name": "gov"}, cookies=cookies)
    run_headers = {"x-api-key": key["api_key"]}
    assert api(server, "POST", f"/api/v1/run/{flow['id']}", body={"input_value": "hi"}, headers=run_headers)[0] == 200

    page.get_by_role("link", name="Governance").click()
    table = page.get_by_test_id("gov-components")
    row = table.locator("tr", has_text="ChatOutput")
    expect(row).to_contain_text("used by")
    row.get_by_role("checkbox").check()
    shot(page, "20-governance-components")
    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_role("button", name="Save policy").click()
    expect(page.get_by_text("Policy saved.")).to_be_visible()

    # the worker that saved the policy refuses at once, the other within SERVICE_POLICIES_REFRESH_SECONDS (1 s)
    status, body = _run_until(server, flow["id"], run_headers, 403)
    assert status == 403 and "'ChatOutput'" in body["detail"] and "catalog policy" in body["detail"]
    time.sleep(1.2)  # one worker refuses; the editor's next reads may reach the other: past its refresh (1 s)

    page.goto(f"/flow/{flow['id']}")
    expect(page.get_by_test_id("node-ChatOutput")).to_contain_text("Blocked by the catalog policy")
    shot(page, "21-governance-blocked-node")

    page.goto("/admin/governance/changes")
    changes = page.get_by_test_id("gov-changes")
    expect(changes).to_contain_text(ADMIN)
    expect(changes).to_contain_text("ChatOutput")
    # unblock again from the page: the flow runs
    page.goto("/admin/governance/components")
    page.get_by_test_id("gov-components").locator("tr", has_text="ChatOutput").get_by_role("checkbox").uncheck()
    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_role("button", name="Save policy").click()
    expect(page.get_by_text("Policy saved.")).to_be_visible()
    # as for the block above: the other worker sees the change within the refresh interval (1 s)
    status, body = _run_until(server, flow["id"], run_headers, 200)
    assert status == 200, body


def _run_until(running, flow_id, headers, wanted, seconds=5.0):
    """Run the flow until it answers ``wanted`` or ``seconds`` pass: (status, body) of the last run."""
    deadline = time.monotonic() + seconds
    while True:
        status, body = api(running, "POST", f"/api/v1/run/{flow_id}", body={"input_value": "hi"}, headers=headers)
        if status == wanted or time.monotonic() > deadline:
            return status, body
        time.sleep(0.2)
