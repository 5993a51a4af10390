"""``GET /api/v1/flows/{id}`` says the caller's role on a flow shared with them (``shared_role``, the list's
values): the editor opens it read-only for a viewer or a run-only member. Nothing for the owner's own flow or
an example; a non-member gets 404, as for any other user's flow."""

from __future__ import annotations

import pytest

from tests.conftest import make_user, superuser
from tests.run.runkit import chat_echo, create_flow

PLUGINS = ["accounts", "flows", "variables", "run", "catalog", "standard", "teams"]
ROLES = {"viewer": "read", "run-only": "execute", "developer": "write", "admin": "admin"}


@pytest.fixture
def world(make_app):
    app = make_app(plugins=PLUGINS, rate_limit_per_minute=100)
    client = app.test_client()
    root = superuser(client)
    people = {name: make_user(client, root) for name in (*ROLES, "owner", "outsider", "one-by-one")}
    owner = people["owner"]
    project = client.post("/api/v1/projects/", json={"name": "Team project"}, headers=owner.bearer).get_json()
    flow = create_flow(client, owner, chat_echo(), name="team flow", folder_id=project["id"])
    for role, level in ROLES.items():
        team = client.post("/api/v1/authz/teams", json={"team_name": role, "adom_name": role}, headers=root.bearer)
        assert team.status_code == 201, team.get_json()
        team_id = team.get_json()["id"]
        added = client.post(
            f"/api/v1/authz/teams/{team_id}/members", json={"user_id": people[role].id}, headers=root.bearer
        )
        assert added.status_code == 201, added.get_json()
        body = {"resource_type": "project", "resource_id": project["id"], "scope": "team", "target_id": team_id}
        shared = client.post("/api/v1/authz/shares", json={**body, "permission_level": level}, headers=owner.bearer)
        assert shared.status_code == 201, shared.get_json()
    return client, people, flow


def _read(client, caller, flow_id):
    return client.get(f"/api/v1/flows/{flow_id}", headers=caller.bearer)


def test_the_single_read_carries_the_members_role(world):
    client, people, flow = world
    listed = {}
    for role in ROLES:
        got = _read(client, people[role], flow["id"])
        assert got.status_code == 200, got.get_json()
        body = got.get_json()
        assert body["id"] == flow["id"] and body["shared_role"] == role, (role, body.get("shared_role"))
        assert body["data"] == flow["data"]  # the whole flow, as the owner reads it
        rows = client.get("/api/v1/flows/?remove_example_flows=true", headers=people[role].bearer).get_json()
        listed[role] = next(f["shared_role"] for f in rows if f["id"] == flow["id"])
    assert listed == {role: role for role in ROLES}  # the same values as the list's


def test_the_owners_own_flow_and_an_example_carry_no_role(world):
    client, people, flow = world
    got = _read(client, people["owner"], flow["id"])
    assert got.status_code == 200 and "shared_role" not in got.get_json()
    [example, *_] = client.get("/api/v1/flows/basic_examples/", headers=people["viewer"].bearer).get_json()
    got = _read(client, people["viewer"], example["id"])
    assert got.status_code == 200 and "shared_role" not in got.get_json()


def test_a_non_member_gets_404_and_a_flow_shared_one_by_one_says_its_role(world):
    client, people, flow = world
    got = _read(client, people["outsider"], flow["id"])
    assert got.status_code == 404, got.get_json()
    assert "shared_role" not in got.get_json()
    # the flow alone shared with one user (no team, no project): run-only
    member = people["one-by-one"]
    assert _read(client, member, flow["id"]).status_code == 404
    body = {"resource_type": "flow", "resource_id": flow["id"], "scope": "user", "target_id": member.id}
    shared = client.post(
        "/api/v1/authz/shares", json={**body, "permission_level": "execute"}, headers=people["owner"].bearer
    )
    assert shared.status_code == 201, shared.get_json()
    got = _read(client, member, flow["id"])
    assert got.status_code == 200 and got.get_json()["shared_role"] == "run-only"
    # and it is still refused a change (the role the editor shows is the one the server enforces)
    patched = client.patch(f"/api/v1/flows/{flow['id']}", json={"description": "x"}, headers=member.bearer)
    assert patched.status_code == 403, patched.get_json()
