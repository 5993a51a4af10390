"""Helpers to write flows in tests (engine, run, build, flows): nodes are real catalog nodes
(``to_frontend_node``) like the UI saves, edges carry the UI's handle strings, and the reference
exports load from ``../shared`` or the copies in ``tests/reference_flows``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from service_bundle_standard.bundle import all_components

from core.engine import Registry

REPO = Path(__file__).resolve().parents[1]
REFERENCE_FLOWS = REPO.parent / "shared" / "reference" / "flows"
LOCAL_FLOWS = REPO / "tests" / "reference_flows"

_REGISTRY: Registry | None = None


def standard_registry() -> Registry:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = Registry.from_classes(all_components())
    return _REGISTRY


def reference_path(name: str) -> Path:
    """The file of a reference export: in ``../shared``, else the copy kept in ``tests/reference_flows``."""
    for base in (REFERENCE_FLOWS, LOCAL_FLOWS):
        if (base / name).exists():
            return base / name
    raise FileNotFoundError(name)


def load_reference(name: str) -> dict[str, Any]:
    return json.loads(reference_path(name).read_text(encoding="utf-8"))


def node(
    key: str,
    node_id: str | None = None,
    *,
    show: dict[str, bool] | None = None,
    frozen: bool = False,
    registry: Registry | None = None,
    **values: Any,
) -> dict[str, Any]:
    klass = (registry or standard_registry())[key]
    nid = node_id or f"{key}-{abs(hash((key, tuple(values)))) % 100000:05d}"
    fnode = klass.to_frontend_node()
    for name, value in values.items():
        if name not in fnode["template"]:
            fnode["template"][name] = {
                "name": name,
                "type": "str",
                "show": True,
                "value": value,
                "input_types": ["Message"],
            }
        else:
            fnode["template"][name]["value"] = value
            fnode["template"][name]["show"] = True
    for name, flag in (show or {}).items():
        fnode["template"][name]["show"] = flag
    fnode["frozen"] = frozen
    return {
        "id": nid,
        "type": "genericNode",
        "position": {"x": 0, "y": 0},
        "data": {"id": nid, "type": key, "node": fnode},
    }


def edge(
    source: dict[str, Any], output: str, target: dict[str, Any], field: str, *, loop: bool = False
) -> dict[str, Any]:
    src_key = source["data"]["type"]
    out_types = next((o["types"] for o in source["data"]["node"]["outputs"] if o["name"] == output), ["Message"])
    sh = {"dataType": src_key, "id": source["id"], "name": output, "output_types": out_types}
    if loop:
        th: dict[str, Any] = {
            "dataType": target["data"]["type"],
            "id": target["id"],
            "name": field,
            "output_types": out_types,
        }
    else:
        tfield = target["data"]["node"]["template"].get(field, {})
        th = {
            "fieldName": field,
            "id": target["id"],
            "inputTypes": tfield.get("input_types"),
            "type": tfield.get("type", "str"),
        }
    enc = lambda d: json.dumps(d, separators=(", ", ": ")).replace('"', "œ")  # noqa: E731 - as the UI does
    return {
        "id": f"reactflow__edge-{source['id']}{enc(sh)}-{target['id']}{enc(th)}",
        "source": source["id"],
        "target": target["id"],
        "sourceHandle": enc(sh),
        "targetHandle": enc(th),
        "data": {"sourceHandle": sh, "targetHandle": th},
    }


def flow(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nodes": nodes, "edges": edges, "viewport": {"x": 0, "y": 0, "zoom": 1}}


class EventLog:
    """Collects ``emit`` calls (typed run events), as ``(name, payload)`` pairs.

    ``vertex_start`` is left out: the tests compare against the reference's build events.
    """

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.typed: list[Any] = []

    def __call__(self, event: Any) -> None:
        self.typed.append(event)
        if event.name == "vertex_start":
            return
        data = event.payload()
        json.dumps(data)  # every payload must be JSON-serialisable
        self.events.append((event.name, data))

    @property
    def names(self) -> list[str]:
        return [e for e, _ in self.events]

    def of(self, name: str) -> list[dict[str, Any]]:
        return [d for e, d in self.events if e == name]


def export_and_import(client: Any, owner: Any, other: Any, flow_id: str, filename: str = "flow.json") -> dict[str, Any]:
    """Download ``flow_id`` as ``owner`` and upload the file as ``other``: the imported flow's data (the
    upload answered 201 and named no missing component)."""
    exported = client.post("/api/v1/flows/download/", json=[flow_id], headers=owner.bearer)
    assert exported.status_code == 200
    uploaded = client.post(
        "/api/v1/flows/upload/",
        data={"file": (io.BytesIO(exported.get_data()), filename)},
        headers=other.bearer,
        content_type="multipart/form-data",
    )
    assert uploaded.status_code == 201 and "X-Service-Missing-Components" not in uploaded.headers
    return dict(uploaded.get_json()[0]["data"])


def node_templates(nodes: list[dict[str, Any]]) -> list[Any]:
    """The nodes' ``data.node`` as JSON reads them back (to compare a flow's nodes before and after a trip)."""
    return [json.loads(json.dumps(n["data"]["node"])) for n in nodes]
