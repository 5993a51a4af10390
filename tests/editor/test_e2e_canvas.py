"""End-to-end, as a user coming from the reference: what the canvas does with what is typed into a node,
with starters whose nodes ship without outputs, and while dragging a connection.

Same service, browser context and fixtures as tests/editor/test_e2e_starters.py (chromium from the system
package; the LLM is tests/openai_server.py).
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.editor.test_e2e import add_component, connect, shot
from tests.editor.test_e2e_starters import (  # noqa: F401 - fixtures
    auth,
    chat,
    context,
    from_starter,
    last_answer,
    llm,
    node_status,
    page,
    pytestmark,
    run_button,
    server,
)


def test_keyboard_connect_lists_where_an_output_can_go_and_says_why_not(page):  # noqa: F811 - the fixture
    """Without a mouse: Enter on a focused output handle lists the inputs, the canvas hints as while dragging, a
    refused choice says why (the drop's reason), Escape cancels back to the handle, and a choice connects."""
    from_starter(page, "Data Transformation")
    expect(page.locator(".react-flow__edge")).to_have_count(3)
    chat_in = page.get_by_test_id("node-ChatInput")
    message_out = chat_in.get_by_test_id("handle-out-message")
    json_only = page.get_by_test_id("node-Operations").get_by_test_id("handle-in-data")
    expect(message_out).to_have_attribute("tabindex", "0")
    expect(message_out).to_have_accessible_name("Connect output Chat Message of Chat Input")

    message_out.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Connect output Chat Message of Chat Input")
    expect(dialog).to_be_visible()
    expect(page.get_by_test_id("node-TypeConverterComponent").get_by_test_id("handle-in-input_data")).to_have_class(
        re.compile(r"\bhandle-compatible\b")
    )
    expect(json_only).to_have_class(re.compile(r"\bhandle-dimmed\b"))
    accepted = dialog.get_by_role("list", name="Accepted")
    refused = dialog.get_by_role("list", name="Not accepted")
    expect(accepted.get_by_role("button", name=re.compile(r"^Chat Output · Inputs"))).to_be_visible()
    # the JSON-only field is listed as not accepted; choosing it gives the reason a refused drop gives
    dialog.get_by_label("Find an input").fill("Data Operations")
    refused.get_by_role("button", name=re.compile(r"^Data Operations · JSON")).press("Enter")
    expect(dialog.get_by_role("alert")).to_have_text(
        "Not connected: Message cannot connect to a field that accepts Data, JSON."
    )
    shot(page, "canvas-keyboard-connect")
    # Escape cancels: no edge, no hints, focus back on the handle
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(page.locator(".handle-compatible, .handle-dimmed")).to_have_count(0)
    expect(message_out).to_be_focused()
    expect(page.locator(".react-flow__edge")).to_have_count(3)

    # Space opens it too; filter, Tab to the first accepted input, Enter connects
    page.keyboard.press(" ")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Find an input").fill("Chat Output")
    page.keyboard.press("Tab")
    expect(accepted.get_by_role("button").first).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    chat_in_id = chat_in.evaluate("el => el.closest('.react-flow__node').dataset.id")
    chat_out_id = page.get_by_test_id("node-ChatOutput").evaluate("el => el.closest('.react-flow__node').dataset.id")
    # Chat Output's input takes one edge: the new one replaced the old (as a drop does)
    new_edge = page.locator(f'.react-flow__edge[data-id^="reactflow__edge-{chat_in_id}"][data-id*="-{chat_out_id}"]')
    expect(new_edge).to_have_count(1)
    expect(page.locator(".react-flow__edge")).to_have_count(3)
    expect(message_out).to_be_focused()
    # an input handle works the other way round: it lists the outputs
    page.get_by_test_id("node-ChatOutput").get_by_test_id("handle-in-input_value").press("Enter")
    dialog = page.get_by_role("dialog", name=re.compile(r"^Connect input .+ of Chat Output$"))
    expect(
        dialog.get_by_role("list", name="Accepted").get_by_role("button", name=re.compile("^Chat Input ·"))
    ).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)


def test_run_keeps_what_was_typed_into_chat_input(page):  # noqa: F811 - the imported fixture
    """Run (and a node's ▷) send no input value, so the Chat Input's own text is what runs."""
    from_starter(page, "Basic Chat Echo")
    field = page.get_by_test_id("node-ChatInput").get_by_label("Input Text", exact=True)
    field.fill("typed on the canvas")
    field.blur()
    run_button(page)
    out = "ChatOutput-BBBBB"
    expect(node_status(page, out)).to_contain_text("Done", timeout=30_000)
    expect(page.get_by_test_id(f"preview-{out}")).to_have_text(re.compile("typed on the canvas"))
    # the node's own run button too: the Chat Input shows its text
    page.get_by_role("button", name=re.compile("^Run up to Chat Input")).click()
    expect(node_status(page, "ChatInput-AAAAA")).to_contain_text("Done", timeout=30_000)
    expect(page.get_by_test_id("preview-ChatInput-AAAAA")).to_have_text(re.compile("typed on the canvas"))
    shot(page, "canvas-run-typed-input")


def test_data_transformation_starter_draws_all_its_edges(page):  # noqa: F811 - the imported fixture
    """Two of its nodes ship empty ``outputs``: the catalog gives them their handles, so all 3 edges show."""
    from_starter(page, "Data Transformation")
    expect(page.locator(".react-flow__edge")).to_have_count(3)
    for node in ("node-TypeConverterComponent", "node-Operations"):
        expect(page.get_by_test_id(node).locator(".react-flow__handle.source")).to_have_count(1)
    # and after a reload (the saved flow keeps them)
    page.reload()
    expect(page.locator(".react-flow__edge")).to_have_count(3)
    shot(page, "canvas-data-transformation-edges")


def _centre(locator) -> tuple[float, float]:
    box = locator.bounding_box()
    assert box, locator
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_dragging_a_connection_shows_where_it_can_land(page):  # noqa: F811 - the imported fixture
    """Compatible handles are highlighted, incompatible ones dimmed (the engine's type rules), and a refused
    drop says why in a notification."""
    from_starter(page, "Data Transformation")
    expect(page.locator(".react-flow__edge")).to_have_count(3)
    message_out = page.get_by_test_id("node-ChatInput").get_by_test_id("handle-out-message")
    converter_in = page.get_by_test_id("node-TypeConverterComponent").get_by_test_id("handle-in-input_data")
    chat_out_in = page.get_by_test_id("node-ChatOutput").get_by_test_id("handle-in-input_value")
    json_only = page.get_by_test_id("node-Operations").get_by_test_id("handle-in-data")  # Data / JSON
    expect(message_out).not_to_have_class(re.compile("handle-(compatible|dimmed)"))

    page.mouse.move(*_centre(message_out))
    page.mouse.down()
    x, y = _centre(json_only)
    page.mouse.move(x - 60, y + 40, steps=8)
    # a Message output: the converter and Chat Output take it, the JSON-only field does not
    expect(converter_in).to_have_class(re.compile(r"\bhandle-compatible\b"))
    expect(chat_out_in).to_have_class(re.compile(r"\bhandle-compatible\b"))
    expect(json_only).to_have_class(re.compile(r"\bhandle-dimmed\b"))
    expect(page.get_by_test_id("node-Operations").get_by_test_id("handle-out-data_output")).to_have_class(
        re.compile(r"\bhandle-dimmed\b")
    )
    assert float(json_only.evaluate("el => getComputedStyle(el).opacity")) < 0.5
    shot(page, "canvas-drag-feedback")
    # dropped on the field that refuses it: no edge, and the reason
    page.mouse.move(x, y, steps=4)
    page.mouse.up()
    alert = page.get_by_role("alert").filter(has_text="Not connected")
    expect(alert).to_contain_text("Message cannot connect to a field that accepts Data, JSON")
    expect(page.locator(".react-flow__edge")).to_have_count(3)
    # the drag is over: no handle keeps a hint
    expect(page.locator(".handle-compatible, .handle-dimmed")).to_have_count(0)
    # the notification does not cover the playground's Send button
    page.get_by_role("button", name="Playground").click()
    send = page.get_by_test_id("playground").get_by_role("button", name="Send")
    expect(send).to_be_visible()
    a, b = alert.bounding_box(), send.bounding_box()
    assert a and b
    overlap = not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]) and not (
        a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]
    )
    assert not overlap, (a, b)


def toggle(box, on: bool) -> None:
    """Set a checkbox that a visible switch covers: the click goes to the input itself (a forced click at
    its coordinates can land on whatever moved there while fit view animates), then its state is checked."""
    if box.is_checked() != on:
        box.dispatch_event("click")
    (expect(box).to_be_checked() if on else expect(box).not_to_be_checked())


def build_agent_with_two_tools(page, model: str = "gpt-4o-mini") -> None:  # noqa: F811 - the page, not the fixture
    """From a blank canvas: Calculator and Current Date in Tool Mode feed an Agent (its own built-in tools off,
    ``model`` picked) between Chat Input and Chat Output; waits until saved."""
    page.goto("/")
    page.get_by_role("button", name="New flow").click()
    page.get_by_role("button", name=re.compile("Blank flow")).click()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    add_component(page, "CalculatorComponent", 120, 120)
    add_component(page, "CurrentDate", 120, 420)
    add_component(page, "ChatInput", 120, 640)
    add_component(page, "Agent", 520, 200)
    add_component(page, "ChatOutput", 900, 260)
    page.get_by_role("button", name="fit view").click()

    for key, name in (("CalculatorComponent", "Calculator"), ("CurrentDate", "Current Date")):
        node = page.get_by_test_id(f"node-{key}")
        node.locator(".gnode-title").click()  # the switch shows on the selected node (and on tools)
        toggle(node.get_by_label(f"Tool Mode of {name}"), True)
        expect(node.get_by_test_id("handle-out-component_as_tool")).to_have_count(1)
        expect(node.get_by_role("button", name="Actions (1/1)")).to_be_visible()
    calc = page.get_by_test_id("node-CalculatorComponent")
    expect(calc.get_by_text("Filled by the agent")).to_be_visible()  # the Expression is the tool's argument

    agent = page.get_by_test_id("node-Agent")
    agent.get_by_role("button", name=re.compile("Show advanced")).click()
    page.get_by_role("button", name="fit view").click()
    toggle(agent.get_by_label("Calculator", exact=True), False)  # the Agent's own built-in tools: off
    toggle(agent.get_by_label("Current Date", exact=True), False)
    agent.get_by_role("button", name="Hide advanced").click()
    picker = agent.get_by_test_id("model-picker")
    expect(picker.get_by_label("Language Model", exact=True).locator("option", has_text=model)).to_have_count(1)
    picker.get_by_label("Language Model", exact=True).select_option(model)
    page.get_by_role("button", name="fit view").click()

    connect(page, "CalculatorComponent", "component_as_tool", "Agent", "tools")
    connect(page, "CurrentDate", "component_as_tool", "Agent", "tools")
    connect(page, "ChatInput", "message", "Agent", "input_value")
    connect(page, "Agent", "response", "ChatOutput", "input_value")
    expect(page.locator(".react-flow__edge")).to_have_count(4)
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)


def test_an_agent_with_two_tools_from_a_blank_canvas(page, llm):  # noqa: F811 - the imported fixtures
    """Two components in Tool Mode (a Toolset output each) feed an Agent's tools; the agent calls one; the
    actions table turns an action off for the next run."""
    build_agent_with_two_tools(page)
    shot(page, "canvas-agent-two-tools")

    before = len(llm.chat_requests)
    llm.reply(tool_calls=[("evaluate_expression", {"expression": "6*7"})])
    llm.reply("6 times 7 is 42.")
    chat(page, "what is 6 times 7?")
    expect(last_answer(page)).to_contain_text("42", timeout=30_000)
    call = page.get_by_test_id("playground").get_by_test_id("tool-call")
    expect(call).to_have_count(1)
    call.locator("summary").click()
    expect(call).to_contain_text("42")  # the Calculator's own result
    tools = sorted(t["function"]["name"] for t in llm.chat_requests[before].get("tools", []))
    assert tools == ["evaluate_expression", "get_current_date"], tools

    # the actions table: Current Date's action off -> the agent no longer gets it
    page.get_by_test_id("node-CurrentDate").get_by_role("button", name=re.compile("Actions")).click()
    dialog = page.get_by_test_id("tool-actions")
    dialog.get_by_label("Enable get_current_date").uncheck()
    dialog.get_by_role("button", name="Save").click()
    expect(page.get_by_test_id("node-CurrentDate").get_by_role("button", name="Actions (0/1)")).to_be_visible()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    before = len(llm.chat_requests)
    llm.reply("Nothing to compute.")
    chat(page, "hello")
    expect(last_answer(page)).to_contain_text("Nothing to compute.", timeout=30_000)
    tools = [t["function"]["name"] for t in llm.chat_requests[before].get("tools", [])]
    assert tools == ["evaluate_expression"], tools


def _contrast(locator) -> float:
    """WCAG contrast of an element's text colour against the background of its nearest ``.note``."""
    return locator.evaluate(
        """(el) => {
          const parse = (c) => { const p = document.createElement('canvas').getContext('2d');
            p.fillStyle = '#000'; p.fillStyle = c; p.fillRect(0, 0, 1, 1); const d = p.getImageData(0, 0, 1, 1).data;
            return [d[0], d[1], d[2]]; };
          const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
          const lum = ([r, g, b]) => 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
          const fg = parse(getComputedStyle(el).color);
          const bg = parse(getComputedStyle(el.closest('.note')).backgroundColor);
          const [x, y] = [lum(fg), lum(bg)].sort((p, q) => q - p);
          return (x + 0.05) / (y + 0.05);
        }"""
    )


def test_notes_render_markdown_resize_and_stay_readable(page):  # noqa: F811 - the imported fixture
    page.goto("/")
    page.get_by_role("button", name="New flow").click()
    page.get_by_role("button", name=re.compile("Blank flow")).click()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    # pan far away first: the note must still land in view
    page.get_by_role("button", name="zoom out").click()
    page.mouse.move(700, 400)
    page.mouse.down()
    page.mouse.move(200, 100, steps=5)
    page.mouse.up()
    page.get_by_role("button", name="+ Add note").click()
    note = page.get_by_test_id("note-node")
    expect(note).to_be_visible()
    canvas = page.locator(".canvas").bounding_box()
    box = note.bounding_box()
    assert canvas and box
    assert canvas["x"] <= box["x"] and box["x"] + box["width"] <= canvas["x"] + canvas["width"], (canvas, box)
    assert canvas["y"] <= box["y"] and box["y"] + box["height"] <= canvas["y"] + canvas["height"], (canvas, box)
    assert box["width"] >= 200 and box["height"] >= 100, box

    editor = note.get_by_label("Note")
    editor.fill("# Plan\n\nThe **first** step, then `jq`.\n\n- read the [docs](https://example.com/docs)\n- run it")
    page.locator(".react-flow__pane").click(position={"x": 5, "y": 5})
    rendered = note.get_by_test_id("note-text")
    expect(rendered.locator("h3")).to_have_text("Plan")
    expect(rendered.locator("strong")).to_have_text("first")
    expect(rendered.locator("li")).to_have_count(2)
    expect(rendered.get_by_role("link", name="docs")).to_have_attribute("href", "https://example.com/docs")
    assert _contrast(rendered.locator("p")) >= 4.5

    # resize from the bottom-right corner; the size is saved with the flow
    note.click()
    corner = page.locator(".react-flow__resize-control.handle.bottom.right")
    cx, cy = _centre(corner)
    before = note.bounding_box()
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 120, cy + 80, steps=6)
    page.mouse.up()
    after = note.bounding_box()
    assert after["width"] > before["width"] + 60 and after["height"] > before["height"] + 40, (before, after)
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    size = "el => [parseFloat(el.style.width), parseFloat(el.style.height)]"  # in flow units, whatever the zoom
    resized = page.locator(".react-flow__node-noteNode").evaluate(size)
    assert resized[0] > 300, resized
    page.reload()
    expect(page.get_by_test_id("note-text").locator("h3")).to_have_text("Plan")
    reloaded = page.locator(".react-flow__node-noteNode").evaluate(size)
    assert [round(v) for v in reloaded] == [round(v) for v in resized], (resized, reloaded)

    # dark mode: the note keeps its paper and its text stays readable
    page.get_by_role("button", name="Switch to the dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert _contrast(page.get_by_test_id("note-text").locator("p")) >= 4.5
    shot(page, "canvas-note-dark")
    page.get_by_role("button", name="Switch to the light theme").click()


def test_rename_a_node_and_flow_settings(page, server, auth):  # noqa: F811 - the imported fixtures
    """A node's name and description edit in place; Settings set the flow's description, endpoint name,
    project (the flow moves) and lock (the canvas cannot be changed until unlocked)."""
    import uuid

    from tests.editor.test_e2e import api

    flow_id = from_starter(page, "Basic Chat Echo")
    page.get_by_test_id("title-ChatInput-AAAAA").dblclick()
    page.get_by_label("Name of Chat Input").fill("Question")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("title-ChatInput-AAAAA")).to_have_text("Question")
    page.get_by_test_id("desc-ChatInput-AAAAA").dblclick()
    page.get_by_label("Description of Question").fill("Where the user types.")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("desc-ChatInput-AAAAA")).to_have_text("Where the user types.")
    # a description can be emptied, and added again from the selected node's placeholder
    page.get_by_test_id("desc-ChatInput-AAAAA").dblclick()
    page.get_by_label("Description of Question").fill("")
    page.keyboard.press("Enter")
    page.get_by_test_id("title-ChatInput-AAAAA").click()
    expect(page.get_by_test_id("desc-ChatInput-AAAAA")).to_have_text("Add a description (double-click)")
    page.get_by_test_id("desc-ChatInput-AAAAA").dblclick()
    page.get_by_label("Description of Question").fill("Where the user types.")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("desc-ChatInput-AAAAA")).to_have_text("Where the user types.")
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)

    suffix = uuid.uuid4().hex[:6]
    status, project = api(
        server,
        "POST",
        "/api/v1/projects/",
        body={"name": f"Moved here {suffix}", "flows_list": [], "components_list": []},
        headers=auth,
    )
    assert status == 201, project
    page.reload()
    expect(page.get_by_test_id("title-ChatInput-AAAAA")).to_have_text("Question")
    page.get_by_role("button", name="Settings", exact=True).first.click()
    dialog = page.get_by_test_id("flow-settings")
    dialog.get_by_label("Description").fill("Echoes what you say.")
    dialog.get_by_label("Endpoint name").fill(f"echo-{suffix}")
    dialog.get_by_label("Project").select_option(label=f"Moved here {suffix}")
    dialog.get_by_label("Lock the flow").check()
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_test_id("locked-banner")).to_be_visible()

    status, stored = api(server, "GET", f"/api/v1/flows/{flow_id}", headers=auth)
    assert status == 200
    assert stored["description"] == "Echoes what you say." and stored["endpoint_name"] == f"echo-{suffix}"
    assert stored["locked"] is True and stored["folder_id"] == project["id"]
    # locked: Delete does nothing to the canvas
    page.get_by_test_id("title-ChatOutput-BBBBB").click()
    page.keyboard.press("Delete")
    expect(page.get_by_test_id("node-ChatOutput")).to_have_count(1)
    shot(page, "canvas-flow-locked")
