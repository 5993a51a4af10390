"""The role matrix on the MCP project server: members the roles let run call the tools (as the owner,
who exposed them); a viewer is 403; a non-member 404, exactly like another user's project."""

from __future__ import annotations

from tests.conftest import make_user, superuser
from tests.mcp.mcpkit import project_with_tools, rpc, sse_messages

PLUGINS = ["accounts", "flows", "variables", "run", "monitor", "mcp", "standard", "teams"]
ROLES = {"viewer": "read", "run-only": "execute", "developer": "write", "admin": "admin"}
CALLERS = ("owner", "viewer", "run-only", "developer", "admin", "outsider")


def test_mcp_project_server_role_matrix(make_app):
    app = make_app(plugins=PLUGINS, rate_limit_per_minute=100)
    client = app.test_client()
    root = superuser(client)
    people = {name: make_user(client, root, username=name.replace("-", "_")) for name in CALLERS}
    setup = project_with_tools(client, people["owner"], "apikey", names=("Team Echo",))
    pid = setup["project"]["id"]
    for role, level in ROLES.items():
        team = client.post("/api/v1/authz/teams", json={"team_name": role, "adom_name": role}, headers=root.bearer)
        team_id = team.get_json()["id"]
        client.post(f"/api/v1/authz/teams/{team_id}/members", json={"user_id": people[role].id}, headers=root.bearer)
        body = {"resource_type": "project", "resource_id": pid, "scope": "team", "target_id": team_id}
        shared = client.post(
            "/api/v1/authz/shares", json={**body, "permission_level": level}, headers=people["owner"].bearer
        )
        assert shared.status_code == 201, shared.get_json()
    path = f"/api/v1/mcp/project/{pid}/streamable"
    call = {"name": "team_echo", "arguments": {"input_value": "hi"}}
    got = {}
    for name in CALLERS:
        answer = rpc(client, path, "tools/call", call, {"x-api-key": people[name].api_key})
        got[name] = answer.status_code
        if answer.status_code == 200:
            reply = sse_messages(answer.data)
            assert reply[-1]["result"] == {"content": [{"type": "text", "text": "hi"}], "isError": False}, name
    assert got == {"owner": 200, "viewer": 403, "run-only": 200, "developer": 200, "admin": 200, "outsider": 404}
