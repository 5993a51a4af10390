"""Component usage: counting rules, usage flows, the cache and its invalidation, the backfill."""

from __future__ import annotations

import time

from tests.conftest import make_user, superuser
from tests.policies.conftest import PLUGINS
from tests.run.runkit import chat_echo, create_flow, flow_data, node

USAGE = "/api/v1/catalog-policy/usage"
FLOWS = "/api/v1/catalog-policy/usage/flows"
EXAMPLES = {"ChatInput": 1, "ChatOutput": 3, "note": 1, "Operations": 1, "ParserComponent": 1, "Webhook": 1}


def prompt_flow(alias: bool = False):
    """Two prompt nodes (one under the legacy key when ``alias``) and a note: each counts once."""
    one = node("Prompt Template", "Prompt-AAAAA", template="a")
    two = node("Prompt Template", "Prompt-BBBBB", template="b")
    if alias:
        two["data"]["type"] = "Prompt"
    note = {"id": "note-1", "type": "noteNode", "data": {"id": "note-1", "type": "note", "node": {"description": "x"}}}
    return flow_data([one, two, note], [])


def test_counting_rules(client, admin):
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    assert client.get(USAGE, headers=admin.bearer).get_json() == {"components": EXAMPLES, "flows_scanned": 3}
    create_flow(client, alice, prompt_flow(alias=True), name="p1")
    create_flow(client, bob, prompt_flow(), name="p2")
    create_flow(client, bob, chat_echo(), name="echo")
    body = client.get(USAGE, headers=admin.bearer).get_json()
    assert body["flows_scanned"] == 6  # every user's flows and the examples
    assert body["components"]["Prompt Template"] == 2  # canonical key; once per flow despite two nodes
    assert "Prompt" not in body["components"]
    assert body["components"]["note"] == EXAMPLES["note"] + 2
    assert body["components"]["ChatOutput"] == EXAMPLES["ChatOutput"] + 1


def test_usage_flows_sorted_limited_and_counted(client, admin):
    alice = make_user(client, admin, username="alice")
    made = [create_flow(client, alice, chat_echo(), name=n) for n in ("b", "a", "c")]
    body = client.get(FLOWS + "?component=ChatInput&limit=2", headers=admin.bearer).get_json()
    assert body["component"] == "ChatInput" and body["total"] == 4  # three flows and one example
    assert [f["name"] for f in body["flows"]] == ["Basic Chat Echo", "a"]  # code-point order: capitals first
    every = client.get(FLOWS + "?component=ChatInput", headers=admin.bearer).get_json()
    assert [f["name"] for f in every["flows"]] == ["Basic Chat Echo", "a", "b", "c"]
    assert {f["id"] for f in every["flows"]} >= {m["id"] for m in made}
    alias = client.get(FLOWS + "?component=Prompt", headers=admin.bearer).get_json()
    assert alias["component"] == "Prompt" and alias["total"] == 0
    for bad in ("component=", "", "component=x&limit=0", "component=x&limit=501", "component=" + "x" * 256):
        assert client.get(f"{FLOWS}?{bad}", headers=admin.bearer).status_code == 422, bad


def test_same_name_flows_sort_by_id(client, admin):
    alice = make_user(client, admin, username="alice")
    bob = make_user(client, admin, username="bob")
    ids = sorted(
        [
            create_flow(client, alice, chat_echo(), name="same")["id"],
            create_flow(client, bob, chat_echo(), name="same")["id"],
        ]
    )
    body = client.get(FLOWS + "?component=ChatInput", headers=admin.bearer).get_json()
    assert [f["id"] for f in body["flows"] if f["name"] == "same"] == ids


def test_flow_writes_invalidate_the_cache(client, admin):
    alice = make_user(client, admin, username="alice")
    base = client.get(USAGE, headers=admin.bearer).get_json()["components"]["ChatInput"]
    flow = create_flow(client, alice, chat_echo(), name="f")
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"]["ChatInput"] == base + 1
    client.patch(f"/api/v1/flows/{flow['id']}", json={"data": prompt_flow()}, headers=alice.bearer)
    after = client.get(USAGE, headers=admin.bearer).get_json()["components"]
    assert after["ChatInput"] == base and after["Prompt Template"] == 1
    client.delete(f"/api/v1/flows/{flow['id']}", headers=alice.bearer)
    assert "Prompt Template" not in client.get(USAGE, headers=admin.bearer).get_json()["components"]
    many = [create_flow(client, alice, chat_echo(), name=f"m{i}")["id"] for i in range(2)]
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"]["ChatInput"] == base + 2
    assert client.delete("/api/v1/flows/", json=many, headers=alice.bearer).get_json() == {"deleted": 2}
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"]["ChatInput"] == base
    client.delete(f"/api/v1/users/{alice.id}", headers=admin.bearer)
    assert client.get(USAGE, headers=admin.bearer).get_json()["flows_scanned"] == 3


def test_other_processes_lag_by_at_most_the_ttl(make_app):
    writer = make_app(plugins=PLUGINS)
    reader = make_app(plugins=PLUGINS, SERVICE_USAGE_SCAN_CACHE_TTL_SECONDS="0.5")
    wc, rc = writer.test_client(), reader.test_client()
    admin = superuser(wc)
    alice = make_user(wc, admin, username="alice")
    assert rc.get(USAGE, headers=admin.bearer).get_json()["flows_scanned"] == 3
    create_flow(wc, alice, chat_echo(), name="f")
    assert rc.get(USAGE, headers=admin.bearer).get_json()["flows_scanned"] == 3  # cached in the reader
    time.sleep(0.6)
    assert rc.get(USAGE, headers=admin.bearer).get_json()["flows_scanned"] == 4


def test_flows_stored_before_the_plugin_are_backfilled(make_app):
    before = make_app(plugins=["accounts", "flows", "standard"])
    client = before.test_client()
    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    create_flow(client, alice, chat_echo(), name="old")
    governed = make_app(plugins=PLUGINS).test_client()
    body = governed.get(USAGE, headers=admin.bearer).get_json()
    assert body["flows_scanned"] == 4 and body["components"]["ChatInput"] == 2
    flows = governed.get(FLOWS + "?component=ChatInput", headers=admin.bearer).get_json()
    assert "old" in [f["name"] for f in flows["flows"]]


def test_deleting_a_project_removes_its_flows_from_usage(client, admin):
    alice = make_user(client, admin, username="alice")
    project = client.post(
        "/api/v1/projects/", json={"name": "p", "flows_list": [], "components_list": []}, headers=alice.bearer
    ).get_json()
    create_flow(client, alice, prompt_flow(), name="in project", folder_id=project["id"])
    assert client.get(USAGE, headers=admin.bearer).get_json()["components"]["Prompt Template"] == 1
    assert client.delete(f"/api/v1/projects/{project['id']}", headers=alice.bearer).status_code == 204
    body = client.get(USAGE, headers=admin.bearer).get_json()
    assert "Prompt Template" not in body["components"] and body["flows_scanned"] == 3
