"""The catalog policy enforced wherever a component can enter: catalog, examples, flows, every run surface."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.build.buildkit import parse
from tests.conftest import make_user, superuser
from tests.policies.conftest import PLUGINS
from tests.run.runkit import answer, chat_echo, create_flow, flow_data, node, wait_jobs

COMPONENTS = "/api/v1/catalog-policy/components"
TEMPLATES = "/api/v1/catalog-policy/templates"
HEADER = "X-Service-Blocked-Components"


def block(client, admin, *keys):
    response = client.put(COMPONENTS, json={"blocked": list(keys)}, headers=admin.bearer)
    assert response.status_code == 200, response.get_json()


def test_catalog_hides_blocked_components_unless_a_superuser_includes_them(client, admin):
    alice = make_user(client, admin, username="alice")
    before = client.get("/api/v1/all", headers=alice.key).get_json()
    assert "ChatOutput" in before["input_output"]
    block(client, admin, "ChatOutput", "Prompt")  # "Prompt" is the legacy alias of "Prompt Template"
    after = client.get("/api/v1/all", headers=alice.key).get_json()
    assert "ChatOutput" not in after["input_output"] and "ChatInput" in after["input_output"]
    assert "ChatOutput" not in after["component_display_names"]
    assert not any("Prompt Template" in nodes for nodes in after.values())
    full = client.get("/api/v1/all?include_blocked=true", headers=admin.key).get_json()
    assert "ChatOutput" in full["input_output"]
    assert client.get("/api/v1/all?include_blocked=true", headers=alice.key).status_code == 403
    block(client, admin)  # unblocked: back in the catalog at once
    assert "ChatOutput" in client.get("/api/v1/all", headers=alice.key).get_json()["input_output"]


def test_config_tells_the_truth(client, admin):
    config = client.get("/api/v1/config", headers=admin.bearer).get_json()
    assert config["catalog_governance_enabled"] is False and config["blocked_component_types"] == []
    block(client, admin, "ChatInput")
    config = client.get("/api/v1/config", headers=admin.bearer).get_json()
    assert config["catalog_governance_enabled"] is True
    assert config["blocked_component_types"] == ["Chat Input", "ChatInput"]  # key and display name, as the reference
    public = client.get("/api/v1/config").get_json()
    assert public["catalog_governance_enabled"] is True and "blocked_component_types" not in public


def test_examples_and_starter_projects_hide_blocked_templates_and_components(client, admin):
    alice = make_user(client, admin, username="alice")
    names = lambda r: sorted(f["name"] for f in r.get_json())  # noqa: E731
    folder = Path(__file__).resolve().parents[2] / "plugins/flows/service_flows/examples"
    examples = {  # template slug (file name) -> (name, component keys)
        path.stem: (flow["name"], {n["data"]["type"] for n in flow["data"]["nodes"]})
        for path in sorted(folder.glob("*.json"))
        for flow in [json.loads(path.read_text())]
    }
    every = sorted(name for name, _ in examples.values())
    assert names(client.get("/api/v1/flows/basic_examples/")) == every
    client.put(TEMPLATES, json={"blocked": ["basic-chat-echo"]}, headers=admin.bearer)
    block(client, admin, "Webhook")
    left = sorted(n for slug, (n, keys) in examples.items() if slug != "basic-chat-echo" and "Webhook" not in keys)
    assert "Text Uppercase" in left and "Basic Chat Echo" not in left and "Webhook to Chat" not in left
    assert names(client.get("/api/v1/flows/basic_examples/")) == left
    assert names(client.get("/api/v1/starter-projects/", headers=alice.bearer)) == left
    assert names(client.get("/api/v1/starter-projects/?include_blocked=true", headers=admin.bearer)) == every
    assert names(client.get("/api/v1/flows/basic_examples/?include_blocked=true", headers=admin.bearer)) == every
    assert client.get("/api/v1/starter-projects/?include_blocked=true", headers=alice.bearer).status_code == 403


def test_flows_using_blocked_components_are_stored_marked_and_cannot_run(app, client, admin):
    alice = make_user(client, admin, username="alice")
    fine = create_flow(client, alice, chat_echo(), name="fine")
    block(client, admin, "ChatOutput")
    created = client.post("/api/v1/flows/", json={"name": "uses it", "data": chat_echo()}, headers=alice.bearer)
    assert created.status_code == 201 and created.headers[HEADER] == "ChatOutput"
    flow = created.get_json()
    assert client.get(f"/api/v1/flows/{flow['id']}", headers=alice.bearer).headers[HEADER] == "ChatOutput"
    patched = client.patch(f"/api/v1/flows/{flow['id']}", json={"description": "x"}, headers=alice.bearer)
    assert patched.status_code == 200 and patched.headers[HEADER] == "ChatOutput"
    raw = json.dumps({"name": "imported", "data": chat_echo()}).encode()
    uploaded = client.post(
        "/api/v1/flows/upload/",
        data={"file": (io.BytesIO(raw), "f.json")},
        headers=alice.bearer,
        content_type="multipart/form-data",
    )
    assert uploaded.status_code == 201 and uploaded.headers[HEADER] == "ChatOutput"
    expected = "Component 'ChatOutput' blocked by the catalog policy: this flow cannot run"
    for target in (flow["id"], fine["id"]):
        run = client.post(f"/api/v1/run/{target}", json={"input_value": "hi"}, headers=alice.key)
        assert run.status_code == 403 and run.get_json() == {"detail": expected}
        advanced = client.post(f"/api/v1/run/advanced/{target}", json={}, headers=alice.key)
        assert advanced.status_code == 403 and advanced.get_json() == {"detail": expected}
    webhook = client.post(f"/api/v1/webhook/{flow['id']}", data="x", headers=alice.key)
    assert webhook.status_code == 403 and webhook.get_json() == {"detail": expected}
    for delivery in ("direct", "polling", "streaming"):
        built = client.post(
            f"/api/v1/build/{flow['id']}/flow?event_delivery={delivery}",
            json={"inputs": {"input_value": "hi"}},
            headers=alice.bearer,
        )
        assert built.status_code == 403 and built.get_json() == {"detail": expected}
    # an unsaved editor graph is checked too (the build body's data)
    unsaved = client.post(
        f"/api/v1/build/{fine['id']}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "hi"}, "data": chat_echo()},
        headers=alice.bearer,
    )
    assert unsaved.status_code == 403
    wait_jobs(app)
    # unblocking lets the same stored flow run again, and the mark is gone
    block(client, admin)
    again = client.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi"}, headers=alice.key)
    assert again.status_code == 200 and answer(again.get_json()) == "hi"
    assert HEADER not in client.get(f"/api/v1/flows/{flow['id']}", headers=alice.bearer).headers


def test_other_processes_see_a_change_within_the_refresh_interval(make_app):
    writer = make_app(plugins=PLUGINS)
    reader = make_app(plugins=PLUGINS, SERVICE_POLICIES_REFRESH_SECONDS="0")  # same database, another "process"
    wc, rc = writer.test_client(), reader.test_client()
    admin = superuser(wc)
    alice = make_user(wc, admin, username="alice")
    flow = create_flow(wc, alice, chat_echo(), name="f")
    assert rc.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi"}, headers=alice.key).status_code == 200
    block(wc, admin, "ChatInput")
    refused = rc.post(f"/api/v1/run/{flow['id']}", json={"input_value": "hi"}, headers=alice.key)
    assert refused.status_code == 403 and "'ChatInput'" in refused.get_json()["detail"]


def prompt_only():
    return flow_data([node("Prompt Template", "Prompt-AAAAA", template="x")], [])


def test_an_unsaved_graph_is_checked_not_the_stored_one(client, admin):
    """A build may send an editor graph for a stored flow: its own components are what must be checked."""
    alice = make_user(client, admin, username="alice")
    stored = create_flow(client, alice, {"nodes": [], "edges": []}, name="empty")
    block(client, admin, "ChatOutput")
    for _ in range(2):  # the stored flow's (empty) graph is checked, and may be remembered, first
        client.post(f"/api/v1/run/{stored['id']}", json={"input_value": "hi"}, headers=alice.key)
    built = client.post(
        f"/api/v1/build/{stored['id']}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "hi"}, "data": chat_echo()},
        headers=alice.bearer,
    )
    assert built.status_code == 403 and "'ChatOutput'" in built.get_json()["detail"]
    allowed = client.post(
        f"/api/v1/build/{stored['id']}/flow?event_delivery=direct",
        json={"inputs": {"input_value": "hi"}, "data": prompt_only()},
        headers=alice.bearer,
    )
    assert allowed.status_code == 200 and parse(allowed.get_data(as_text=True))[-1]["event"] == "end"
