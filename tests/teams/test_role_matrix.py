"""The role matrix: a project shared with teams at each built-in role, tried by each role on each surface.

A non-member always gets 404 (the project does not exist for them); a member without the right gets 403.
"""

from __future__ import annotations

import pytest

from tests.conftest import make_user, superuser
from tests.run.runkit import chat_echo, create_flow, wait_jobs

PLUGINS = ["accounts", "flows", "variables", "run", "catalog", "standard", "build", "workflows", "teams"]
ROLES = {"viewer": "read", "run-only": "execute", "developer": "write", "admin": "admin"}

#: surface -> expected status per caller (owner, viewer, run-only, developer, admin, outsider)
MATRIX = {
    "GET flow": (200, 200, 200, 200, 200, 404),
    "GET project": (200, 200, 200, 200, 200, 404),
    "PATCH flow": (200, 403, 403, 200, 200, 404),
    "PATCH project": (200, 403, 403, 200, 200, 404),
    "run (v1)": (200, 403, 200, 200, 200, 404),
    "run (v2 workflows)": (200, 403, 200, 200, 200, 404),
    "build": (200, 403, 200, 200, 200, 404),
    "webhook": (202, 403, 202, 202, 202, 404),
    "share": (201, 403, 403, 403, 201, 404),
}
CALLERS = ("owner", "viewer", "run-only", "developer", "admin", "outsider")


@pytest.fixture
def world(make_app):
    app = make_app(plugins=PLUGINS, rate_limit_per_minute=100)
    client = app.test_client()
    root = superuser(client)
    people = {name: make_user(client, root, username=name.replace("-", "_")) for name in CALLERS}
    owner = people["owner"]
    project = client.post("/api/v1/projects/", json={"name": "Team project"}, headers=owner.bearer).get_json()
    flow = create_flow(client, owner, chat_echo(), name="team flow", folder_id=project["id"])
    for role, level in ROLES.items():
        team = client.post(
            "/api/v1/authz/teams", json={"team_name": role, "adom_name": f"team-{role}"}, headers=root.bearer
        )
        assert team.status_code == 201, team.get_json()
        team_id = team.get_json()["id"]
        added = client.post(
            f"/api/v1/authz/teams/{team_id}/members", json={"user_id": people[role].id}, headers=root.bearer
        )
        assert added.status_code == 201, added.get_json()
        shared = client.post(
            "/api/v1/authz/shares",
            json={
                "resource_type": "project",
                "resource_id": project["id"],
                "scope": "team",
                "target_id": team_id,
                "permission_level": level,
            },
            headers=owner.bearer,
        )
        assert shared.status_code == 201, shared.get_json()
    return app, client, root, people, project, flow


def _try(surface, client, caller, project, flow, root, people):
    fid, pid = flow["id"], project["id"]
    if surface == "GET flow":
        return client.get(f"/api/v1/flows/{fid}", headers=caller.bearer)
    if surface == "GET project":
        return client.get(f"/api/v1/projects/{pid}", headers=caller.bearer)
    if surface == "PATCH flow":
        return client.patch(f"/api/v1/flows/{fid}", json={"description": "changed"}, headers=caller.bearer)
    if surface == "PATCH project":
        return client.patch(f"/api/v1/projects/{pid}", json={"description": "changed"}, headers=caller.bearer)
    if surface == "run (v1)":
        return client.post(f"/api/v1/run/{fid}", json={"input_value": "hi"}, headers=caller.key)
    if surface == "run (v2 workflows)":
        return client.post("/api/v2/workflows", json={"flow_id": fid, "input_value": "hi"}, headers=caller.key)
    if surface == "build":
        return client.post(
            f"/api/v1/build/{fid}/flow?event_delivery=direct",
            json={"inputs": {"input_value": "hi"}},
            headers=caller.bearer,
        )
    if surface == "webhook":
        return client.post(f"/api/v1/webhook/{fid}", data="x", headers=caller.key)
    if surface == "share":
        body = {"resource_type": "project", "resource_id": pid, "scope": "user", "target_id": root.id}
        return client.post("/api/v1/authz/shares", json={**body, "permission_level": "read"}, headers=caller.bearer)
    raise AssertionError(surface)


@pytest.mark.parametrize("surface", list(MATRIX))
def test_role_matrix(world, surface):
    app, client, root, people, project, flow = world
    got = tuple(_try(surface, client, people[c], project, flow, root, people).status_code for c in CALLERS)
    wait_jobs(app)
    assert got == MATRIX[surface], dict(zip(CALLERS, got, strict=True))


def test_effective_permissions_for_the_editor(world):
    _app, client, _root, people, _project, flow = world
    expected = {
        "owner": ["read", "write", "execute", "delete", "create"],
        "viewer": ["read"],
        "run-only": ["read", "execute"],
        "developer": ["read", "write", "execute", "delete", "create"],
        "admin": ["read", "write", "execute", "delete", "create"],
        "outsider": [],
    }
    for name, actions in expected.items():
        body = {"resource_type": "flow", "resource_ids": [flow["id"]]}
        answer = client.post("/api/v1/authz/me/permissions", json=body, headers=people[name].bearer)
        assert answer.status_code == 200, answer.get_json()
        assert answer.get_json() == {"resource_type": "flow", "permissions": {flow["id"]: actions}}, name


def test_removing_a_member_hides_the_project_again(world):
    _app, client, root, people, project, _flow = world
    teams = client.get("/api/v1/authz/teams", headers=root.bearer).get_json()
    viewers = next(t for t in teams if t["adom_name"] == "team-viewer")
    gone = client.delete(f"/api/v1/authz/teams/{viewers['id']}/members/{people['viewer'].id}", headers=root.bearer)
    assert gone.status_code == 204
    assert client.get(f"/api/v1/projects/{project['id']}", headers=people["viewer"].bearer).status_code == 404
    # the viewer no longer sees the team either
    assert client.get(f"/api/v1/authz/teams/{viewers['id']}", headers=people["viewer"].bearer).status_code == 404


def test_team_and_role_administration_is_for_superusers(world):
    _app, client, root, people, _project, _flow = world
    dev = people["developer"]
    assert (
        client.post("/api/v1/authz/teams", json={"team_name": "x", "adom_name": "x"}, headers=dev.bearer).status_code
        == 403
    )
    assert client.post("/api/v1/authz/roles", json={"name": "r"}, headers=dev.bearer).status_code == 403
    roles = {r["name"]: r for r in client.get("/api/v1/authz/roles", headers=dev.bearer).get_json()}
    assert {"viewer", "run-only", "developer", "admin"} <= set(roles) and roles["viewer"]["is_system"]
    assert "flow:read" in roles["viewer"]["permissions"] and "flow:write" not in roles["viewer"]["permissions"]
    assert client.delete(f"/api/v1/authz/roles/{roles['viewer']['id']}", headers=root.bearer).status_code == 400
    bad = client.post("/api/v1/authz/roles", json={"name": "r", "permissions": ["flow"]}, headers=root.bearer)
    assert bad.status_code == 422


def test_a_custom_role_assigned_in_a_project(world):
    _app, client, root, people, project, flow = world
    outsider = people["outsider"]
    role = client.post(
        "/api/v1/authz/roles",
        json={"name": "flow-runner", "permissions": ["flow:read", "flow:execute"]},
        headers=root.bearer,
    ).get_json()
    given = client.post(
        "/api/v1/authz/role-assignments",
        json={"user_id": outsider.id, "role_id": role["id"], "domain_type": "project", "domain_id": project["id"]},
        headers=root.bearer,
    )
    assert given.status_code == 201, given.get_json()
    assert client.get(f"/api/v1/flows/{flow['id']}", headers=outsider.bearer).status_code == 200
    assert client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=outsider.key).status_code == 200
    assert (
        client.patch(f"/api/v1/flows/{flow['id']}", json={"description": "no"}, headers=outsider.bearer).status_code
        == 403
    )
    assert (
        client.delete(f"/api/v1/authz/role-assignments/{given.get_json()['id']}", headers=root.bearer).status_code
        == 204
    )
    assert client.get(f"/api/v1/flows/{flow['id']}", headers=outsider.bearer).status_code == 404


def test_shared_projects_are_listed_for_members_only(world):
    _app, client, _root, people, project, _flow = world
    for name in ("viewer", "run-only", "developer", "admin"):
        listed = client.get("/api/v1/projects/", headers=people[name].bearer).get_json()
        shared = [p for p in listed if not p["is_owner"]]
        assert [p["id"] for p in shared] == [project["id"]], name
    outsider = client.get("/api/v1/projects/", headers=people["outsider"].bearer).get_json()
    assert all(p["is_owner"] for p in outsider) and project["id"] not in [p["id"] for p in outsider]
    owner = client.get("/api/v1/projects/", headers=people["owner"].bearer).get_json()
    assert [p["id"] for p in owner if p["id"] == project["id"]] == [project["id"]]
    assert all(p["is_owner"] for p in owner)


def test_a_developer_edits_in_place_but_cannot_move_the_flow_away(world):
    _app, client, _root, people, _project, flow = world
    dev = people["developer"]
    own = client.post("/api/v1/projects/", json={"name": "Mine"}, headers=dev.bearer).get_json()
    moved = client.patch(f"/api/v1/flows/{flow['id']}", json={"folder_id": own["id"]}, headers=dev.bearer)
    assert moved.status_code == 403
    same = client.patch(f"/api/v1/flows/{flow['id']}", json={"folder_id": flow["folder_id"]}, headers=dev.bearer)
    assert same.status_code == 200
