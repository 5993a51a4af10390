"""Issue 28's "Done when", tried as a newcomer coming from the reference would, in one browser session and
without the docs: on a service with no model provider, set one up (the local OpenAI-protocol test server),
build an agent with two tools from a blank canvas, run it in the Playground, inspect the message log, group
two components (the agent still gets both tools), rename a node and move the flow to another project.

Each step reuses the helper of the test that covers it in depth (tests/editor/test_e2e_providers.py,
test_e2e_canvas.py); this test checks that they hold together. Screenshots: test-artifacts/e2e-walkthrough-*.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.editor.conftest import bearer, clear_variables, unique
from tests.editor.test_e2e import api, cookie_header, pytestmark, running_service, shot, sign_in  # noqa: F401
from tests.editor.test_e2e_canvas import build_agent_with_two_tools
from tests.editor.test_e2e_providers import set_up_provider
from tests.editor.test_e2e_starters import chat, last_answer, node_status
from tests.openai_server import OpenAIServer

KEY = "sk-walkthrough"


@pytest.fixture(scope="module")
def llm():
    with OpenAIServer(models=["gpt-4o-mini", "test-model"], api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def server(shared_server):
    """The shared app: no provider from the environment, and no global variable of the admin (an earlier
    module may have set a provider up): the newcomer sets one up in the editor."""
    clear_variables(shared_server, bearer(shared_server))
    return shared_server


def _tools_offered(llm, since: int) -> list[str]:
    return sorted(t["function"]["name"] for t in llm.chat_requests[since].get("tools", []))


def test_a_newcomer_builds_runs_inspects_groups_renames_and_moves(page, server, llm):
    sign_in(page)
    # 1. a model provider, from Settings
    set_up_provider(page, llm.url, KEY)
    shot(page, "walkthrough-01-provider")

    # 2. an agent with two tools, from a blank canvas
    build_agent_with_two_tools(page)
    flow_id = page.url.rsplit("/", 1)[1]
    shot(page, "walkthrough-02-agent-two-tools")

    # 3. run it in the Playground: the agent calls the Calculator and answers
    before = len(llm.chat_requests)
    llm.reply(tool_calls=[("evaluate_expression", {"expression": "6*7"})])
    llm.reply("6 times 7 is 42.")
    chat(page, "what is 6 times 7?")
    expect(last_answer(page)).to_contain_text("6 times 7 is 42.", timeout=30_000)
    assert _tools_offered(llm, before) == ["evaluate_expression", "get_current_date"]
    call = page.get_by_test_id("playground").get_by_test_id("tool-call")
    expect(call).to_have_count(1)
    call.locator("summary").click()
    expect(call).to_contain_text("42")
    shot(page, "walkthrough-03-playground")

    # 4. the message log: the question and the answer, stored
    page.get_by_test_id("playground").get_by_role("button", name="Message logs").click()
    logs = page.get_by_test_id("message-logs")
    rows = logs.get_by_test_id("message-row")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="what is 6 times 7?")).to_have_count(1)
    expect(rows.filter(has_text="6 times 7 is 42.")).to_have_count(1)
    shot(page, "walkthrough-04-message-logs")
    page.keyboard.press("Escape")
    expect(logs).to_have_count(0)
    page.keyboard.press("Escape")  # the Playground too

    # 5. group the two tools (Ctrl+G): one group node, its two tool outputs still wired to the agent
    page.get_by_role("button", name="fit view").click()
    page.get_by_test_id("node-CalculatorComponent").locator(".gnode-title").click()
    page.keyboard.down("Shift")
    page.get_by_test_id("node-CurrentDate").locator(".gnode-title").click()
    page.keyboard.up("Shift")
    expect(page.get_by_test_id("selection-bar")).to_contain_text("2 selected")
    page.keyboard.press("Control+g")
    group = page.get_by_test_id("node-GroupNode")
    expect(group).to_have_count(1)
    expect(page.get_by_test_id("node-CalculatorComponent")).to_have_count(0)
    expect(page.locator(".react-flow__edge")).to_have_count(4)
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    group_id = group.evaluate("el => el.closest('.react-flow__node').dataset.id")
    # the grouped flow runs: the agent is offered both tools again, and the group shows its run
    before = len(llm.chat_requests)
    llm.reply("Grouped and still here.")
    chat(page, "are you there?")
    expect(last_answer(page)).to_contain_text("Grouped and still here.", timeout=30_000)
    assert _tools_offered(llm, before) == ["evaluate_expression", "get_current_date"]
    expect(node_status(page, group_id)).to_contain_text("Done")
    page.keyboard.press("Escape")
    shot(page, "walkthrough-05-grouped")

    # 6. rename a node in place
    title = page.get_by_test_id("node-Agent").locator(".gnode-title")
    title.dblclick()
    page.get_by_label("Name of Agent").fill("Math helper")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("node-Agent").locator(".gnode-title")).to_have_text("Math helper")
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    shot(page, "walkthrough-06-renamed")

    # 7. move the flow to a new project, from the Home page
    name = page.get_by_test_id("flow-name").inner_text()
    project = unique("Agents")  # the shared app has other modules' projects (the A2A module's "agents")
    page.get_by_role("link", name="Flows").click()
    page.get_by_role("button", name="New project").click()
    page.get_by_role("dialog").get_by_label("Name", exact=True).fill(project)
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name=project)).to_be_visible()
    expect(page.locator(".flow-card")).to_have_count(0)
    page.get_by_role("link", name=re.compile("^Starter Project|^My Projects|^My Collection")).first.click()
    page.get_by_role("button", name=f"Move {name}", exact=True).click()  # not "{name} (1)"
    dialog = page.get_by_test_id("move-dialog")
    dialog.get_by_label("To the project").select_option(label=project)
    dialog.get_by_role("button", name="Move").click()
    expect(dialog).to_have_count(0)
    page.get_by_role("link", name=project).click()
    expect(page.get_by_role("heading", name=project)).to_be_visible()
    expect(page.locator(".flow-card")).to_have_count(1)
    expect(page.locator(".flow-card")).to_contain_text(name)
    shot(page, "walkthrough-07-moved")

    # what was done is what is stored
    status, stored = api(server, "GET", f"/api/v1/flows/{flow_id}", cookies=cookie_header(page))
    assert status == 200, stored
    status, projects = api(server, "GET", "/api/v1/projects/", cookies=cookie_header(page))
    assert stored["folder_id"] == next(p["id"] for p in projects if p["name"] == project)
    nodes = {n["data"]["type"]: n for n in stored["data"]["nodes"]}
    assert nodes["Agent"]["data"]["node"]["display_name"] == "Math helper"
    inner = nodes["GroupNode"]["data"]["node"]["flow"]["data"]["nodes"]
    assert sorted(n["data"]["type"] for n in inner) == ["CalculatorComponent", "CurrentDate"]
