"""End-to-end, the editor's Automation dialog (issue 32, plugins/triggers): a flow run over the API shows in
its Executions with its input and output, and is retried from there (a new execution, attempt 2, trigger
``retry``); its input opens in the Playground; a schedule is created and shows its next five fire times, is
paused and deleted; a signed webhook shows its URL and its secret once, a delivery signed with that secret
runs the flow, a rotation makes a new secret and refuses the old one, and a disabled webhook refuses all;
the retry policy and error flow are saved. WCAG AA contrast of the tabs, light and dark (axe-core, as
tests/editor/test_e2e_a11y.py).

Same service, browser context and fixtures as tests/editor/test_e2e_starters.py (chromium from the system package).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
import urllib.error
import urllib.request

from playwright.sync_api import expect

from tests.editor.test_e2e import api, shot
from tests.editor.test_e2e_a11y import contrast_in_both_themes
from tests.editor.test_e2e_starters import (  # noqa: F401 - fixtures
    auth,
    context,
    from_starter,
    llm,
    page,
    pytestmark,
    server,
)


def _deliver(base: str, url_path: str, secret: str, body: bytes) -> int:
    ts = str(int(time.time()))
    sig = "v1=" + hmac.new(secret.encode(), f"v1:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    req = urllib.request.Request(base + url_path, data=body, method="POST")  # noqa: S310 - local server
    req.add_header("Content-Type", "application/json")
    req.add_header("X-Service-Timestamp", ts)
    req.add_header("X-Service-Signature", sig)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def _open(pg, tab: str):
    pg.get_by_role("button", name="Automation", exact=True).click()
    dialog = pg.get_by_test_id("automation-dialog")
    dialog.get_by_role("tab", name=tab, exact=True).click()
    return dialog


def test_executions_schedules_and_signed_webhooks_from_the_editor(page, server, auth):  # noqa: F811
    flow_id = from_starter(page, "Basic Chat Echo")
    key = api(server, "POST", "/api/v1/api_key/", body={"name": "triggers"}, headers=auth)[1]["api_key"]
    status, out = api(
        server,
        "POST",
        f"/api/v1/run/{flow_id}",
        body={"input_value": "ping from the API", "input_type": "chat", "output_type": "chat"},
        headers={"x-api-key": key},
    )
    assert status == 200, out
    problems: dict[str, list[str]] = {}

    # --- executions: the run, its details, a retry ---------------------------------------------------------
    dialog = _open(page, "Executions")
    rows = dialog.get_by_test_id("execution-row")
    expect(rows).to_have_count(1, timeout=15_000)  # recorded by whichever process ran it: the list polls
    expect(rows.first).to_contain_text("ok")
    expect(rows.first).to_contain_text("run")
    contrast_in_both_themes(page, "executions", problems)
    rows.first.get_by_role("button", name=re.compile("^Details")).click()
    detail = dialog.get_by_test_id("execution-detail")
    expect(detail.get_by_test_id("execution-input")).to_have_text("ping from the API")
    expect(detail.get_by_test_id("execution-output")).to_contain_text("ping from the API")
    shot(page, "triggers-execution-detail")
    detail.get_by_role("button", name="Retry", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Retry started (attempt 2)")).to_be_visible()
    expect(detail).to_contain_text("retry of")
    # the retry runs as a job: the detail follows it until it is done
    expect(detail.locator(".pill")).to_have_text("ok", timeout=30_000)
    expect(detail.get_by_test_id("execution-output")).to_contain_text("ping from the API")
    detail.get_by_role("button", name="Back to the list").click()
    expect(rows).to_have_count(2, timeout=15_000)
    dialog.get_by_label("Filter by trigger").select_option("retry")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("2")
    dialog.get_by_label("Filter by status").select_option("error")
    expect(dialog.get_by_test_id("executions-empty")).to_contain_text("match these filters")
    dialog.get_by_label("Filter by status").select_option("")
    dialog.get_by_label("Filter by trigger").select_option("")
    # its input, in the Playground
    rows.first.get_by_role("button", name=re.compile("^Details")).click()
    dialog.get_by_role("button", name="Open the input in the Playground").click()
    expect(page.get_by_test_id("automation-dialog")).to_have_count(0)
    expect(page.get_by_test_id("playground").get_by_label("Message", exact=True)).to_have_value("ping from the API")
    page.get_by_role("button", name="Close the playground").click()

    # --- schedules -----------------------------------------------------------------------------------------
    dialog = _open(page, "Schedules")
    dialog.get_by_role("button", name="New schedule").click()
    dialog.get_by_label("Schedule name").fill("weekday mornings")
    dialog.get_by_label("On a cron expression").check()
    dialog.get_by_label("Cron expression", exact=True).fill("0 9 * * 1-5")
    dialog.get_by_label("Time zone").select_option("Europe/Paris")
    dialog.get_by_label("Schedule input value").fill("good morning")
    dialog.get_by_role("button", name="Create schedule").click()
    row = dialog.get_by_test_id("schedule-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("cron 0 9 * * 1-5 (Europe/Paris)")
    expect(row).to_contain_text("good morning")
    times = row.get_by_test_id("schedule-next-times").locator("time")
    expect(times).to_have_count(5)
    stamps = [times.nth(i).get_attribute("datetime") for i in range(5)]
    assert stamps == sorted(stamps) and len(set(stamps)) == 5, stamps
    contrast_in_both_themes(page, "schedules", problems)
    shot(page, "triggers-schedules")
    status, listed = api(server, "GET", f"/api/v1/schedules?flow_id={flow_id}", headers=auth)
    assert status == 200 and listed[0]["next_fire_times"] == stamps and listed[0]["timezone"] == "Europe/Paris"
    # a bad cron: the server's 422 in words, nothing created
    dialog.get_by_role("button", name="New schedule").click()
    dialog.get_by_label("On a cron expression").check()
    dialog.get_by_label("Cron expression", exact=True).fill("61 * * * *")
    dialog.get_by_role("button", name="Create schedule").click()
    expect(dialog.get_by_role("alert")).to_be_visible()
    expect(row).to_have_count(1)
    dialog.get_by_role("button", name="Cancel").click()
    row.get_by_role("button", name="Pause").click()
    expect(row).to_contain_text("paused")
    expect(row.get_by_test_id("schedule-next-times")).to_have_count(0)
    row.get_by_role("button", name="Resume").click()
    expect(row.get_by_test_id("schedule-next-times").locator("time")).to_have_count(5)
    row.get_by_role("button", name="Delete schedule weekday mornings").click()
    page.get_by_role("dialog", name="Delete schedule").get_by_role("button", name="Delete").click()
    expect(row).to_have_count(0)
    assert api(server, "GET", f"/api/v1/schedules?flow_id={flow_id}", headers=auth) == (200, [])

    # --- signed webhooks -----------------------------------------------------------------------------------
    dialog.get_by_role("tab", name="Signed webhooks").click()
    dialog.get_by_label("Webhook name").fill("crm")
    dialog.get_by_role("button", name="Create signed webhook").click()
    secret = dialog.get_by_test_id("trigger-secret-value").inner_text().strip()
    assert len(secret) >= 32, secret
    url = dialog.get_by_test_id("trigger-url").inner_text().strip()
    assert url.startswith(server + "/api/v1/triggers/ingress/webhook/"), url
    path = url[len(server) :]
    contrast_in_both_themes(page, "signed webhooks", problems)
    shot(page, "triggers-webhook-secret")
    assert _deliver(server, path, secret, b'{"text": "signed hello"}') == 202
    assert _deliver(server, path, "not-the-secret", b'{"text": "forged"}') == 404
    # shown once: gone after "copied", and not in the list nor after reopening
    dialog.get_by_role("button", name="I have copied it").click()
    expect(dialog.get_by_test_id("trigger-secret")).to_have_count(0)
    assert secret not in page.content()
    page.keyboard.press("Escape")
    dialog = _open(page, "Signed webhooks")
    expect(dialog.get_by_test_id("trigger-row")).to_have_count(1)
    assert secret not in page.content()
    # rotate: a new secret, once; the old one is refused
    dialog.get_by_role("button", name="Rotate the secret of crm").click()
    page.get_by_role("dialog", name="Rotate the signing secret").get_by_role("button", name="Rotate").click()
    rotated = dialog.get_by_test_id("trigger-secret-value").inner_text().strip()
    assert rotated and rotated != secret
    assert _deliver(server, path, secret, b'{"text": "old"}') == 404
    assert _deliver(server, path, rotated, b'{"text": "new"}') == 202
    # disable: everything refused
    dialog.get_by_test_id("trigger-row").get_by_role("button", name="Disable").click()
    expect(dialog.get_by_test_id("trigger-row")).to_contain_text("disabled")
    assert _deliver(server, path, rotated, b'{"text": "while disabled"}') == 404
    # the signed deliveries are executions of the flow (trigger "trigger")
    dialog.get_by_role("tab", name="Executions").click()
    dialog.get_by_label("Filter by trigger").select_option("trigger")
    expect(dialog.get_by_test_id("execution-row")).to_have_count(2, timeout=15_000)

    # --- retry policy and error flow -----------------------------------------------------------------------
    status, other = api(
        server, "POST", "/api/v1/flows/", body={"name": "on failure", "data": {"nodes": [], "edges": []}}, headers=auth
    )
    assert status == 201, other
    dialog.get_by_role("tab", name="Retry policy").click()
    policy = dialog.get_by_test_id("policy-tab")
    expect(policy.get_by_label("Attempts")).to_have_value("1")
    policy.get_by_label("Attempts").fill("11")
    policy.get_by_role("button", name="Save policy").click()
    expect(policy.get_by_role("alert")).to_contain_text("1 to 10")
    policy.get_by_label("Attempts").fill("3")
    policy.get_by_label("Backoff seconds").fill("5")
    policy.get_by_label("Error flow").select_option(label="on failure")
    # not the flow itself (by its id: the shared app holds other modules' flows of the same name)
    expect(policy.get_by_label("Error flow").locator(f'option[value="{flow_id}"]')).to_have_count(0)
    contrast_in_both_themes(page, "retry policy", problems)
    policy.get_by_role("button", name="Save policy").click()
    expect(page.get_by_role("status").filter(has_text="Retry policy saved")).to_be_visible()
    status, saved = api(server, "GET", f"/api/v1/executions/policies/{flow_id}", headers=auth)
    assert (status, saved["attempts"], saved["backoff_s"], saved["error_flow_id"]) == (200, 3, 5.0, other["id"]), saved

    failing = {k: v for k, v in problems.items() if v}
    assert not failing, "\n".join(f"{screen}: {line}" for screen, lines in failing.items() for line in lines)
