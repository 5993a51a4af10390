"""End-to-end, as a user coming from the reference: what the canvas does with what is typed into a node,
with starters whose nodes ship without outputs, and while dragging a connection.

Same service, browser context and fixtures as tests/editor/test_e2e_starters.py (chromium from the system
package; the LLM is tests/openai_server.py).
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.editor.test_e2e import shot
from tests.editor.test_e2e_starters import (  # noqa: F401 - fixtures
    auth,
    browser,
    context,
    from_starter,
    llm,
    node_status,
    page,
    pytestmark,
    run_button,
    server,
)


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
