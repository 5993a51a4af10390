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
