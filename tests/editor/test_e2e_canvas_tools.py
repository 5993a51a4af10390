"""End-to-end, the reference's power-user canvas: grouping (Ctrl+G, ungroup; a saved group round-trips and
runs), the node toolbar (code view, controls, freeze, minimise, docs).

Same service, browser context and fixtures as tests/editor/test_e2e_starters.py.
"""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from tests.editor.test_e2e import api, shot
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
    server,
    wait_for,
)

IN, OUT = "ChatInput-AAAAA", "ChatOutput-BBBBB"


def _run(base: str, headers: dict, flow_id: str, text: str) -> str:
    status, key = api(base, "POST", "/api/v1/api_key/", body={"name": "groups"}, headers=headers)
    assert status in (200, 201), key
    run_headers = {"x-api-key": key["api_key"]}
    status, result = api(base, "POST", f"/api/v1/run/{flow_id}", body={"input_value": text}, headers=run_headers)
    assert status == 200, result
    return json.dumps(result)


def _select_both(pg) -> None:
    pg.get_by_test_id(f"title-{IN}").click()
    pg.keyboard.down("Shift")
    pg.get_by_test_id(f"title-{OUT}").click()
    pg.keyboard.up("Shift")


def test_group_components_round_trip_and_run(page, server, auth):  # noqa: F811 - the imported fixtures
    """Ctrl+G makes one group node exposing the inner nodes' free fields; it saves in the reference's shape,
    runs (API and Playground), survives export and import, and ungroups back to the same graph."""
    flow_id = from_starter(page, "Basic Chat Echo")
    _select_both(page)
    expect(page.get_by_test_id("selection-bar")).to_contain_text("2 selected")
    page.keyboard.press("Control+g")
    group = page.get_by_test_id("node-GroupNode")
    expect(group).to_have_count(1)
    expect(page.get_by_test_id("node-ChatInput")).to_have_count(0)
    # the inner fields that are free show on the group, named with their component
    expect(group.get_by_text(re.compile(r"Input Text\s*· Chat Input"))).to_be_visible()
    expect(group.get_by_label("Input Text", exact=True)).to_be_visible()
    group.get_by_label("Input Text", exact=True).fill("set on the group")
    group.get_by_label("Input Text", exact=True).blur()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)

    status, stored = api(server, "GET", f"/api/v1/flows/{flow_id}", headers=auth)
    assert status == 200
    (g,) = [n for n in stored["data"]["nodes"] if n.get("type") != "noteNode"]
    inner = g["data"]["node"]["flow"]["data"]
    assert sorted(n["id"] for n in inner["nodes"]) == [IN, OUT] and len(inner["edges"]) == 1
    field = g["data"]["node"]["template"][f"input_value_{IN}"]
    assert field["proxy"] == {"id": IN, "field": "input_value"} and field["value"] == "set on the group"
    assert [o["proxy"]["id"] for o in g["data"]["node"]["outputs"]] == [OUT]
    # it runs, through the group's proxies
    assert "through the group" in _run(server, auth, flow_id, "through the group")
    chat(page, "typed in the playground")
    expect(last_answer(page)).to_contain_text("typed in the playground", timeout=30_000)
    # the group shows its run as a component does: its inner components' status, and the last one's output
    expect(node_status(page, g["id"])).to_contain_text("Done")
    expect(group).to_have_class(re.compile(r"\brun-done\b"))
    expect(page.get_by_test_id(f"preview-{g['id']}")).to_contain_text("typed in the playground")
    shot(page, "canvas-group")

    # export and import: the copy holds the group and runs
    status, imported = api(
        server, "POST", "/api/v1/flows/", body={"name": "grouped copy", "data": stored["data"]}, headers=auth
    )
    assert status == 201, imported
    assert "from the copy" in _run(server, auth, imported["id"], "from the copy")
    page.goto(f"/flow/{imported['id']}")
    expect(page.get_by_test_id("node-GroupNode")).to_have_count(1)

    # ungroup (the node toolbar): the two components and their edge come back, with the group's value
    page.goto(f"/flow/{flow_id}")
    page.get_by_test_id("node-GroupNode").locator(".gnode-head").click()
    page.get_by_role("button", name="Ungroup").click()
    expect(page.get_by_test_id("node-GroupNode")).to_have_count(0)
    expect(page.get_by_test_id("node-ChatInput")).to_have_count(1)
    expect(page.locator(".react-flow__edge")).to_have_count(1)
    expect(page.get_by_test_id("node-ChatInput").get_by_label("Input Text", exact=True)).to_have_value(
        "set on the group"
    )
    # Ctrl+Z brings the group back
    page.locator(".react-flow__pane").click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+z")
    expect(page.get_by_test_id("node-GroupNode")).to_have_count(1)


def test_node_toolbar_controls_freeze_minimise_docs_and_code(page, server, auth):  # noqa: F811 - fixtures
    flow_id = from_starter(page, "Basic Chat Echo")
    chat_in = page.get_by_test_id("node-ChatInput")
    page.get_by_test_id(f"title-{IN}").click()
    toolbar = page.locator(".node-toolbar")
    expect(toolbar.get_by_role("link", name="Docs")).to_have_attribute("href", re.compile(r"^https://"))
    # controls: hide a field from the node (it goes under "Show advanced"), its value kept
    toolbar.get_by_role("button", name="Controls").click()
    dialog = page.get_by_test_id("controls")
    dialog.get_by_label("Show Input Text on the node").uncheck()
    dialog.get_by_role("button", name="Apply").click()
    expect(chat_in.get_by_label("Input Text", exact=True)).to_have_count(0)
    chat_in.get_by_role("button", name=re.compile("Show advanced")).click()
    expect(chat_in.get_by_label("Input Text", exact=True)).to_be_visible()
    # freeze
    toolbar.get_by_role("button", name="Freeze").click()
    expect(page.get_by_test_id(f"frozen-{IN}")).to_be_visible()
    expect(toolbar.get_by_role("button", name="Unfreeze")).to_have_attribute("aria-pressed", "true")
    # minimise: only the header, the edge stays drawn
    toolbar.get_by_role("button", name="Minimise").click()
    expect(chat_in.locator(".gfield-label")).to_have_count(0)
    expect(page.locator(".react-flow__edge")).to_have_count(1)
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    status, stored = api(server, "GET", f"/api/v1/flows/{flow_id}", headers=auth)
    node = next(n for n in stored["data"]["nodes"] if n["id"] == IN)
    assert node["data"]["node"]["frozen"] is True and node["data"]["showNode"] is False
    assert node["data"]["node"]["template"]["input_value"]["advanced"] is True
    page.reload()
    expect(page.get_by_test_id(f"frozen-{IN}")).to_be_visible()
    expect(chat_in.locator(".gfield-label")).to_have_count(0)
    page.get_by_test_id(f"title-{IN}").click()
    toolbar.get_by_role("button", name="Expand").click()
    expect(chat_in.get_by_role("button", name=re.compile("Show advanced"))).to_be_visible()
    shot(page, "canvas-node-toolbar")

    # code view: a node imported with its code shows it read-only (the editor never runs it)
    stored["data"]["nodes"][0]["data"]["node"]["template"]["code"] = {
        "type": "code",
        "value": "class ChatInput:\n    pass\n",
        "show": True,
    }
    body = {"name": "with code", "data": stored["data"]}
    status, copy = api(server, "POST", "/api/v1/flows/", body=body, headers=auth)
    assert status == 201, copy
    page.goto(f"/flow/{copy['id']}")
    page.get_by_test_id(f"title-{stored['data']['nodes'][0]['id']}").click()
    page.locator(".node-toolbar").get_by_role("button", name="Code").click()
    view = page.get_by_test_id("code-view")
    expect(view.get_by_test_id("code-text")).to_have_text(re.compile("class ChatInput"))
    expect(view.locator("textarea, input")).to_have_count(0)
    page.keyboard.press("Escape")
    expect(view).to_have_count(0)


def _boxes(pg) -> list[dict]:
    return pg.evaluate(
        """() => [...document.querySelectorAll('.react-flow__node-genericNode')].map((el) => {
          const r = el.getBoundingClientRect(); return {id: el.dataset.id, x: r.x, y: r.y, w: r.width, h: r.height};
        })"""
    )


def _overlaps(boxes: list[dict]) -> list[tuple[str, str]]:
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                a["x"] < b["x"] + b["w"]
                and b["x"] < a["x"] + a["w"]
                and a["y"] < b["y"] + b["h"]
                and b["y"] < a["y"] + a["h"]
            ):
                out.append((a["id"], b["id"]))
    return out


def test_overlapping_components_move_apart_on_load_and_the_flow_name_shows_at_1280x720(page, server, auth):  # noqa: F811
    """Components saved on top of each other (positions made for other node sizes) are moved apart once the
    canvas has measured them, and the move is saved; the flow name keeps its room in the toolbar at 1280x720."""
    from tests.flowkit import edge, flow, node

    a = node("ChatInput", "ChatInput-AAAAA")
    b = node("ChatOutput", "ChatOutput-BBBBB")
    b["position"] = {"x": 60, "y": 40}
    status, created = api(
        server,
        "POST",
        "/api/v1/flows/",
        body={"name": "Overlapping components in a flow", "data": flow([a, b], [edge(a, "message", b, "input_value")])},
        headers=auth,
    )
    assert status == 201, created
    from_starter(page, "Basic Chat Echo")  # signs in through the app
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"/flow/{created['id']}")
    expect(page.get_by_test_id("node-ChatOutput")).to_be_visible()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    # a just-opened flow already says "Saved" before the canvas has measured and repaired it: wait for the repair
    wait_for(lambda: _overlaps(_boxes(page)) == [])

    def saved_y() -> bool:
        status, stored = api(server, "GET", f"/api/v1/flows/{created['id']}", headers=auth)
        assert status == 200
        moved = next(n for n in stored["data"]["nodes"] if n["id"] == "ChatOutput-BBBBB")
        return moved["position"]["y"] > 40  # the move is saved

    wait_for(saved_y)
    name = page.get_by_test_id("flow-name").bounding_box()
    assert name and name["width"] >= 80, name
    shot(page, "canvas-overlap-fixed-1280x720")
