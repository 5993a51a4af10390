"""A flow using components this install lacks imports, stays editable, and says what is missing;
running it says the same instead of "unknown component"."""

from __future__ import annotations

import io
import json

import pytest

from tests.flowkit import edge, export_and_import, flow, node, node_templates


@pytest.fixture
def app(make_app):
    return make_app(plugins=["accounts", "flows", "run", "standard"])


def _foreign(key: str, node_id: str) -> dict:
    return {
        "id": node_id,
        "type": "genericNode",
        "position": {"x": 0, "y": 0},
        "data": {"id": node_id, "type": key, "node": {"template": {"_type": "Component"}, "outputs": []}},
    }


def test_import_reports_missing_components_and_the_flow_stays_editable(client, alice):
    chat_in, chat_out = node("ChatInput", "ChatInput-1"), node("ChatOutput", "ChatOutput-1")
    data = flow(
        [chat_in, chat_out, _foreign("Agent", "Agent-1"), _foreign("SQLComponent", "SQL-1")],
        [edge(chat_in, "message", chat_out, "input_value")],
    )
    payload = json.dumps({"name": "needs more", "data": data}).encode()
    response = client.post(
        "/api/v1/flows/upload/",
        data={"file": (io.BytesIO(payload), "flow.json")},
        headers=alice.bearer,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_json()
    assert json.loads(response.headers["X-Service-Missing-Components"]) == [
        "component Agent (Agent) is not installed (bundle models)",
        "component SQL Database (SQLComponent) is not installed (bundle data)",
    ]
    flow_id = response.get_json()[0]["id"]
    stored = client.get(f"/api/v1/flows/{flow_id}", headers=alice.bearer).get_json()
    assert [n["data"]["type"] for n in stored["data"]["nodes"]][2:] == ["Agent", "SQLComponent"]
    stored["data"]["nodes"] = stored["data"]["nodes"][:2] + stored["data"]["nodes"][3:]
    edited = client.patch(f"/api/v1/flows/{flow_id}", json={"data": stored["data"]}, headers=alice.bearer)
    assert edited.status_code == 200
    run = client.post(f"/api/v1/run/{flow_id}", json={"input_value": "hi"}, headers=alice.key)
    assert run.status_code == 422
    assert run.get_json()["detail"][0]["msg"] == (
        "Component SQL Database (SQLComponent) is not installed (bundle data) (node 'SQL-1')"
    )


def test_import_without_missing_components_has_no_header(client, alice):
    data = flow([node("ChatInput", "ChatInput-1")], [])
    response = client.post(
        "/api/v1/flows/upload/",
        data={"file": (io.BytesIO(json.dumps({"name": "ok", "data": data}).encode()), "flow.json")},
        headers=alice.bearer,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201 and "X-Service-Missing-Components" not in response.headers


def test_every_native_component_round_trips_through_export_and_import(make_app):
    """One flow holding a node of each of the 68 native components: create, download, upload as another
    user, and every node comes back identical and builds."""
    from core.app import state
    from core.engine import Graph
    from tests.conftest import make_user, superuser

    app = make_app(plugins=["accounts", "flows", "run", "standard", "data", "tools", "sandbox"])
    client = app.test_client()
    admin = superuser(client)
    alice, bob = make_user(client, admin, username="alice"), make_user(client, admin, username="bob")
    registry = state(app).components.current
    assert len(registry) == 68
    nodes = [node(key, f"n{i}", registry=registry) for i, key in enumerate(sorted(registry.keys()))]
    created = client.post("/api/v1/flows/", json={"name": "all", "data": flow(nodes, [])}, headers=alice.bearer)
    assert created.status_code == 201, created.get_json()
    data = export_and_import(client, alice, bob, created.get_json()["id"], "all.json")
    assert node_templates(data["nodes"]) == node_templates(nodes)
    assert len(Graph.build(data, registry).vertices) == 68
