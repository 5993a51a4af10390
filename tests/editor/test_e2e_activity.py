"""End-to-end, Flow Activity and Usage (issue 30, the native traces and usage of plugins/observability): a new
flow's Activity is empty; a run over the API shows there (status, duration, session) and opens to its span
tree; a Playground run of a model flow (the local OpenAI-protocol server, with scripted token usage) shows
its tokens and its model call under its component; the Usage page shows that call per flow and per model,
and a superuser adds a flow budget (used and left shown) and deletes it. WCAG AA contrast of both pages,
light and dark (axe-core, as tests/editor/test_e2e_a11y.py).

The shared app, LLM server and pages of tests/editor/test_e2e_starters.py; signed in as a superuser of its own
(usage is counted per user).
"""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.editor.conftest import new_user, provider_for_admin, signed_in_context
from tests.editor.test_e2e import api, shot
from tests.editor.test_e2e_a11y import contrast_in_both_themes
from tests.editor.test_e2e_starters import (  # noqa: F401 - fixtures
    LLM_KEY,
    chat,
    from_starter,
    last_answer,
    llm,
    page,
    pytestmark,
    server,
)

#: a superuser of the module's own: usage and budgets are per user, and the shared app's admin has other
#: modules' model calls
USER = (f"activity-{uuid.uuid4().hex[:6]}", "Activity-Password-42")


@pytest.fixture(scope="module")
def auth(server, llm):  # noqa: F811 - the imported fixtures
    """``USER``'s bearer header; their global variables point the OpenAI Compatible provider at ``llm``."""
    new_user(server, *USER, superuser=True)
    return provider_for_admin(server, llm.url, LLM_KEY, user=USER)


@pytest.fixture(scope="module")
def context(browser, server, auth):  # noqa: F811 - the imported fixture
    """One browser context signed in as ``USER`` for the module."""
    ctx = signed_in_context(browser, server, user=USER, viewport={"width": 1280, "height": 800})
    yield ctx
    ctx.close()


def test_flow_activity_and_usage(page, server, auth, llm):  # noqa: F811
    problems: dict[str, list[str]] = {}

    # --- a chat echo flow: empty Activity, then a run over the API and its spans ------------------------------
    echo_id = from_starter(page, "Basic Chat Echo")
    page.get_by_test_id("activity-button").click()
    expect(page).to_have_url(re.compile(rf"/flow/{echo_id}/activity$"))
    expect(page.get_by_test_id("activity-empty")).to_be_visible()
    key = api(server, "POST", "/api/v1/api_key/", body={"name": "activity"}, headers=auth)[1]["api_key"]
    status, out = api(
        server,
        "POST",
        f"/api/v1/run/{echo_id}",
        body={"input_value": "ping for activity", "input_type": "chat", "output_type": "chat", "session_id": "s-act"},
        headers={"x-api-key": key},
    )
    assert status == 200, out
    page.get_by_role("button", name="Refresh").click()
    rows = page.get_by_test_id("run-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Success")
    expect(rows.first).to_contain_text("s-act")
    expect(page.get_by_test_id("runs-page")).to_have_text(re.compile(r"Page 1 of 1 · 1 run$"))
    rows.first.get_by_role("button").click()
    detail = page.get_by_test_id("run-detail")
    expect(detail).to_contain_text("ping for activity")
    spans = detail.get_by_test_id("span")
    expect(spans.first).to_be_visible()
    assert spans.count() >= 2, "the echo flow's input and output components are spans"
    expect(detail.get_by_test_id("span-tree")).to_contain_text("Chat Input")
    assert detail.locator('[data-span-type="llm"]').count() == 0
    contrast_in_both_themes(page, "activity", problems)

    # --- a model flow run in the Playground: its tokens and the model call under its component ---------------
    prompting_id = from_starter(page, "Basic Prompting")
    llm.reply("Traced answer.", usage={"prompt_tokens": 12, "completion_tokens": 5})
    chat(page, "trace me")
    expect(last_answer(page)).to_contain_text("Traced answer.", timeout=30_000)
    page.get_by_test_id("activity-button").click()
    rows = page.get_by_test_id("run-row")
    for _ in range(20):  # the run's trace is written as the run ends, a moment after its answer shows
        if rows.count():
            break
        page.wait_for_timeout(500)
        page.get_by_role("button", name="Refresh").click()
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td").nth(3)).to_have_text("17")
    rows.first.click()
    model = page.get_by_test_id("run-detail").locator('[data-span-type="llm"]')
    expect(model).to_have_count(1)
    expect(model).to_contain_text("17 tokens (12 in / 5 out)")
    # the model call is a child of its component's span
    expect(page.locator(".mon-span-children [data-span-type='llm']")).to_have_count(1)
    shot(page, "flow-activity")

    # --- Usage: the call per flow and per model; a budget added, shown with what is left, deleted -------------
    page.get_by_role("link", name="Usage", exact=True).click()
    expect(page).to_have_url(re.compile(r"/usage$"))
    totals = page.get_by_test_id("usage-totals")
    expect(totals).to_contain_text("Calls1")
    expect(totals).to_contain_text("Tokens in12")
    expect(totals).to_contain_text("Tokens out5")
    by_flow = page.get_by_test_id("usage-by-flow")
    expect(by_flow.locator("tbody tr")).to_have_count(1)
    expect(by_flow).to_contain_text("Basic Prompting")
    expect(page.get_by_test_id("usage-by-model").locator("tbody tr")).to_have_count(1)
    page.get_by_test_id("usage-period").select_option("today")
    expect(totals).to_contain_text("Calls1")

    form = page.get_by_role("form", name="New budget")
    form.get_by_label("Scope").select_option("flow")
    form.get_by_label("Id of the flow").fill(prompting_id)
    form.get_by_label("Limit").fill("1000")
    form.get_by_role("button", name="Add budget").click()
    budget = page.get_by_test_id("budget-row")
    expect(budget).to_have_count(1)
    expect(budget).to_contain_text("Basic Prompting")
    expect(budget.locator("td").nth(4)).to_have_text("17")
    expect(budget.locator("td").nth(5)).to_have_text("983")
    contrast_in_both_themes(page, "usage", problems)
    shot(page, "usage")
    budget.get_by_role("button", name=re.compile("^Delete")).click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_test_id("budget-row")).to_have_count(0)
    status, left = api(server, "GET", "/api/v1/monitor/budgets", headers=auth)
    assert status == 200 and left == []

    assert not any(problems.values()), problems
