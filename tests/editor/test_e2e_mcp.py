"""End-to-end, as a new user: enable two flows as MCP tools in the project's MCP Server tab, paste the
shown configuration into an MCP client (the official ``mcp`` Python client stands in for Cursor), call
the tools; add an external MCP server in Settings, pick its tool on an MCP Tools node and run the flow.
Chromium from the system package, as tests/editor/test_e2e.py."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.editor import test_e2e
from tests.editor.conftest import unique
from tests.editor.test_e2e import ADMIN, PASSWORD, api, expect, shot, sign_in
from tests.flowkit import edge as make_edge
from tests.run.runkit import chat_echo

pytestmark = test_e2e.pytestmark  # the module's marks
pytest.importorskip("mcp")


def _token(server: str) -> dict[str, str]:
    req = urllib.request.Request(  # noqa: S310 - local server
        server + "/api/v1/login", data=f"username={ADMIN}&password={PASSWORD}".encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        return {"Authorization": f"Bearer {json.loads(r.read())['access_token']}"}


def _call_tools(url: str, headers: dict[str, str]) -> dict:
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main() -> dict:
        async with Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            answers = {n: (await client.call_tool(n, {"input_value": f"hi {n}"})).content[0].text for n in names}
            return {"names": names, "answers": answers}

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API runs an event loop in this thread
        return pool.submit(anyio.run, main).result()


def test_flows_as_mcp_tools_and_an_mcp_server_in_a_flow(page, server, sdk_server):
    auth = _token(server)
    # a project of its own: the shared app's other projects hold other modules' flows
    status, project = api(server, "POST", "/api/v1/projects/", body={"name": unique("MCP tools")}, headers=auth)
    assert status == 201, project
    for name in ("Greeter", "Echo Bot"):
        status, _ = api(
            server,
            "POST",
            "/api/v1/flows/",
            body={"name": name, "data": chat_echo(), "folder_id": project["id"]},
            headers=auth,
        )
        assert status == 201

    # 1. the project's MCP Server tab: both flows become tools, one renamed
    sign_in(page)
    page.goto(f"/projects/{project['id']}")
    page.get_by_role("tab", name="MCP Server").click()
    page.get_by_label("Use Greeter as a tool").check()
    page.get_by_label("Use Echo Bot as a tool").check()
    page.get_by_label("Action name of Greeter").fill("greet")
    page.get_by_label("Action description of Greeter").fill("Says hello back")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("MCP server settings saved")).to_be_visible()
    page.get_by_role("radio", name="Cursor").click()
    expect(page.get_by_test_id("mcp-snippet")).to_contain_text("mcpServers")
    shot(page, "mcp-01-project-server")
    config = json.loads(page.get_by_test_id("mcp-snippet").inner_text())
    [(name, entry)] = config["mcpServers"].items()
    assert entry["headers"] == {"x-api-key": "<YOUR_API_KEY>"} and entry["url"].endswith("/streamable")
    page.get_by_role("radio", name="VS Code").click()
    expect(page.get_by_test_id("mcp-snippet")).to_contain_text('"type": "http"')

    # 2. paste it into a client: the official mcp client with a real key in place of the placeholder
    key = api(server, "POST", "/api/v1/api_key/", body={"name": "mcp"}, headers=auth)[1]["api_key"]
    headers = {k: (key if v == "<YOUR_API_KEY>" else v) for k, v in entry["headers"].items()}
    called = _call_tools(entry["url"], headers)
    assert called["names"] == ["echo_bot", "greet"]
    assert called["answers"] == {"echo_bot": "hi echo_bot", "greet": "hi greet"}

    # 2b. OAuth: the owner sets the authorization server; the secret is write-only, the owner's key still works
    page.get_by_label("MCP authentication").select_option("oauth")
    page.get_by_label("Authorization server (issuer URL)").fill("https://auth.example.com/realms/mcp")
    page.get_by_label("Client ID").fill("mcp-client")
    page.get_by_label("Required scope").fill("mcp")
    page.get_by_label("Client secret").fill("oauth-secret-1")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("button", name="Save")).to_be_disabled()  # saved and reloaded
    expect(page.get_by_label("Client secret")).to_have_value("")
    shot(page, "mcp-01b-project-oauth")
    stored = api(server, "GET", f"/api/v1/mcp/project/{project['id']}", headers=auth)[1]["auth_settings"]
    assert stored == {
        "auth_type": "oauth",
        "oauth_server_url": "https://auth.example.com/realms/mcp",
        "oauth_client_id": "mcp-client",
        "oauth_mcp_scope": "mcp",
    }
    assert "oauth-secret-1" not in page.content()
    assert _call_tools(entry["url"], headers)["names"] == ["echo_bot", "greet"]

    # 3. Settings → MCP servers: add the external server
    calc = unique("calc").replace(" ", "-")  # the shared app: the starters module adds a "calc" of its own
    page.goto("/settings/mcp-servers")
    page.get_by_role("button", name="Add MCP server").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Server name").fill(calc)
    dialog.get_by_label("Server URL").fill(sdk_server)
    dialog.get_by_label("Server headers").fill("X-Token=secret-token-1")
    dialog.get_by_role("button", name="Add").click()
    expect(page.get_by_role("cell", name=calc, exact=True)).to_be_visible()
    assert "secret-token-1" not in page.content()
    shot(page, "mcp-02-settings-servers")

    # 4. an MCP Tools node: pick the server and a tool, fill its argument, run the flow
    catalog = api(server, "GET", "/api/v1/all", headers=auth)[1]
    node = next(v for group in catalog.values() for k, v in group.items() if k == "MCPTools")
    data = {
        "nodes": [
            {
                "id": "MCPTools-AAAAA",
                "type": "genericNode",
                "position": {"x": 100, "y": 100},
                "data": {"id": "MCPTools-AAAAA", "type": "MCPTools", "node": node},
            }
        ],
        "edges": [],
    }
    status, flow = api(server, "POST", "/api/v1/flows/", body={"name": "Uses MCP", "data": data}, headers=auth)
    assert status == 201, flow
    page.goto(f"/flow/{flow['id']}")
    tools_node = page.get_by_test_id("node-MCPTools")
    expect(tools_node).to_be_visible()
    tools_node.get_by_label("MCP server", exact=True).select_option(calc)
    tools_node.get_by_label("MCP tool", exact=True).select_option("shout")
    expect(tools_node.get_by_text("Upper-case a text.")).to_be_visible()
    tools_node.get_by_label("text", exact=True).fill("quiet please")
    tools_node.get_by_label("text", exact=True).blur()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved", timeout=20_000)
    shot(page, "mcp-03-tools-node")
    saved = api(server, "GET", f"/api/v1/flows/{flow['id']}", headers=auth)[1]
    template = saved["data"]["nodes"][0]["data"]["node"]["template"]
    assert template["tool"]["value"] == "shout" and template["mcp_server"]["value"] == {"name": calc}
    assert template["text"]["value"] == "quiet please"
    # run it: the component calls the external server's tool
    out = {
        "id": "ChatOutput-BBBBB",
        "type": "genericNode",
        "position": {"x": 500, "y": 100},
        "data": {"id": "ChatOutput-BBBBB", "type": "ChatOutput", "node": catalog["input_output"]["ChatOutput"]},
    }
    edge = make_edge(saved["data"]["nodes"][0], "response", out, "input_value")
    saved["data"]["nodes"].append(out)
    saved["data"]["edges"] = [edge]
    api(server, "PATCH", f"/api/v1/flows/{flow['id']}", body={"data": saved["data"]}, headers=auth)
    status, result = api(
        server, "POST", f"/api/v1/run/{flow['id']}", body={"input_value": ""}, headers={"x-api-key": key}
    )
    assert status == 200, result
    assert "QUIET PLEASE" in result["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def test_an_ordinary_user_is_told_stdio_servers_are_a_superusers(page, server):
    """Issue 26: the dialog says who may add a command server; the server's 403 reaches the user as a toast,
    and nothing is stored (the command never runs)."""
    admin = _token(server)
    created = api(server, "POST", "/api/v1/users/", body={"username": "mallory", "password": PASSWORD}, headers=admin)
    assert created[0] == 201, created
    api(server, "PATCH", f"/api/v1/users/{created[1]['id']}", body={"is_active": True}, headers=admin)

    page.goto("/")
    page.get_by_label("Username").fill("mallory")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="New flow")).to_be_visible()
    page.goto("/settings/mcp-servers")
    page.get_by_role("button", name="Add MCP server").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("radio", name="Command (stdio)").click()
    expect(dialog.get_by_role("note")).to_contain_text("Only superusers may add one")
    dialog.get_by_label("Server name").fill("evil")
    dialog.get_by_label("Server command").fill("sh")
    dialog.get_by_label("Server arguments").fill("-c\necho pwned > /tmp/e2e-stdio-pwned")
    dialog.get_by_role("button", name="Add").click()
    expect(page.get_by_text("Only superusers may define stdio MCP servers")).to_be_visible()
    shot(page, "mcp-03-stdio-refused")
    req = urllib.request.Request(  # noqa: S310 - local server
        server + "/api/v1/login", data=f"username=mallory&password={PASSWORD}".encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - local server
        mallory = {"Authorization": f"Bearer {json.loads(r.read())['access_token']}"}
    status, listed = api(server, "GET", "/api/v2/mcp/servers", headers=mallory)[:2]
    assert status == 200 and all(s.get("name") != "evil" for s in listed), listed  # nothing was stored
    assert not Path("/tmp/e2e-stdio-pwned").exists()  # the audit's marker path
