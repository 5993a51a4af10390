"""``python -m bench.editor_fps``: frames per second of the editor's canvas with a generated 300-node flow.

Starts ``service run`` (as the browser tests do), signs in, saves a flow of ``--nodes`` Text Input components
in a grid (each row chained by edges), opens it in Debian's chromium (Playwright, headless) at 1440x900, and
counts ``requestAnimationFrame`` callbacks while the canvas is panned (mouse drags) and zoomed (wheel):

* at the overview (the editor's fit view: every node on screen), and
* at 100% zoom (a part of the flow on screen).

Next to the frame rates it times what the browser tests used to assert with wall-clock limits (which failed on
a loaded machine): the first load of the sign-in page (navigation timing ``load`` and the time until the form
shows, a fresh browser context each round) and the opening of the 300-node flow (until the first node shows,
and until every node is drawn). Medians of ``--rounds``.

``--trace PATH`` also writes a Chromium performance trace of one overview pan (open it in chrome://tracing or
the DevTools Performance panel) to see what each frame costs.

A measure, not a test: nothing fails on a low figure. The machine's load average is printed with the figures
(other work on a shared machine lowers them). Writes ``bench/editor_fps.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

COUNTER = """
() => {
  window.__frames = [];
  const tick = (t) => { window.__frames.push(t); if (!window.__stop) requestAnimationFrame(tick); };
  window.__stop = false;
  requestAnimationFrame(tick);
}
"""


def generated_flow(count: int) -> dict[str, Any]:
    from tests.flowkit import edge, flow, node

    per_row = 20
    nodes = []
    for i in range(count):
        n = node("TextInput", f"TextInput-{i:05d}", input_value=f"text {i}")
        n["position"] = {"x": (i % per_row) * 380, "y": (i // per_row) * 320}
        nodes.append(n)
    edges = [edge(nodes[i], "text", nodes[i + 1], "input_value") for i in range(count - 1) if (i + 1) % per_row]
    return flow(nodes, edges)


def _fps(page: Any, action: Any) -> float:
    page.evaluate(COUNTER)
    start = time.perf_counter()
    action()
    elapsed = time.perf_counter() - start
    frames = page.evaluate("() => { window.__stop = true; return window.__frames.length; }")
    return frames / elapsed if elapsed else 0.0


def _pan(page: Any, box: dict[str, float], moves: int = 90) -> None:
    x, y = box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.6
    page.mouse.move(x, y)
    page.mouse.down()
    for i in range(moves):  # a back-and-forth drag, one pointer event a step
        dx = 200 if (i // 30) % 2 == 0 else -200
        page.mouse.move(x + dx * ((i % 30) / 30), y + 40 * ((i % 30) / 30))
        page.wait_for_timeout(16)
    page.mouse.up()


def _zoom(page: Any, box: dict[str, float], steps: int = 30) -> None:
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for i in range(steps):
        page.mouse.wheel(0, -60 if (i // 10) % 2 == 0 else 60)
        page.wait_for_timeout(16)


def scale(page: Any) -> float:
    return float(
        page.evaluate(
            "() => { const v = document.querySelector('.react-flow__viewport');"
            " const m = /scale\\(([^)]+)\\)/.exec(v.style.transform); return m ? parseFloat(m[1]) : 1; }"
        )
    )


def measure(page: Any, rounds: int) -> dict[str, float]:
    box = page.locator(".react-flow__pane").bounding_box()
    assert box
    pan = [_fps(page, lambda: _pan(page, box)) for _ in range(rounds)]
    zoom = [_fps(page, lambda: _zoom(page, box)) for _ in range(rounds)]
    return {"pan_fps": round(statistics.median(pan), 1), "zoom_fps": round(statistics.median(zoom), 1)}


def first_load(browser: Any, base: str, rounds: int) -> dict[str, float]:
    """The sign-in page from a cold context: navigation ``load`` (ms) and until its heading shows (ms)."""
    loads, visible = [], []
    for _ in range(rounds):
        context = browser.new_context(viewport={"width": 1440, "height": 900}, base_url=base)
        page = context.new_page()
        started = time.perf_counter()
        page.goto("/")
        page.get_by_role("heading", name="Sign in").wait_for()
        visible.append((time.perf_counter() - started) * 1000)
        loads.append(page.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd"))
        context.close()
    return {"load_ms": round(statistics.median(loads)), "form_visible_ms": round(statistics.median(visible))}


def open_flow(page: Any, flow_id: str, count: int, rounds: int) -> dict[str, float]:
    """Opening the flow in the editor: until its first node shows and until all ``count`` are drawn (ms)."""
    first, every = [], []
    for _ in range(rounds):
        page.goto("/")
        page.get_by_role("button", name="New flow").wait_for()
        started = time.perf_counter()
        page.goto(f"/flow/{flow_id}")
        page.locator(".react-flow__node").first.wait_for()
        first.append((time.perf_counter() - started) * 1000)
        page.wait_for_function(f"() => document.querySelectorAll('.react-flow__node').length >= {count}")
        every.append((time.perf_counter() - started) * 1000)
    return {"first_node_ms": round(statistics.median(first)), "all_nodes_ms": round(statistics.median(every))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trace", type=Path, default=None, help="write a Chromium trace of one overview pan here")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from tests.editor.test_e2e import CHROME_ARGS, CHROMIUM, api, cookie_header, running_service, sign_in

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, running_service(Path(tmp)) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS)
        loading = first_load(browser, base, args.rounds)
        page = browser.new_context(viewport={"width": 1440, "height": 900}, base_url=base).new_page()
        page.set_default_timeout(60_000)
        sign_in(page)
        status, created = api(
            base,
            "POST",
            "/api/v1/flows/",
            body={"name": f"{args.nodes} nodes", "data": generated_flow(args.nodes)},
            cookies=cookie_header(page),
        )
        assert status == 201, created
        opening = open_flow(page, created["id"], args.nodes, args.rounds)
        page.wait_for_timeout(1500)  # fit view settles
        overview = {"zoom": round(scale(page), 3), **measure(page, args.rounds)}
        page.get_by_role("button", name="fit view").click()  # the zoom rounds end zoomed in: back to the overview
        page.wait_for_timeout(800)
        overview["nodes_in_dom"] = page.locator(".react-flow__node").count()
        if args.trace:
            browser.start_tracing(page=page, path=str(args.trace), screenshots=False)
            box = page.locator(".react-flow__pane").bounding_box()
            assert box
            _pan(page, box, moves=60)
            browser.stop_tracing()
            page.get_by_role("button", name="fit view").click()
            page.wait_for_timeout(800)
        box = page.locator(".react-flow__pane").bounding_box()
        assert box
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        for _ in range(60):
            if scale(page) >= 0.999:
                break
            page.mouse.wheel(0, -120)
            page.wait_for_timeout(60)
        full = {"zoom": round(scale(page), 3), **measure(page, args.rounds)}
        full["nodes_in_dom"] = page.locator(".react-flow__node").count()
        browser.close()
    result = {
        "nodes": args.nodes,
        "first_load": loading,
        "open_flow": opening,
        "overview": overview,
        "zoom_100": full,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }
    (HERE / "editor_fps.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
