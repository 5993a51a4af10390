"""The role matrix on A2A: an ``apikey`` project's agent answers the owner's key and the keys of members the
roles let run it; anyone else's key is refused as before (401, one answer for an invalid and a foreign key)."""

from __future__ import annotations

from tests.a2a.a2akit import PLUGINS as A2A_PLUGINS
from tests.a2a.a2akit import agent, project, rpc, user_message
from tests.conftest import make_user, superuser
from tests.run.runkit import chat_echo

ROLES = {"viewer": "read", "run-only": "execute", "developer": "write", "admin": "admin"}
CALLERS = ("owner", "viewer", "run-only", "developer", "admin", "outsider")


def test_a2a_role_matrix(make_app):
    app = make_app(plugins=[*A2A_PLUGINS, "teams"], a2a_enabled=True, rate_limit_per_minute=100)
    client = app.test_client()
    root = superuser(client)
    people = {name: make_user(client, root, username=name.replace("-", "_")) for name in CALLERS}
    folder = project(client, people["owner"], "apikey")
    flow_id = agent(client, people["owner"], chat_echo(), folder_id=folder)
    for role, level in ROLES.items():
        team_id = client.post(
            "/api/v1/authz/teams", json={"team_name": role, "adom_name": role}, headers=root.bearer
        ).get_json()["id"]
        client.post(f"/api/v1/authz/teams/{team_id}/members", json={"user_id": people[role].id}, headers=root.bearer)
        body = {"resource_type": "project", "resource_id": folder, "scope": "team", "target_id": team_id}
        shared = client.post(
            "/api/v1/authz/shares", json={**body, "permission_level": level}, headers=people["owner"].bearer
        )
        assert shared.status_code == 201
    got = {}
    for name in CALLERS:
        response = client.post(
            f"/api/v1/a2a/{flow_id}/jsonrpc",
            json=rpc("message/send", {"message": user_message("hi")}),
            headers=people[name].key,
        )
        got[name] = response.status_code
        if response.status_code == 200:
            assert response.get_json()["result"]["status"]["state"] == "completed", name
    assert got == {"owner": 200, "viewer": 401, "run-only": 200, "developer": 200, "admin": 200, "outsider": 401}
