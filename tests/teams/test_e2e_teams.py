"""In a browser: a superuser makes a team, adds a member and shares a project with it as run-only on the
Teams page; the member then finds the project marked shared, with their role. ``service run`` driven by
Debian's chromium."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest

from tests.editor.test_e2e import ADMIN, PASSWORD, expect, running_service

pytestmark = [pytest.mark.slow]
MEMBER, MEMBER_PASSWORD = "maria", "Maria-Password-42"


def _call(base: str, method: str, path: str, body=None, token: str | None = None, form=None):
    data = json.dumps(body).encode() if body is not None else urllib.parse.urlencode(form).encode() if form else None
    req = urllib.request.Request(base + path, data=data, method=method)  # noqa: S310 - local server
    req.add_header("Content-Type", "application/json" if body is not None else "application/x-www-form-urlencoded")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        return json.loads(r.read() or b"null")


def _sign_in(page, username: str, password: str) -> None:
    page.goto("/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="New flow")).to_be_visible()


def test_share_a_project_with_a_team_in_the_editor(tmp_path, browser):
    with running_service(tmp_path) as base:
        token = _call(base, "POST", "/api/v1/login", form={"username": ADMIN, "password": PASSWORD})["access_token"]
        member = _call(base, "POST", "/api/v1/users/", {"username": MEMBER, "password": MEMBER_PASSWORD}, token)
        _call(base, "PATCH", f"/api/v1/users/{member['id']}", {"is_active": True}, token)
        _call(base, "POST", "/api/v1/projects/", {"name": "Support desk"}, token)
        contexts = [browser.new_context(base_url=base), browser.new_context(base_url=base)]
        try:
            admin = contexts[0].new_page()
            admin.set_default_timeout(15_000)
            _sign_in(admin, ADMIN, PASSWORD)
            admin.get_by_role("link", name="Teams").click()
            expect(admin.get_by_role("heading", name="Teams")).to_be_visible()
            admin.get_by_label("Team name").fill("Support")
            admin.get_by_role("button", name="Create team").click()
            admin.get_by_label("Add a member to Support").select_option(label=MEMBER)
            admin.get_by_role("button", name="Add", exact=True).click()
            expect(admin.get_by_role("region", name="Team Support")).to_contain_text(MEMBER)
            admin.get_by_label("Project to share").select_option(label="Support desk")
            admin.get_by_label("Team to share with").select_option(label="Support")
            admin.get_by_label("Role").select_option(label="run-only")
            admin.get_by_role("button", name="Share", exact=True).click()
            expect(admin.get_by_role("list", name="Your shares")).to_contain_text("run-only")
            maria = contexts[1].new_page()
            maria.set_default_timeout(15_000)
            _sign_in(maria, MEMBER, MEMBER_PASSWORD)
            shared = maria.get_by_role("navigation", name="Projects").get_by_role("link", name="Support desk")
            expect(shared).to_contain_text("shared · run-only")  # the caller's role, from shared_role
        finally:
            for context in contexts:
                context.close()
