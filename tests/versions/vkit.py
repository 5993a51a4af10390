"""Helpers of the versions tests: small graphs whose nodes and edges a diff can name."""

from __future__ import annotations

import copy
from typing import Any


def graph(*values: str, x: float = 0) -> dict[str, Any]:
    """A chain of ``Thing`` nodes ``N-0 -> N-1 ...`` each with a ``text`` field and a secret ``api_key``."""
    nodes = []
    for i, value in enumerate(values):
        template = {
            "_type": "Component",
            "text": {"name": "text", "type": "str", "value": value},
            "api_key": {"name": "api_key", "type": "str", "password": True, "value": f"sk-secret-{i}"},
        }
        nodes.append(
            {
                "id": f"N-{i}",
                "type": "genericNode",
                "position": {"x": x + i * 100, "y": 0},
                "data": {"id": f"N-{i}", "type": "Thing", "node": {"display_name": f"Thing {i}", "template": template}},
            }
        )
    edges = [
        {"id": f"e-{i}", "source": f"N-{i}", "target": f"N-{i + 1}", "sourceHandle": "out", "targetHandle": "in"}
        for i in range(len(values) - 1)
    ]
    return {"nodes": nodes, "edges": edges, "viewport": {"x": 0, "y": 0, "zoom": 1}}


def edited(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    for node in out["nodes"]:
        if node["id"] in changes:
            node["data"]["node"]["template"]["text"]["value"] = changes[node["id"]]
    return out


def create(client: Any, caller: Any, data: dict[str, Any], name: str = "flow", **extra: Any) -> dict[str, Any]:
    response = client.post("/api/v1/flows/", json={"name": name, "data": data, **extra}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def save(client: Any, caller: Any, flow_id: str, data: dict[str, Any], token: str | None = None) -> Any:
    headers = dict(caller.bearer)
    if token is not None:
        headers["If-Match"] = token
    return client.patch(f"/api/v1/flows/{flow_id}", json={"data": data}, headers=headers)


def versions(client: Any, caller: Any, flow_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/v1/flows/{flow_id}/versions/", headers=caller.bearer)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["entries"]
