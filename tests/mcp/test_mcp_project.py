"""Project MCP servers in process: settings operations, the auth matrix, JSON-RPC over Streamable HTTP."""

from __future__ import annotations

import pytest

from tests.mcp.mcpkit import project_with_tools, rpc, sse_messages

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


@pytest.fixture
def setup(client, alice):
    return project_with_tools(client, alice)


def streamable(setup) -> str:
    return f"/api/v1/mcp/project/{setup['project']['id']}/streamable"


def test_list_tools_and_settings(client, alice, setup):
    pid = setup["project"]["id"]
    body = client.get(f"/api/v1/mcp/project/{pid}", headers=alice.key).get_json()
    assert [t["name"] for t in body["tools"]] == ["Echo One", "Echo Two"]
    assert set(body["tools"][0]) == {"id", "mcp_enabled", "action_name", "action_description", "name", "description"}
    assert body["auth_settings"] == {"auth_type": "apikey"}
    assert body["server_name"].startswith("svc-mcp_apikey")
    # disable one: the mcp_enabled filter (default true) hides it, false shows it
    one = setup["flows"][0]["id"]
    patched = client.patch(
        f"/api/v1/mcp/project/{pid}", json={"settings": [{"id": one, "mcp_enabled": False}]}, headers=alice.bearer
    )
    assert patched.get_json() == {"message": "Updated MCP settings for 1 flows and project auth settings"}
    assert len(client.get(f"/api/v1/mcp/project/{pid}", headers=alice.key).get_json()["tools"]) == 1
    assert len(client.get(f"/api/v1/mcp/project/{pid}?mcp_enabled=false", headers=alice.key).get_json()["tools"]) == 2


def test_settings_validation_and_foreign(client, alice, bob, setup):
    pid = setup["project"]["id"]
    missing = client.patch(f"/api/v1/mcp/project/{pid}", json={}, headers=alice.bearer)
    assert missing.status_code == 422 and missing.get_json()["detail"][0]["loc"] == ["body", "settings"]
    for path in ("", "/composer-url", "/installed"):
        assert client.get(f"/api/v1/mcp/project/{pid}{path}", headers=bob.bearer).status_code == 404
    assert client.patch(f"/api/v1/mcp/project/{pid}", json={"settings": []}, headers=bob.bearer).status_code == 404


def test_oauth_secret_is_encrypted_and_never_returned(app, client, alice, setup):
    pid = setup["project"]["id"]
    auth = {"auth_type": "oauth", "oauth_client_id": "cid", "oauth_client_secret": "s3cr3t-value", "oauth_host": "h"}
    patched = client.patch(
        f"/api/v1/mcp/project/{pid}", json={"settings": [], "auth_settings": auth}, headers=alice.bearer
    )
    assert patched.status_code == 200 and "authorization server" in patched.get_json()["error_message"]
    for response in (
        client.get(f"/api/v1/mcp/project/{pid}", headers=alice.bearer),
        client.get(f"/api/v1/projects/{pid}", headers=alice.bearer),
        client.get("/api/v1/projects/", headers=alice.bearer),
        client.get(f"/api/v1/mcp/project/{pid}/composer-url", headers=alice.bearer),
    ):
        assert response.status_code == 200
        assert b"s3cr3t-value" not in response.data
    from sqlalchemy import text

    from core import db

    with app.app_context():
        rows = db.session().execute(text("select oauth_client_secret from mcp_project_secret")).all()
        folder = (
            db.session().execute(text("select auth_settings from flows_folder where auth_settings is not null")).all()
        )
    assert len(rows) == 1 and "s3cr3t" not in rows[0][0]
    assert all("s3cr3t" not in str(r[0]) for r in folder)
    # sent through the projects API, a secret is dropped, not stored in the clear
    client.patch(
        f"/api/v1/projects/{pid}",
        json={"auth_settings": {"auth_type": "oauth", "oauth_client_secret": "plain-x"}},
        headers=alice.bearer,
    )
    assert b"plain-x" not in client.get(f"/api/v1/projects/{pid}", headers=alice.bearer).data


def test_composer_url_and_install_snippets(client, alice, setup):
    pid = setup["project"]["id"]
    urls = client.get(f"/api/v1/mcp/project/{pid}/composer-url", headers=alice.bearer).get_json()
    assert urls == {
        "project_id": pid,
        "uses_composer": False,
        "streamable_http_url": f"http://localhost/api/v1/mcp/project/{pid}/streamable",
        "legacy_sse_url": f"http://localhost/api/v1/mcp/project/{pid}/sse",
        "error_message": None,
    }
    name = client.get(f"/api/v1/mcp/project/{pid}", headers=alice.bearer).get_json()["server_name"]
    expected = {
        "cursor": {
            "mcpServers": {name: {"url": urls["streamable_http_url"], "headers": {"x-api-key": "<YOUR_API_KEY>"}}}
        },
        "windsurf": {
            "mcpServers": {name: {"serverUrl": urls["streamable_http_url"], "headers": {"x-api-key": "<YOUR_API_KEY>"}}}
        },
        "vscode": {
            "servers": {
                name: {"type": "http", "url": urls["streamable_http_url"], "headers": {"x-api-key": "<YOUR_API_KEY>"}}
            }
        },
        "claude": {
            "mcpServers": {
                name: {
                    "command": "uvx",
                    "args": [
                        "mcp-proxy",
                        "--transport",
                        "streamablehttp",
                        "--headers",
                        "x-api-key",
                        "<YOUR_API_KEY>",
                        urls["streamable_http_url"],
                    ],
                }
            }
        },
    }
    for client_name, config in expected.items():
        body = client.post(
            f"/api/v1/mcp/project/{pid}/install", json={"client": client_name}, headers=alice.bearer
        ).get_json()
        assert body["config"] == config and body["written"] is False, client_name
    sse = client.post(
        f"/api/v1/mcp/project/{pid}/install", json={"client": "cursor", "transport": "sse"}, headers=alice.bearer
    )
    assert sse.get_json()["config"]["mcpServers"][name]["url"] == urls["legacy_sse_url"]
    bad = client.post(f"/api/v1/mcp/project/{pid}/install", json={"client": "emacs"}, headers=alice.bearer)
    assert bad.status_code == 400 and "emacs" in bad.get_json()["detail"]
    installed = client.get(f"/api/v1/mcp/project/{pid}/installed", headers=alice.bearer).get_json()
    assert [i["name"] for i in installed] == ["cursor", "windsurf", "claude", "vscode"]
    assert all(i["installed"] is False for i in installed)


def test_auth_matrix(client, admin, alice, bob):
    keyed = project_with_tools(client, alice, "apikey")
    open_ = project_with_tools(client, alice, "none", names=("Open Echo",))
    path = streamable(keyed)
    assert rpc(client, path, "initialize", INIT).status_code == 401
    assert rpc(client, path, "initialize", INIT, {"x-api-key": "sk-wrong"}).status_code == 403
    assert rpc(client, path, "initialize", INIT, {"x-api-key": bob.api_key}).status_code == 404  # foreign
    assert rpc(client, path, "initialize", INIT, {"Authorization": f"Bearer {bob.token}"}).status_code == 404
    for headers in ({"x-api-key": alice.api_key}, {"Authorization": f"Bearer {alice.api_key}"}, alice.bearer):
        assert rpc(client, path, "tools/list", {}, headers).status_code == 200, headers
    # auth_type none: no credentials needed; the tools run as the owner
    reply = sse_messages(
        rpc(client, streamable(open_), "tools/call", {"name": "open_echo", "arguments": {"input_value": "hi"}}).data
    )
    assert reply[-1]["result"] == {"content": [{"type": "text", "text": "hi"}], "isError": False}
    assert rpc(client, "/api/v1/mcp/project/00000000-0000-0000-0000-000000000000/streamable", "ping").status_code == 404


def test_jsonrpc_methods(client, alice, setup):
    path, h = streamable(setup), {"x-api-key": alice.api_key}
    init = sse_messages(rpc(client, path, "initialize", INIT, h).data)[0]["result"]
    assert init["protocolVersion"] == "2025-06-18"
    assert init["serverInfo"]["name"] == f"service-mcp-project-{setup['project']['id']}"
    assert init["capabilities"]["tools"] == {"listChanged": True}
    assert (
        sse_messages(rpc(client, path, "initialize", {**INIT, "protocolVersion": "1999-01-01"}, h).data)[0]["result"][
            "protocolVersion"
        ]
        == "2025-11-25"
    )
    tools = sse_messages(rpc(client, path, "tools/list", {}, h).data)[0]["result"]["tools"]
    assert [(t["name"], t["description"]) for t in tools] == [("echo_one", "Echo 0"), ("echo_two", "Echo 1")]
    assert tools[0]["inputSchema"]["properties"]["input_value"]["type"] == "string"
    called = sse_messages(
        rpc(
            client,
            path,
            "tools/call",
            {"name": "echo_two", "arguments": {"input_value": "yo"}, "_meta": {"progressToken": 7}},
            h,
        ).data
    )
    assert [m.get("method") for m in called[:-1]] == ["notifications/progress"] * 2
    assert [(m["params"]["progressToken"], m["params"]["progress"], m["params"]["total"]) for m in called[:-1]] == [
        (7, 1.0, 2.0),
        (7, 2.0, 2.0),
    ]
    assert called[-1]["result"]["content"][0]["text"] == "yo"
    unknown = sse_messages(rpc(client, path, "tools/call", {"name": "nope"}, h).data)[0]["result"]
    assert unknown["isError"] is True and "Unknown tool" in unknown["content"][0]["text"]
    no_envelope = rpc(client, path, "server/discover", {}, h)  # modern, but without its _meta envelope
    assert no_envelope.status_code == 400 and no_envelope.get_json()["error"]["code"] == -32602
    assert sse_messages(rpc(client, path, "ping", None, h).data)[0]["result"] == {}
    bad = sse_messages(rpc(client, path, "tools/call", {"arguments": {}}, h).data)[0]
    assert bad["error"]["code"] == -32602
    notif = client.post(path, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
    assert notif.status_code == 202
    parse = client.post(path, data="{nope", content_type="application/json", headers=h)
    assert parse.status_code == 400 and parse.get_json()["error"]["code"] == -32700
    assert client.get(path, headers=h).status_code == 405  # stateless: no server stream
    assert client.delete(path, headers=h).status_code == 405
    json_only = client.post(
        path, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers={**h, "Accept": "application/json"}
    )
    assert json_only.mimetype == "application/json" and json_only.get_json() == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {},
    }


def test_failing_flow_is_an_error_result(client, alice):
    from tests.run.runkit import create_flow

    made = project_with_tools(client, alice, "apikey", names=("Good",))
    pid = made["project"]["id"]
    broken = create_flow(
        client,
        alice,
        {"nodes": [{"id": "x", "data": {"type": "NoSuchComponent", "id": "x"}}], "edges": []},
        name="Broken",
        folder_id=pid,
    )
    client.patch(
        f"/api/v1/mcp/project/{pid}",
        json={"settings": [{"id": broken["id"], "mcp_enabled": True}]},
        headers=alice.bearer,
    )
    reply = sse_messages(
        rpc(
            client, streamable(made), "tools/call", {"name": "broken", "arguments": {}}, {"x-api-key": alice.api_key}
        ).data
    )[-1]
    assert reply["result"]["isError"] is True and reply["result"]["content"][0]["text"].startswith(
        "Error running broken"
    )


def test_global_server_lists_every_flow(client, alice, bob):
    project_with_tools(client, alice)
    body = sse_messages(rpc(client, "/api/v1/mcp/streamable", "tools/list", {}, {"x-api-key": alice.api_key}).data)
    names = [t["name"] for t in body[0]["result"]["tools"]]
    assert "echo_one" in names and "echo_two" in names
    other = sse_messages(rpc(client, "/api/v1/mcp/streamable", "tools/list", {}, {"x-api-key": bob.api_key}).data)
    assert "echo_one" not in [t["name"] for t in other[0]["result"]["tools"]]
    assert rpc(client, "/api/v1/mcp/streamable", "tools/list", {}).status_code == 401


def test_a_remembered_tool_name_follows_changes(client, alice, setup):
    """Calls remember which flow a name leads to; disabling, renaming or moving the flow is seen at once."""
    pid, (one, two) = setup["project"]["id"], setup["flows"]
    path, h = streamable(setup), {"x-api-key": alice.api_key}

    def call(name: str) -> dict:
        args = {"name": name, "arguments": {"input_value": "x"}}
        return sse_messages(rpc(client, path, "tools/call", args, h).data)[-1]["result"]

    assert call("echo_one")["isError"] is False
    client.patch(
        f"/api/v1/mcp/project/{pid}", json={"settings": [{"id": one["id"], "mcp_enabled": False}]}, headers=alice.bearer
    )
    assert call("echo_one")["isError"] is True
    renamed = {"settings": [{"id": two["id"], "mcp_enabled": True, "action_name": "echo_one"}]}
    client.patch(f"/api/v1/mcp/project/{pid}", json=renamed, headers=alice.bearer)
    assert call("echo_one")["isError"] is False  # now the second flow
    assert call("echo_two")["isError"] is True
    other = client.post("/api/v1/projects/", json={"name": "elsewhere"}, headers=alice.bearer).get_json()
    client.patch(f"/api/v1/flows/{two['id']}", json={"folder_id": other["id"]}, headers=alice.bearer)
    assert call("echo_one")["isError"] is True


def _tool(client, caller, path: str, name: str) -> dict:
    tools = sse_messages(rpc(client, path, "tools/list", {}, {"x-api-key": caller.api_key}).data)[0]["result"]["tools"]
    return next(t for t in tools if t["name"] == name)


def _inputs_project(client, caller, data: dict) -> tuple[str, str]:
    from tests.run.runkit import create_flow

    project = client.post("/api/v1/projects/", json={"name": "Inputs"}, headers=caller.bearer).get_json()
    made = create_flow(client, caller, data, name="Two Inputs", folder_id=project["id"])
    body = {"settings": [{"id": made["id"], "mcp_enabled": True}], "auth_settings": {"auth_type": "apikey"}}
    assert client.patch(f"/api/v1/mcp/project/{project['id']}", json=body, headers=caller.bearer).status_code == 200
    return f"/api/v1/mcp/project/{project['id']}/streamable", made["id"]


def test_input_schema_comes_from_the_flow_inputs(client, alice):
    from tests.mcp.mcpkit import two_inputs_flow

    path, _flow_id = _inputs_project(client, alice, two_inputs_flow())
    schema = _tool(client, alice, path, "two_inputs")["inputSchema"]
    assert schema["type"] == "object" and schema["required"] == []
    props = schema["properties"]
    assert list(props) == ["input_value", "session_id", "sender_name", "input_value__TextInput-CCCCC"]
    assert props["input_value"] == {"type": "string", "description": "Message to be passed as input."}
    assert props["sender_name"] == {"type": "string", "description": "Name of the sender."}
    assert props["input_value__TextInput-CCCCC"]["description"] == "Text to be passed as input."
    # advanced fields (store messages, files, the Text Input's global-variable switch) are not arguments
    assert not {"should_store_message", "files", "use_global_variable", "sender"} & set(props)

    def call(arguments: dict) -> dict:
        params = {"name": "two_inputs", "arguments": arguments}
        return sse_messages(rpc(client, path, "tools/call", params, {"x-api-key": alice.api_key}).data)[-1]["result"]

    # the arguments reach the run: input_value the Chat Input, the Text Input's value as its tweak
    done = call({"input_value": "hello", "input_value__TextInput-CCCCC": "world", "sender_name": "Bot"})
    assert done == {"content": [{"type": "text", "text": "hello world"}], "isError": False}
    unknown = call({"input_value": "x", "nope": 1})
    assert unknown["isError"] is True and "Unknown argument(s) for two_inputs: nope" in unknown["content"][0]["text"]
    wrong_type = call({"input_value": "x", "sender_name": {"not": "a string"}})
    assert wrong_type["isError"] is True
    assert wrong_type["content"][0]["text"].startswith("Invalid arguments for two_inputs: sender_name: {'not'")


def test_input_schema_follows_the_tweaks_policy(make_app):
    from tests.conftest import make_user, superuser
    from tests.mcp.conftest import PLUGINS
    from tests.mcp.mcpkit import two_inputs_flow

    for policy, expected in (
        ("declared", ["input_value", "session_id", "input_value__TextInput-CCCCC"]),
        ("off", ["input_value", "session_id"]),
    ):
        app = make_app(plugins=PLUGINS, tweaks_policy=policy)
        client = app.test_client()
        owner = make_user(client, superuser(client))
        data = two_inputs_flow(api_editable=("TextInput-CCCCC/input_value",))
        path, _flow_id = _inputs_project(client, owner, data)
        assert list(_tool(client, owner, path, "two_inputs")["inputSchema"]["properties"]) == expected, policy
        params = {"name": "two_inputs", "arguments": {"input_value": "a", "sender_name": "x"}}
        refused = sse_messages(rpc(client, path, "tools/call", params, {"x-api-key": owner.api_key}).data)[-1]
        assert refused["result"]["isError"] is True  # not an argument under this policy
        if policy == "declared":
            params = {"name": "two_inputs", "arguments": {"input_value": "a", "input_value__TextInput-CCCCC": "b"}}
            ok = sse_messages(rpc(client, path, "tools/call", params, {"x-api-key": owner.api_key}).data)[-1]
            assert ok["result"]["content"][0]["text"] == "a b"


def test_a_text_input_flow_takes_input_value(client, alice):
    from tests.flowkit import edge, flow, node

    text_in, out = node("TextInput", "TextInput-CCCCC"), node("ChatOutput", "ChatOutput-BBBBB")
    path, _flow_id = _inputs_project(client, alice, flow([text_in, out], [edge(text_in, "text", out, "input_value")]))
    schema = _tool(client, alice, path, "two_inputs")["inputSchema"]
    assert list(schema["properties"]) == ["input_value", "session_id"]
    params = {"name": "two_inputs", "arguments": {"input_value": "plain text"}}
    done = sse_messages(rpc(client, path, "tools/call", params, {"x-api-key": alice.api_key}).data)[-1]["result"]
    assert done["content"][0]["text"] == "plain text"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_each_handshake_version_is_negotiated(client, alice, setup, version):
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert version in HANDSHAKE_PROTOCOL_VERSIONS  # every one the installed SDK knows is in the parameters
    assert set(HANDSHAKE_PROTOCOL_VERSIONS) == {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
    path, h = streamable(setup), {"x-api-key": alice.api_key}
    init = sse_messages(rpc(client, path, "initialize", {**INIT, "protocolVersion": version}, h).data)[0]["result"]
    assert init["protocolVersion"] == version and "resultType" not in init
    listed = rpc(client, path, "tools/list", {}, {**h, "MCP-Protocol-Version": version})
    assert listed.status_code == 200
    assert "resultType" not in sse_messages(listed.data)[0]["result"]


def modern(client, path, method, params=None, headers=None, version="2026-07-28", name=None, id_=1):
    from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

    meta = {
        PROTOCOL_VERSION_META_KEY: version,
        CLIENT_CAPABILITIES_META_KEY: {},
        CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
    }
    body = {**(params or {}), "_meta": {**(params or {}).get("_meta", {}), **meta}}
    h = {"MCP-Protocol-Version": version, "Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
    return rpc(client, path, method, body, {**h, **(headers or {})}, id_=id_)


def test_modern_version_2026_07_28(client, alice, setup):
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    assert MODERN_PROTOCOL_VERSIONS == ("2026-07-28",)  # a new SDK version: add it to these tests
    path, h = streamable(setup), {"x-api-key": alice.api_key}
    found = modern(client, path, "server/discover", headers=h).get_json()["result"]  # JSON without a progress token
    assert found["supportedVersions"] == ["2026-07-28"] and found["resultType"] == "complete"
    assert found["capabilities"]["tools"] == {"listChanged": True}
    assert (
        found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == f"service-mcp-project-{setup['project']['id']}"
    )
    listed = modern(client, path, "tools/list", headers=h).get_json()["result"]
    assert [t["name"] for t in listed["tools"]] == ["echo_one", "echo_two"] and listed["resultType"] == "complete"
    params = {"name": "echo_one", "arguments": {"input_value": "modern"}, "_meta": {"progressToken": "p"}}
    called = sse_messages(modern(client, path, "tools/call", params, h, name="echo_one").data)
    assert [m.get("method") for m in called[:-1]] == ["notifications/progress"] * 2
    assert called[-1]["result"] == {
        "content": [{"type": "text", "text": "modern"}],
        "isError": False,
        "resultType": "complete",
    }
    # the envelope ladder of the SDK: headers must agree with the body; unknown modern versions are -32022
    mismatch = modern(client, path, "tools/call", params, {**h, "Mcp-Name": "echo_two"}, name="echo_one")
    assert mismatch.status_code == 400 and mismatch.get_json()["error"]["code"] == -32020
    unsupported = modern(client, path, "tools/list", headers=h, version="2099-01-01")
    assert unsupported.status_code == 400
    assert unsupported.get_json()["error"]["code"] == -32022
    assert unsupported.get_json()["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}
    # no handshake in the modern era; a notification is accepted and dropped
    handshake = modern(client, path, "initialize", INIT, h)
    assert handshake.status_code == 404 and handshake.get_json()["error"]["code"] == -32601
    note = client.post(
        path,
        json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        headers={**h, "MCP-Protocol-Version": "2026-07-28"},
    )
    assert note.status_code == 202
    # JSON replies when the client accepts only JSON
    only_json = modern(client, path, "ping", headers={**h, "Accept": "application/json"})
    assert only_json.get_json()["result"] == {"resultType": "complete"}


def test_input_schema_follows_edits_of_the_flow(client, alice):
    from tests.mcp.mcpkit import two_inputs_flow

    path, flow_id = _inputs_project(client, alice, two_inputs_flow())
    assert "sender_name" in _tool(client, alice, path, "two_inputs")["inputSchema"]["properties"]
    assert "sender_name" in _tool(client, alice, path, "two_inputs")["inputSchema"]["properties"]  # known now
    edited = client.patch(
        f"/api/v1/flows/{flow_id}", json={"data": two_inputs_flow(sender_name_shown=False)}, headers=alice.bearer
    )
    assert edited.status_code == 200
    assert "sender_name" not in _tool(client, alice, path, "two_inputs")["inputSchema"]["properties"]
    params = {"name": "two_inputs", "arguments": {"input_value": "a", "sender_name": "x"}}
    refused = sse_messages(rpc(client, path, "tools/call", params, {"x-api-key": alice.api_key}).data)[-1]["result"]
    assert refused["isError"] is True and "sender_name" in refused["content"][0]["text"]
