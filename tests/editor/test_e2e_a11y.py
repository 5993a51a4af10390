"""Accessibility, checked in the browser: WCAG AA colour contrast of the main screens in the light and the dark
theme (axe-core from the npm registry, the frontend's dev dependency, evaluated in the page), dialogs that keep
focus inside and close on Escape, and the flow's name visible at 1280x720.

Same service, browser context and fixtures as tests/editor/test_e2e_starters.py.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.editor.test_e2e import shot
from tests.editor.test_e2e_starters import (  # noqa: F401 - fixtures
    auth,
    context,
    from_starter,
    llm,
    page,
    pytestmark,
    server,
)

FRONTEND = Path(__file__).resolve().parents[2] / "plugins" / "editor" / "frontend"
AXE = FRONTEND / "node_modules" / "axe-core" / "axe.min.js"


def axe_contrast(pg) -> list[str]:
    """The colour-contrast violations axe-core finds on the page as it is (one line per element)."""
    if not pg.evaluate("() => !!window.axe"):
        pg.evaluate(AXE.read_text(encoding="utf-8") + "\n;0")  # evaluate is not subject to the page's CSP
    result = pg.evaluate(
        """async () => {
          const r = await window.axe.run(document, {runOnly: {type: 'rule', values: ['color-contrast']}});
          return r.violations.flatMap((v) => v.nodes.map(
            (n) => n.target.join(' ') + ' :: ' + n.any.map((a) => a.message).join('; ')));
        }"""
    )
    return list(result)


def contrast_in_both_themes(pg, where: str, problems: dict[str, list[str]]) -> None:
    """Record under ``problems`` the contrast violations of the page as it is, in the light and the dark theme."""
    if not AXE.exists():
        return
    for theme in ("light", "dark"):
        pg.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{theme}')")
        pg.wait_for_timeout(100)
        problems[f"{where} ({theme})"] = axe_contrast(pg)
    pg.evaluate("() => document.documentElement.setAttribute('data-theme', 'light')")


def _set_theme(pg, theme: str) -> None:
    pg.evaluate(f"() => localStorage.setItem('service.theme', '{theme}')")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_main_screens_meet_wcag_aa_contrast(page, theme):  # noqa: F811 - the imported fixture
    if not AXE.exists():
        pytest.skip(f"{AXE} is absent: npm install in plugins/editor/frontend")
    page.goto("/")
    _set_theme(page, theme)
    problems: dict[str, list[str]] = {}

    page.goto("/")
    expect(page.locator("html")).to_have_attribute("data-theme", theme)
    expect(page.get_by_role("button", name="New flow")).to_be_visible()
    problems["home"] = axe_contrast(page)
    page.get_by_role("button", name="New flow").click()
    expect(page.get_by_test_id("new-flow-dialog")).to_be_visible()
    problems["new flow dialog"] = axe_contrast(page)

    from_starter(page, "Basic Prompting")
    expect(page.locator("html")).to_have_attribute("data-theme", theme)
    page.wait_for_timeout(300)
    problems["editor"] = axe_contrast(page)
    page.get_by_role("button", name="Playground").click()
    expect(page.get_by_test_id("playground")).to_be_visible()
    problems["playground"] = axe_contrast(page)
    page.get_by_role("button", name="API", exact=True).click()
    problems["api panel"] = axe_contrast(page)
    page.keyboard.press("Escape")

    for path in ("/settings/model-providers", "/settings/variables", "/settings/api-keys"):
        page.goto(path)
        expect(page.locator(".settings-main h1, .settings-main h2").first).to_be_visible()
        page.wait_for_timeout(200)
        problems[path] = axe_contrast(page)
    shot(page, f"a11y-{theme}")
    _set_theme(page, "light")
    failing = {k: v for k, v in problems.items() if v}
    assert not failing, "\n".join(f"{screen}: {line}" for screen, lines in failing.items() for line in lines)


def test_dialogs_keep_focus_inside_and_close_on_escape(page):  # noqa: F811 - the imported fixture
    page.goto("/")
    page.get_by_role("button", name="New flow").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    # Tab and Shift+Tab cycle inside the dialog
    for key in ["Tab"] * 40 + ["Shift+Tab"] * 40:
        page.keyboard.press(key)
        assert page.evaluate("() => !!document.activeElement.closest('[role=dialog]')"), key
    # focus lost to the page behind (a click on the backdrop's edge, a script): Escape still closes it
    page.evaluate("() => document.activeElement.blur()")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    # and focus went back to the button that opened it
    expect(page.get_by_role("button", name="New flow")).to_be_focused()


def test_flow_name_is_visible_at_1280x720(page):  # noqa: F811 - the imported fixture
    page.set_viewport_size({"width": 1280, "height": 720})
    from_starter(page, "Basic Chat Echo")
    name = page.get_by_test_id("flow-name")
    expect(name).to_be_visible()
    expect(name).to_have_text(re.compile("Basic Chat Echo"))
    box = name.bounding_box()
    assert box and box["width"] >= 80, box  # the name shows, not a sliver
    assert name.evaluate("el => el.scrollWidth <= el.clientWidth + 1 || el.title.length > 0")
    _top_bar_items_do_not_overlap(page)
    shot(page, "a11y-flow-name-1280x720")
    # the longest name the bar shows (260 px before its ellipsis): the name gives way, not the toolbar (a
    # 19-letter name once pushed Playground under the theme switch, and a click on it failed)
    name.click()
    dialog = page.get_by_role("dialog", name="Rename flow")
    dialog.get_by_label("Name").fill("Quarterly customer escalation triage and routing with approvals")
    dialog.get_by_label("Name").press("Enter")
    expect(name).to_have_text(re.compile("^Quarterly customer escalation"))
    box = name.bounding_box()
    assert box and 90 <= box["width"] <= 262, box
    assert name.evaluate("el => el.scrollWidth > el.clientWidth")  # it ends in an ellipsis
    _top_bar_items_do_not_overlap(page)
    page.get_by_role("button", name="Playground").click(trial=True, timeout=3000)  # nothing covers it


def _top_bar_items_do_not_overlap(page) -> None:  # noqa: F811 - a parameter, not the fixture
    """Nothing in the top bar overlaps its neighbour (the name once ran over the save state and Undo, the
    toolbar over the account links), and the last button is on the screen."""
    boxes = page.evaluate(
        """() => [...document.querySelectorAll(
            '.topbar-middle .crumbs > *, .topbar-middle > .badge, .topbar-middle .save-state, '
            + '.topbar-middle .toolbar > *, .topbar-right > *'
        )].filter((e) => e.offsetParent !== null).map((e) => {
            const r = e.getBoundingClientRect();
            return [(e.getAttribute("aria-label") || e.textContent || "").trim().slice(0, 24), r.left, r.right];
        })"""
    )
    assert len(boxes) > 5, boxes
    for (first, _, first_right), (second, second_left, _) in itertools.pairwise(boxes):
        assert first_right <= second_left + 0.5, (first, second, boxes)
    assert boxes[-1][2] <= 1280, boxes
    # and the middle holds its content (an overflow is where one item slides under the next)
    middle = page.locator(".topbar-middle")
    assert middle.evaluate("m => m.scrollWidth <= m.clientWidth"), middle.evaluate("m => m.scrollWidth")
