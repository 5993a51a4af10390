"""End-to-end, teams in the Home page (issue 33): the owner shares a project with a team from the project's
menu (a role, the list of teams it is shared with, "Stop sharing"); a member of two teams switches between
"All projects", "Mine" and each team's shared projects, sees their role as a badge on the project and on
its flows. WCAG AA contrast of the share dialog and of the switcher, light and dark (axe-core, as
tests/editor/test_e2e_a11y.py)."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

from playwright.sync_api import expect

from tests.editor.conftest import unique
from tests.editor.test_e2e import ADMIN, PASSWORD, api, pytestmark, sign_in  # noqa: F401 - the module's marks
from tests.editor.test_e2e_a11y import contrast_in_both_themes

MEMBER, MEMBER_PASSWORD = "maria", "Maria-Password-42"


def _token(base: str, username: str, password: str) -> str:
    data = urllib.parse.urlencode({"username": username, "password": password}).encode()
    req = urllib.request.Request(base + "/api/v1/login", data=data, method="POST")  # noqa: S310 - local server
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        return json.loads(r.read())["access_token"]


def _call(base: str, method: str, path: str, token: str, body=None):
    status, answer = api(base, method, path, body=body, headers={"Authorization": f"Bearer {token}"})
    assert status in (200, 201), (path, status, answer)
    return answer


def test_share_from_the_project_menu_and_switch_teams(browser, server):
    admin_token = _token(server, ADMIN, PASSWORD)
    member = _call(server, "POST", "/api/v1/users/", admin_token, {"username": MEMBER, "password": MEMBER_PASSWORD})
    _call(server, "PATCH", f"/api/v1/users/{member['id']}", admin_token, {"is_active": True})
    # the shared app has other modules' projects and teams: these names are this test's own
    desk_name, ops_name = unique("Support desk"), unique("Ops runbooks")
    support, ops_team = unique("Support"), unique("Ops")
    desk = _call(server, "POST", "/api/v1/projects/", admin_token, {"name": desk_name})
    ops = _call(server, "POST", "/api/v1/projects/", admin_token, {"name": ops_name})
    _call(
        server,
        "POST",
        "/api/v1/flows/",
        admin_token,
        {"name": "Refund helper", "folder_id": desk["id"], "data": {"nodes": [], "edges": []}},
    )
    teams = {}
    for name in (support, ops_team):
        team = _call(server, "POST", "/api/v1/authz/teams", admin_token, {"team_name": name, "adom_name": name.lower()})
        _call(server, "POST", f"/api/v1/authz/teams/{team['id']}/members", admin_token, {"user_id": member["id"]})
        teams[name] = team["id"]
    body = {"resource_type": "project", "resource_id": ops["id"], "scope": "team", "target_id": teams[ops_team]}
    _call(server, "POST", "/api/v1/authz/shares", admin_token, {**body, "permission_level": "write"})
    problems: dict[str, list[str]] = {}

    # the owner shares "Support desk" with Support as run-only, from the project's menu
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    sign_in(page)
    page.get_by_role("button", name=f"Share project {desk_name}").click()
    dialog = page.get_by_test_id("share-project")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("No team yet.")
    dialog.get_by_label("Team to share with").select_option(label=support)
    dialog.get_by_label("Role").select_option(label="run-only")
    dialog.get_by_role("button", name="Share", exact=True).click()
    shared = dialog.get_by_role("list", name="Teams this project is shared with")
    expect(shared).to_contain_text(support)
    expect(shared).to_contain_text("run-only")
    contrast_in_both_themes(page, "share dialog", problems)
    # a second share to stop again: the list follows
    dialog.get_by_label("Team to share with").select_option(label=ops_team)
    dialog.get_by_label("Role").select_option(label="viewer")
    dialog.get_by_role("button", name="Share", exact=True).click()
    expect(shared.get_by_role("listitem")).to_have_count(2)
    dialog.get_by_role("button", name=f"Stop sharing with {ops_team}").click()
    expect(shared.get_by_role("listitem")).to_have_count(1)
    page.keyboard.press("Escape")
    # the owner's switcher: "Team: Support" shows their own project shared with Support
    projects = page.get_by_role("navigation", name="Projects")
    page.get_by_label("Team", exact=True).select_option(label=f"Team: {support}")
    expect(projects.get_by_role("link", name=desk_name)).to_be_visible()
    expect(projects.get_by_role("link", name=ops_name)).to_have_count(0)
    page.get_by_label("Team", exact=True).select_option(label="All projects")
    context.close()

    # the member: both shared projects with their role, then one team at a time, then only their own
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server)
    maria = context.new_page()
    maria.set_default_timeout(15_000)
    maria.goto("/")
    maria.get_by_label("Username").fill(MEMBER)
    maria.get_by_label("Password").fill(MEMBER_PASSWORD)
    maria.get_by_role("button", name="Sign in").click()
    projects = maria.get_by_role("navigation", name="Projects")
    expect(projects.get_by_role("link", name=desk_name)).to_contain_text("shared · run-only")
    expect(projects.get_by_role("link", name=ops_name)).to_contain_text("shared · developer")
    switcher = maria.get_by_label("Team", exact=True)
    switcher.select_option(label=f"Team: {support}")
    expect(projects.get_by_role("link", name=desk_name)).to_be_visible()
    expect(projects.get_by_role("link", name=ops_name)).to_have_count(0)
    contrast_in_both_themes(maria, "team switcher", problems)
    switcher.select_option(label=f"Team: {ops_team}")
    expect(projects.get_by_role("link", name=ops_name)).to_be_visible()
    expect(projects.get_by_role("link", name=desk_name)).to_have_count(0)
    switcher.select_option(label="Mine")
    expect(projects.get_by_role("link", name=ops_name)).to_have_count(0)
    expect(projects.get_by_role("link", name=desk_name)).to_have_count(0)
    # the choice is kept across a reload
    maria.reload()
    expect(maria.get_by_label("Team", exact=True)).to_have_value("mine")
    maria.get_by_label("Team", exact=True).select_option(label="All projects")
    projects.get_by_role("link", name=desk_name).click()
    card = maria.get_by_role("list", name="Flows").get_by_role("link", name="Refund helper")
    expect(card).to_contain_text("run-only")  # the role badge on a shared project's flow
    context.close()
    assert not any(problems.values()), problems
