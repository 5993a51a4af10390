"""The hooks the MCP surface reads projects and servers through, answered by the flows and mcp plugins."""

from __future__ import annotations

from service_mcp import hookspecs as specs

from core.app import state
from core.contracts import McpToolSettings
from tests.mcp.mcpkit import project_with_tools


def test_project_hooks_are_owner_scoped(app, client, alice, bob):
    made = project_with_tools(client, alice, "apikey")
    pid = made["project"]["id"]
    with app.app_context():
        hooks = state(app).host.hooks
        project = hooks.first(specs.find_project, user_id=alice.id, project_id=pid)
        assert project is not None
        assert project.user_id == alice.id and project.auth_settings == {"auth_type": "apikey"}
        assert hooks.first(specs.find_project, user_id=bob.id, project_id=pid) is None
        anyone = hooks.first(specs.find_project, user_id=None, project_id=pid)
        assert anyone is not None and anyone.id == pid
        assert hooks.first(specs.find_project, user_id=alice.id, project_id="not-a-uuid") is None
        flows = hooks.first(specs.list_project_flows, user_id=alice.id, project_id=pid, with_data=True) or []
        assert [f.name for f in flows] == ["Echo One", "Echo Two"] and all(f.data for f in flows)
        bare = hooks.first(specs.list_project_flows, user_id=alice.id, project_id=pid, with_data=False) or []
        assert bare[0].data is None
        assert hooks.first(specs.list_project_flows, user_id=bob.id, project_id=pid, with_data=False) is None
        every = hooks.first(specs.list_project_flows, user_id=alice.id, project_id=None, with_data=False) or []
        assert {"Echo One", "Echo Two"} <= {f.name for f in every}
        # foreign projects and flows of other projects are left alone
        one = made["flows"][0]["id"]
        assert (
            hooks.first(specs.update_project_mcp, user_id=bob.id, project_id=pid, tools=[], auth_settings=None) is None
        )
        count = hooks.first(
            specs.update_project_mcp,
            user_id=alice.id,
            project_id=pid,
            tools=[
                McpToolSettings.from_dict({"id": one, "action_name": "renamed"}),
                McpToolSettings.from_dict({"id": "00000000-0000-0000-0000-000000000001"}),
            ],
            auth_settings={"auth_type": "none", "oauth_client_secret": "dropped"},
        )
        assert count == 1
        again = hooks.first(specs.find_project, user_id=alice.id, project_id=pid)
        assert again is not None and again.auth_settings == {"auth_type": "none"}
        assert hooks.mcp_server_config(user_id=alice.id, name="missing") is None


def test_mcp_server_config_hook_decrypts_for_runs_only(app, client, alice):
    body = {"url": "https://mcp.example.com/mcp", "headers": {"X-Key": "v-secret"}}
    assert client.post("/api/v2/mcp/servers/one", json=body, headers=alice.bearer).status_code == 200
    with app.app_context():
        config = state(app).host.hooks.mcp_server_config(user_id=alice.id, name="one")
    assert config is not None and config.headers == {"X-Key": "v-secret"} and config.url == body["url"]
    assert b"v-secret" not in client.get("/api/v2/mcp/servers/one", headers=alice.bearer).data
