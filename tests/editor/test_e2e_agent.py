"""End-to-end in the browser: the model picker fed by live discovery, streamed agent answers with
collapsible tool calls, and the approval card of a paused run (the service in a subprocess, the
local OpenAI-compatible test server as the provider)."""

from __future__ import annotations

import pytest

from tests.editor import test_e2e
from tests.editor.test_e2e import api, cookie_header, expect, shot, sign_in
from tests.models.test_agent_engine import APPROVAL, agent_flow

pytestmark = test_e2e.pytestmark  # the module's marks


@pytest.fixture(scope="module")
def server(llm_service):
    return llm_service


def _open(page, server, data, name):
    sign_in(page)
    status, flow = api(server, "POST", "/api/v1/flows/", body={"name": name, "data": data}, cookies=cookie_header(page))
    assert status == 201, flow
    page.goto(f"/flow/{flow['id']}")
    expect(page.locator(".react-flow__node").first).to_be_visible()


def test_model_picker_streamed_answer_and_tool_calls(page, server, llm):
    _open(page, server, agent_flow(), "agent demo")
    picker = page.get_by_test_id("node-LanguageModelComponent").get_by_test_id("model-picker")
    expect(picker.locator("option", has_text="test-model-large")).to_have_count(1)  # from GET /models
    llm.reply(tool_calls=[("evaluate_expression", {"expression": "6*7"})])
    llm.reply("It is 42.")
    page.get_by_role("button", name="Playground").click()
    box = page.get_by_label("Message", exact=True)
    box.fill("what is 6*7?")
    box.press("Enter")
    playground = page.get_by_test_id("playground")
    expect(playground.get_by_test_id("msg-ai").last).to_contain_text("It is 42.")
    call = playground.get_by_test_id("tool-call")
    expect(call).to_have_count(1)
    expect(call).to_contain_text("evaluate_expression")
    call.locator("summary").click()
    expect(call).to_contain_text('{"expression": "6*7"}')
    expect(call).to_contain_text("42")
    shot(page, "agent-tool-calls")


def test_approval_card_for_a_paused_run(page, server, llm):
    data = agent_flow(tools=[("TextInput", {"input_value": "x"})], approval=APPROVAL, stream=False)
    data["nodes"][-1]["data"]["node"]["template"]["input_value"]["tool_mode"] = True
    _open(page, server, data, "approval demo")
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
    page.get_by_role("button", name="Playground").click()
    box = page.get_by_label("Message", exact=True)
    box.fill("send it")
    box.press("Enter")
    card = page.get_by_test_id("approval-card")
    expect(card).to_be_visible()
    expect(card).to_contain_text("text_response")
    expect(card).to_contain_text('"input_value": "hello"')
    for name in ("Approve", "Reject", "Edit"):
        expect(card.get_by_role("button", name=name)).to_be_visible()
    card.get_by_role("button", name="Edit").click()
    expect(card.get_by_label("New arguments (JSON)")).to_be_visible()
    shot(page, "agent-approval-card")


def test_approving_follows_the_resumed_run_to_its_answer(page, server, llm):
    data = agent_flow(tools=[("TextInput", {"input_value": "x"})], approval=APPROVAL, stream=True)
    data["nodes"][-1]["data"]["node"]["template"]["input_value"]["tool_mode"] = True
    _open(page, server, data, "approval follow demo")
    llm.reply(tool_calls=[("text_response", {"input_value": "hello"})])
    page.get_by_role("button", name="Playground").click()
    box = page.get_by_label("Message", exact=True)
    box.fill("send hello")
    box.press("Enter")
    card = page.get_by_test_id("approval-card")
    expect(card).to_be_visible()
    expect(card).to_contain_text("text_response")
    llm.reply("I sent it: hello, all done.")  # streamed token by token by the resumed run
    card.get_by_role("button", name="Approve").click()
    playground = page.get_by_test_id("playground")
    expect(card).to_have_count(0)
    # the resumed run's tool call (with its result) and its answer appear without a reload
    call = playground.get_by_test_id("tool-call")
    expect(call).to_have_count(1)
    expect(call).to_contain_text("text_response")
    call.locator("summary").click()
    expect(call).to_contain_text("hello")
    answer = playground.get_by_test_id("msg-ai").filter(has_text="I sent it: hello, all done.")
    expect(answer).to_have_count(1)  # streamed, then stored by Chat Output: shown once
    expect(playground.get_by_role("button", name="Send")).to_be_visible()  # the run ended: Stop is gone
    expect(playground.locator(".cursor")).to_have_count(0)
    shot(page, "agent-approval-followed")
