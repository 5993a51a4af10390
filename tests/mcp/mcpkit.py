"""Helpers of the MCP tests: a project with flows enabled as tools, JSON-RPC over the test client."""

from __future__ import annotations

import json
from typing import Any

from tests.run.runkit import chat_echo, create_flow


def project_with_tools(
    client: Any, caller: Any, auth_type: str = "apikey", names=("Echo One", "Echo Two")
) -> dict[str, Any]:
    created = client.post("/api/v1/projects/", json={"name": f"MCP {auth_type} {len(names)}"}, headers=caller.bearer)
    assert created.status_code == 201, created.get_json()
    project = created.get_json()
    flows = [create_flow(client, caller, chat_echo(), name=n, folder_id=project["id"]) for n in names]
    body = {
        "settings": [
            {"id": f["id"], "mcp_enabled": True, "action_name": None, "action_description": f"Echo {i}"}
            for i, f in enumerate(flows)
        ],
        "auth_settings": {"auth_type": auth_type},
    }
    patched = client.patch(f"/api/v1/mcp/project/{project['id']}", json=body, headers=caller.bearer)
    assert patched.status_code == 200, patched.get_json()
    return {"project": project, "flows": flows}


def rpc(client: Any, path: str, method: str, params: dict | None = None, headers: dict | None = None, id_: int = 1):
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return client.post(
        path,
        data=json.dumps(message),
        content_type="application/json",
        headers={"Accept": "application/json, text/event-stream", **(headers or {})},
    )


def sse_messages(raw: bytes) -> list[dict[str, Any]]:
    out = []
    for block in raw.decode().split("\n\n"):
        data = [line[5:].strip() for line in block.splitlines() if line.startswith("data:")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


def two_inputs_flow(sender_name_shown: bool = True, api_editable: tuple[str, ...] = ()) -> dict[str, Any]:
    """Chat Input + Text Input -> Combine Text -> Chat Output: the tool's input schema comes from both inputs.

    ``sender_name`` of the Chat Input is shown on the node (not advanced) when asked, as a user does in
    the editor; ``api_editable`` names ``(node id, field)`` pairs as ``node id/field`` declared editable.
    """
    from tests.flowkit import edge, flow, node

    chat_in = node("ChatInput", "ChatInput-AAAAA")
    text_in = node("TextInput", "TextInput-CCCCC")
    combine = node("CombineText", "CombineText-DDDDD")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB")
    if sender_name_shown:
        chat_in["data"]["node"]["template"]["sender_name"]["advanced"] = False
    for item in api_editable:
        node_id, field = item.split("/")
        target = chat_in if node_id == chat_in["id"] else text_in
        target["data"]["node"]["template"][field]["api_editable"] = True
    return flow(
        [chat_in, text_in, combine, chat_out],
        [
            edge(chat_in, "message", combine, "text1"),
            edge(text_in, "text", combine, "text2"),
            edge(combine, "combined_text", chat_out, "input_value"),
        ],
    )
