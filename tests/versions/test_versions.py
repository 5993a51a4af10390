"""Flow versions: one per save (autosaves coalesced, unchanged graphs skipped), compact storage, list,
read without secrets, node-level diff, restore, retention, owner scoping."""

from __future__ import annotations

import zlib

import sqlalchemy as sa
from service_versions.models import FlowVersion

from core import appstate
from tests.versions.vkit import create, edited, graph, save, versions


def test_every_save_is_a_version_and_unchanged_graphs_add_none(make_app):
    app = make_app(plugins=["accounts", "flows", "versions"], flow_version_coalesce_seconds=0)
    client = app.test_client()
    from tests.conftest import make_user, superuser

    alice = make_user(client, superuser(client), username="alice")
    flow = create(client, alice, graph("a", "b"))
    assert len(versions(client, alice, flow["id"])) == 1
    assert save(client, alice, flow["id"], edited(graph("a", "b"), **{"N-0": "A"})).status_code == 200
    assert save(client, alice, flow["id"], edited(graph("a", "b"), **{"N-0": "AA"})).status_code == 200
    # a rename leaves the graph alone: no version
    client.patch(f"/api/v1/flows/{flow['id']}", json={"name": "renamed"}, headers=alice.bearer)
    entries = versions(client, alice, flow["id"])
    assert [e["version_number"] for e in entries] == [3, 2, 1]
    assert [e["version_tag"] for e in entries] == ["v3", "v2", "v1"]
    first = entries[0]
    assert set(first) >= {"id", "flow_id", "user_id", "version_number", "description", "created_at", "username"}
    assert first["user_id"] == alice.id and "data" not in first


def test_autosaves_coalesce_and_storage_is_compressed(client, alice, app):
    data = graph(*[f"value {i}" for i in range(20)])
    flow = create(client, alice, data)
    for i in range(30):  # thirty autosaves within the window: one version beyond the first
        assert save(client, alice, flow["id"], edited(data, **{"N-0": f"edit {i}"})).status_code == 200
    entries = versions(client, alice, flow["id"])
    assert len(entries) == 2
    with appstate.engine(app).connect() as conn:
        rows = conn.execute(sa.select(FlowVersion.data_z, FlowVersion.size)).all()
    for blob, size in rows:
        assert len(blob) < size / 3  # zlib of the canonical JSON, not a plain copy
        assert zlib.decompress(blob).startswith(b"{")
    latest = client.get(f"/api/v1/flows/{flow['id']}/versions/{entries[0]['id']}", headers=alice.bearer).get_json()
    assert latest["data"]["nodes"][0]["data"]["node"]["template"]["text"]["value"] == "edit 29"


def test_read_blanks_secrets_and_explicit_versions_are_kept(client, alice):
    flow = create(client, alice, graph("a"))
    made = client.post(
        f"/api/v1/flows/{flow['id']}/versions/", json={"description": "before the demo"}, headers=alice.bearer
    )
    assert made.status_code == 201, made.get_json()
    named = made.get_json()
    assert named["description"] == "before the demo" and named["version_number"] == 1
    # the next save does not coalesce into a named version
    save(client, alice, flow["id"], edited(graph("a"), **{"N-0": "b"}))
    entries = versions(client, alice, flow["id"])
    assert [e["version_number"] for e in entries] == [2, 1]
    body = client.get(f"/api/v1/flows/{flow['id']}/versions/{named['id']}", headers=alice.bearer).get_json()
    template = body["data"]["nodes"][0]["data"]["node"]["template"]
    assert template["api_key"]["value"] == "" and template["text"]["value"] == "a"
    assert "sk-secret" not in str(body)


def test_node_level_diff(client, alice):
    before = graph("a", "b", "c")
    flow = create(client, alice, before)
    # a named version: the next save is a new version, not coalesced into the first
    client.post(f"/api/v1/flows/{flow['id']}/versions/", json={"description": "start"}, headers=alice.bearer)
    after = edited(before, **{"N-1": "B"})
    after["nodes"][0]["position"] = {"x": 500, "y": 40}
    after["nodes"] = [n for n in after["nodes"] if n["id"] != "N-2"]
    after["edges"] = [e for e in after["edges"] if e["target"] != "N-2"]
    extra = graph("x")["nodes"][0]
    extra["id"] = extra["data"]["id"] = "N-9"
    after["nodes"].append(extra)
    after["edges"].append({"id": "e-9", "source": "N-1", "target": "N-9", "sourceHandle": "out", "targetHandle": "in"})
    after["nodes"][1]["data"]["node"]["template"]["api_key"]["value"] = "sk-rotated"
    assert save(client, alice, flow["id"], after).status_code == 200
    [latest, *_] = versions(client, alice, flow["id"])
    body = client.get(f"/api/v1/flows/{flow['id']}/versions/{latest['id']}/diff", headers=alice.bearer).get_json()
    assert (body["from"], body["to"]) == ("v1", "v2")
    assert [n["id"] for n in body["added"]] == ["N-9"]
    assert [n["id"] for n in body["removed"]] == ["N-2"]
    assert [(m["id"], m["after"]) for m in body["moved"]] == [("N-0", {"x": 500, "y": 40})]
    [changed] = body["changed"]
    assert changed["id"] == "N-1"
    fields = {f["field"]: f for f in changed["fields"]}
    assert fields["text"] == {"field": "text", "before": "b", "after": "B"}
    assert set(fields) == {"text"}  # secrets are blanked before diffing: a rotated key shows no value
    assert [(e["source"], e["target"]) for e in body["edges"]["added"]] == [("N-1", "N-9")]
    assert [(e["source"], e["target"]) for e in body["edges"]["removed"]] == [("N-1", "N-2")]
    assert body["unchanged"] is False
    draft = client.get(
        f"/api/v1/flows/{flow['id']}/versions/{latest['id']}/diff?against=draft", headers=alice.bearer
    ).get_json()
    assert draft["unchanged"] is True


def test_restore_writes_the_old_graph_and_keeps_history(client, alice):
    flow = create(client, alice, graph("a"))
    [v1] = versions(client, alice, flow["id"])
    client.post(f"/api/v1/flows/{flow['id']}/versions/", json={"description": "v1"}, headers=alice.bearer)
    save(client, alice, flow["id"], graph("broken"))
    restored = client.post(f"/api/v1/flows/{flow['id']}/versions/{v1['id']}/activate", headers=alice.bearer)
    assert restored.status_code == 200, restored.get_json()
    body = restored.get_json()
    assert body["data"]["nodes"][0]["data"]["node"]["template"]["text"]["value"] == "a"
    assert body["version_token"] != flow["version_token"]
    stored = client.get(f"/api/v1/flows/{flow['id']}", headers=alice.bearer).get_json()
    assert stored["data"] == body["data"]
    texts = []
    for entry in versions(client, alice, flow["id"]):
        full = client.get(f"/api/v1/flows/{flow['id']}/versions/{entry['id']}", headers=alice.bearer).get_json()
        texts.append(full["data"]["nodes"][0]["data"]["node"]["template"]["text"]["value"])
    assert "broken" in texts and texts[0] == "a"  # nothing lost: the bad edit is still a version


def test_retention_keeps_the_newest(make_app):
    app = make_app(
        plugins=["accounts", "flows", "versions"], max_flow_version_entries_per_flow=3, flow_version_coalesce_seconds=0
    )
    client = app.test_client()
    from tests.conftest import make_user, superuser

    alice = make_user(client, superuser(client), username="alice")
    flow = create(client, alice, graph("v0"))
    for i in range(1, 8):
        save(client, alice, flow["id"], graph(f"v{i}"))
    entries = versions(client, alice, flow["id"])
    assert [e["version_number"] for e in entries] == [8, 7, 6]
    assert client.get(f"/api/v1/flows/{flow['id']}/versions/", headers=alice.bearer).get_json()["max_entries"] == 3


def test_versions_are_owner_scoped(client, alice, bob):
    flow = create(client, alice, graph("a"))
    [v1] = versions(client, alice, flow["id"])
    base = f"/api/v1/flows/{flow['id']}/versions"
    assert client.get(f"{base}/", headers=bob.bearer).status_code == 404
    assert client.get(f"{base}/{v1['id']}", headers=bob.bearer).status_code == 404
    assert client.post(f"{base}/{v1['id']}/activate", headers=bob.bearer).status_code == 404
    assert client.post(f"/api/v1/flows/{flow['id']}/publish", json={}, headers=bob.bearer).status_code == 404
    assert client.get(f"{base}/not-a-uuid", headers=alice.bearer).status_code == 404


def test_deleting_a_flow_deletes_its_versions(client, alice, app):
    flow = create(client, alice, graph("a"))
    assert client.delete(f"/api/v1/flows/{flow['id']}", headers=alice.bearer).status_code == 200
    with appstate.engine(app).connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(FlowVersion)).scalar() == 0
