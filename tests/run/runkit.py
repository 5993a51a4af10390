"""Helpers of the run tests: flows built from real catalog nodes, uploads, stream parsing, job waits."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from service_bundle_standard.bundle import all_components

from core.app import state
from core.engine import Registry

REFERENCE_FLOWS = Path("/work/shared/reference/flows")
LOCAL_FLOWS = Path(__file__).resolve().parents[1] / "reference_flows"
_REGISTRY: Registry | None = None


def registry() -> Registry:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = Registry.from_classes(all_components())
    return _REGISTRY


def reference(name: str) -> dict[str, Any]:
    """A reference export (the copy in tests/reference_flows when the shared folder is absent)."""
    for base in (REFERENCE_FLOWS, LOCAL_FLOWS):
        if (base / name).exists():
            return json.loads((base / name).read_text(encoding="utf-8"))
    raise FileNotFoundError(name)


def node(key: str, node_id: str, **values: Any) -> dict[str, Any]:
    """A node as the editor saves it (the catalog node), with some field values set and shown."""
    fnode = registry()[key].to_frontend_node()
    for name, value in values.items():
        fnode["template"][name]["value"] = value
        fnode["template"][name]["show"] = True
    return {
        "id": node_id,
        "type": "genericNode",
        "position": {"x": 0, "y": 0},
        "data": {"id": node_id, "type": key, "node": fnode},
    }


def edge(source: dict[str, Any], output: str, target: dict[str, Any], field: str) -> dict[str, Any]:
    out_types = next(o["types"] for o in source["data"]["node"]["outputs"] if o["name"] == output)
    sh = {"dataType": source["data"]["type"], "id": source["id"], "name": output, "output_types": out_types}
    tfield = target["data"]["node"]["template"][field]
    th = {"fieldName": field, "id": target["id"], "inputTypes": tfield.get("input_types"), "type": tfield["type"]}
    return {
        "id": f"e-{source['id']}-{target['id']}-{field}",
        "source": source["id"],
        "target": target["id"],
        "data": {"sourceHandle": sh, "targetHandle": th},
    }


def flow_data(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nodes": nodes, "edges": edges, "viewport": {"x": 0, "y": 0, "zoom": 1}}


def chat_echo(**output_values: Any) -> dict[str, Any]:
    """Chat Input -> Chat Output (``ChatInput-AAAAA`` / ``ChatOutput-BBBBB``)."""
    chat_in = node("ChatInput", "ChatInput-AAAAA")
    chat_out = node("ChatOutput", "ChatOutput-BBBBB", **output_values)
    return flow_data([chat_in, chat_out], [edge(chat_in, "message", chat_out, "input_value")])


def create_flow(client: Any, caller: Any, data: dict[str, Any], name: str = "flow", **extra: Any) -> dict[str, Any]:
    response = client.post("/api/v1/flows/", json={"name": name, "data": data, **extra}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def upload(client: Any, caller: Any, document: dict[str, Any], filename: str = "flow.json") -> dict[str, Any]:
    raw = json.dumps(document).encode()
    response = client.post(
        "/api/v1/flows/upload/",
        data={"file": (io.BytesIO(raw), filename)},
        headers=caller.bearer,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_json()
    [flow] = response.get_json()
    return flow


def answer(body: dict[str, Any]) -> str:
    """The text the reference documents as the answer of a run response."""
    return body["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def frames(raw: bytes) -> list[dict[str, Any]]:
    """Split a v1 run stream: bare JSON objects separated by blank lines (no SSE prefixes)."""
    text = raw.decode()
    assert text.endswith("\n\n"), text[-50:]
    parts = text.split("\n\n")[:-1]
    out = []
    for part in parts:
        assert not part.startswith(("data:", "event:", "id:")), part[:40]
        out.append(json.loads(part))
    return out


def wait_jobs(app: Any, timeout: float = 10.0) -> None:
    assert state(app).jobs.join(timeout), "background jobs still running"
