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
