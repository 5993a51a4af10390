"""Membership, role and share changes are audited; answers are cached per process and a change made by
another process (the generation row bumped) is seen from the next request."""

from __future__ import annotations

import sqlalchemy as sa

from core import db, hookimpl
from core.contracts import AuditEntry
from tests.conftest import make_user, superuser

PLUGINS = ["accounts", "flows", "teams"]


class Recorder:
    def __init__(self) -> None:
        self.entries: list[AuditEntry] = []

    @hookimpl
    def on_audit(self, entry: AuditEntry) -> None:
        self.entries.append(entry)


def _setup(make_app, recorder=None):
    plugins = [*PLUGINS, ("recorder", recorder)] if recorder else PLUGINS
    app = make_app(plugins=plugins)
    client = app.test_client()
    root = superuser(client)
    owner, member = make_user(client, root, username="owner"), make_user(client, root, username="member")
    project = client.post("/api/v1/projects/", json={"name": "P"}, headers=owner.bearer).get_json()
    team = client.post("/api/v1/authz/teams", json={"team_name": "T", "adom_name": "t"}, headers=root.bearer)
    team_id = team.get_json()["id"]
    body = {"resource_type": "project", "resource_id": project["id"], "scope": "team", "target_id": team_id}
    share = client.post("/api/v1/authz/shares", json={**body, "permission_level": "read"}, headers=owner.bearer)
    assert share.status_code == 201
    return app, client, root, owner, member, project, team_id, share.get_json()["id"]


def test_membership_role_and_share_changes_are_audited(make_app):
    recorder = Recorder()
    _app, client, root, owner, member, _project, team_id, share_id = _setup(make_app, recorder)
    assert client.post(f"/api/v1/authz/teams/{team_id}/members", json={"user_id": member.id}, headers=root.bearer)
    role = client.post("/api/v1/authz/roles", json={"name": "r", "permissions": ["flow:read"]}, headers=root.bearer)
    given = client.post(
        "/api/v1/authz/role-assignments", json={"user_id": member.id, "role_id": role.get_json()["id"]},
        headers=root.bearer,
    ).get_json()  # fmt: skip
    client.patch(f"/api/v1/authz/shares/{share_id}", json={"permission_level": "write"}, headers=owner.bearer)
    client.delete(f"/api/v1/authz/role-assignments/{given['id']}", headers=root.bearer)
    client.delete(f"/api/v1/authz/teams/{team_id}/members/{member.id}", headers=root.bearer)
    client.delete(f"/api/v1/authz/shares/{share_id}", headers=owner.bearer)
    kinds = ("team", "role", "role_assignment", "authz_share")
    actions = [e.action for e in recorder.entries if e.resource_type in kinds]
    assert actions == [
        "team:create", "authz_share:create", "team:member:create", "role:create", "role_assignment:create",
        "authz_share:write", "role_assignment:delete", "team:member:delete", "authz_share:delete",
    ]  # fmt: skip
    added = next(e for e in recorder.entries if e.action == "team:member:create")
    assert added.details == {"team_id": team_id, "member_user_id": member.id, "source": "manual"}
    assert added.actor_id == root.id and added.resource_id == team_id
    changed = next(e for e in recorder.entries if e.action == "authz_share:write")
    assert changed.details["permission_level"] == "write" and changed.actor_id == owner.id
    assert changed.details["resource_id"] == _project["id"]


def test_a_change_by_another_process_is_seen_from_the_next_request(make_app):
    app, client, root, _owner, member, project, team_id, _share = _setup(make_app)
    assert client.post(f"/api/v1/authz/teams/{team_id}/members", json={"user_id": member.id}, headers=root.bearer)
    url = f"/api/v1/projects/{project['id']}"
    assert client.get(url, headers=member.bearer).status_code == 200
    with app.app_context(), db.transaction() as s:  # another process removes the membership directly
        s.execute(sa.text("DELETE FROM teams_member"))
    assert client.get(url, headers=member.bearer).status_code == 200  # this process answers from its cache
    with app.app_context(), db.transaction() as s:  # ... and bumps the generation, as every change does
        s.execute(sa.text("UPDATE teams_generation SET value = value + 1 WHERE id = 1"))
    assert client.get(url, headers=member.bearer).status_code == 404
