"""Create, batch create, read, update, upsert, delete and delete many; names and endpoint names."""

from __future__ import annotations

import uuid

import pytest

URL = "/api/v1/flows/"
DATA = {"nodes": [], "edges": [], "viewport": {"x": 0, "y": 0, "zoom": 1}}


def create(client, caller, **body):
    body.setdefault("name", "flow")
    return client.post(URL, json=body, headers=caller.bearer)


def test_create_returns_201_with_every_read_member(client, alice):
    response = create(client, alice, name="My flow", description="d", data=DATA, tags=["a"], webhook=True)
    assert response.status_code == 201
    body = response.get_json()
    assert list(body) == [
        "name",
        "description",
        "icon",
        "icon_bg_color",
        "gradient",
        "data",
        "is_component",
        "updated_at",
        "webhook",
        "endpoint_name",
        "tags",
        "locked",
        "mcp_enabled",
        "action_name",
        "action_description",
        "access_type",
        "flow_type",
        "a2a_enabled",
        "a2a_card_overrides",
        "id",
        "user_id",
        "folder_id",
        "workspace_id",
        "name_key",
        "version_token",  # the reference 1.13's FlowRead (issue 31)
    ]
    assert body["user_id"] == alice.id
    assert (body["name"], body["data"], body["tags"], body["webhook"]) == ("My flow", DATA, ["a"], True)
    assert (body["access_type"], body["flow_type"], body["locked"], body["is_component"]) == (
        "PRIVATE",
        "workflow",
        False,
        False,
    )
    assert body["updated_at"].endswith("+00:00")
    projects = client.get("/api/v1/projects/", headers=alice.bearer).get_json()
    assert body["folder_id"] == projects[0]["id"] and projects[0]["name"] == "Starter Project"


def test_user_id_in_the_body_is_ignored(client, alice, bob):
    body = create(client, alice, user_id=bob.id).get_json()
    assert body["user_id"] == alice.id
    assert client.get(URL + body["id"], headers=bob.bearer).status_code == 404


def test_duplicate_names_get_numbered_suffixes(client, alice, bob):
    names = [create(client, alice, name="Report").get_json()["name"] for _ in range(3)]
    assert names == ["Report", "Report (1)", "Report (2)"]
    assert create(client, alice, name="Report (7)").get_json()["name"] == "Report (7)"
    assert create(client, alice, name="Report").get_json()["name"] == "Report (8)"
    assert create(client, bob, name="Report").get_json()["name"] == "Report"  # names are per user
    assert create(client, alice, name="50% off_").get_json()["name"] == "50% off_"
    assert create(client, alice, name="50% off_").get_json()["name"] == "50% off_ (1)"


@pytest.mark.parametrize("endpoint", ["has space", "slash/no", "dot.no", "ünï", "a?b"])
def test_endpoint_name_rules(client, alice, endpoint):
    response = create(client, alice, endpoint_name=endpoint)
    assert response.status_code == 422
    assert response.get_json()["detail"][0]["loc"] == ["body", "endpoint_name"]


def test_endpoint_name_valid_unique_and_not_a_uuid(client, alice, bob):
    assert create(client, alice, name="a", endpoint_name="my_end-Point9").get_json()["endpoint_name"] == "my_end-Point9"
    second = create(client, alice, name="b", endpoint_name="my_end-Point9").get_json()
    assert second["endpoint_name"] == "my_end-Point9-1"
    assert create(client, bob, name="a", endpoint_name="my_end-Point9").get_json()["endpoint_name"] == "my_end-Point9"
    assert create(client, alice, name="c", endpoint_name="").get_json()["endpoint_name"] is None
    assert create(client, alice, name="d", endpoint_name=str(uuid.uuid4())).status_code == 422
    clash = client.patch(URL + second["id"], json={"endpoint_name": "my_end-Point9"}, headers=alice.bearer)
    assert clash.status_code == 400
    assert clash.get_json()["detail"] == "Endpoint name must be unique"
    bad = client.patch(URL + second["id"], json={"endpoint_name": "no spaces"}, headers=alice.bearer)
    assert bad.status_code == 422


def test_data_must_hold_nodes_and_edges(client, alice):
    for data in ({"nodes": []}, {"edges": []}, {"nodes": {}, "edges": []}, [1, 2]):
        response = create(client, alice, data=data)
        assert response.status_code == 422, data
        assert response.get_json()["detail"][0]["loc"] == ["body", "data"]
    assert create(client, alice, data=None).status_code == 201


def test_other_validation_errors(client, alice):
    assert create(client, alice, name="").status_code == 422
    assert client.post(URL, json={"description": "no name"}, headers=alice.bearer).status_code == 422
    assert create(client, alice, access_type="SECRET").status_code == 422
    assert create(client, alice, flow_type="robot").status_code == 422
    assert (
        client.post(URL, data="{not json", headers={**alice.bearer, "Content-Type": "application/json"}).status_code
        == 422
    )
    assert client.get(URL + "?remove_example_flows=true", headers=alice.bearer).get_json() == []


def test_fs_path_is_refused(client, alice):
    response = create(client, alice, fs_path="/etc/cron.d/evil")
    assert response.status_code == 422
    assert response.get_json()["detail"][0]["loc"] == ["body", "fs_path"]
    assert "fs_path" not in create(client, alice, fs_path=None).get_json()
    flow = create(client, alice, name="x").get_json()
    assert client.patch(URL + flow["id"], json={"fs_path": "../../x.json"}, headers=alice.bearer).status_code == 422


def test_folder_id_must_be_the_callers(client, alice, bob):
    bobs = client.post("/api/v1/projects/", json={"name": "Bob's"}, headers=bob.bearer).get_json()
    assert create(client, alice, folder_id=bobs["id"]).status_code == 404
    mine = client.post("/api/v1/projects/", json={"name": "Mine"}, headers=alice.bearer).get_json()
    assert create(client, alice, folder_id=mine["id"]).get_json()["folder_id"] == mine["id"]


def test_batch_create(client, alice):
    response = client.post(
        URL + "batch/",
        json={"flows": [{"name": "one"}, {"name": "one"}, {"name": "two", "data": DATA}]},
        headers=alice.bearer,
    )
    assert response.status_code == 201
    assert [f["name"] for f in response.get_json()] == ["one", "one (1)", "two"]
    bad = client.post(URL + "batch/", json={"flows": [{"name": "three"}, {"name": ""}]}, headers=alice.bearer)
    assert bad.status_code == 422
    names = {f["name"] for f in client.get(URL + "?remove_example_flows=true", headers=alice.bearer).get_json()}
    assert names == {"one", "one (1)", "two"}


def test_read_update_and_delete(client, alice):
    flow = create(client, alice, name="orig", description="first", data=DATA).get_json()
    read = client.get(URL + flow["id"], headers=alice.bearer)
    assert read.status_code == 200 and read.get_json() == flow
    patched = client.patch(
        URL + flow["id"],
        json={
            "name": None,
            "description": "second",
            "locked": True,
            "access_type": "PUBLIC",
            "tags": ["ignored"],
            "webhook": True,
        },
        headers=alice.bearer,
    )
    assert patched.status_code == 200
    body = patched.get_json()
    assert (body["name"], body["description"], body["locked"], body["access_type"]) == (
        "orig",
        "second",
        True,
        "PUBLIC",
    )
    assert body["tags"] == [] and body["webhook"] is False  # not members of the update body
    assert body["updated_at"] >= flow["updated_at"]
    create(client, alice, name="taken")
    clash = client.patch(URL + flow["id"], json={"name": "taken"}, headers=alice.bearer)
    assert clash.status_code == 400 and clash.get_json()["detail"] == "Name must be unique"
    deleted = client.delete(URL + flow["id"], headers=alice.bearer)
    assert deleted.status_code == 200 and deleted.get_json() == {"message": "Flow deleted successfully"}
    assert client.get(URL + flow["id"], headers=alice.bearer).status_code == 404
    assert client.delete(URL + flow["id"], headers=alice.bearer).status_code == 404


def test_upsert_creates_updates_or_refuses(client, alice, bob):
    flow_id = str(uuid.uuid4())
    created = client.put(URL + flow_id, json={"name": "up", "data": DATA}, headers=alice.bearer)
    assert created.status_code == 201
    assert created.get_json()["id"] == flow_id and created.get_json()["user_id"] == alice.id
    updated = client.put(URL + flow_id, json={"name": "up2", "description": "x"}, headers=alice.bearer)
    assert updated.status_code == 200
    assert (updated.get_json()["name"], updated.get_json()["description"], updated.get_json()["data"]) == (
        "up2",
        "x",
        DATA,
    )
    foreign = client.put(URL + flow_id, json={"name": "stolen"}, headers=bob.bearer)
    assert foreign.status_code == 404
    assert client.get(URL + flow_id, headers=alice.bearer).get_json()["name"] == "up2"
    create(client, alice, name="other", endpoint_name="ep")
    clash = client.put(URL + flow_id, json={"name": "up2", "endpoint_name": "ep"}, headers=alice.bearer)
    assert clash.status_code == 409
    assert client.put(URL + "not-a-uuid", json={"name": "x"}, headers=alice.bearer).status_code == 404


def test_delete_many_counts_only_own_flows(client, alice, bob):
    mine = [create(client, alice, name=f"m{i}").get_json()["id"] for i in range(3)]
    theirs = create(client, bob, name="b").get_json()["id"]
    response = client.delete(URL, json=[mine[0], mine[1], theirs, str(uuid.uuid4())], headers=alice.bearer)
    assert response.status_code == 200 and response.get_json() == {"deleted": 2}
    assert client.get(URL + theirs, headers=bob.bearer).status_code == 200
    left = [f["id"] for f in client.get(URL + "?remove_example_flows=true", headers=alice.bearer).get_json()]
    assert left == [mine[2]]
    assert client.delete(URL, json=["nope"], headers=alice.bearer).status_code == 422
    assert client.delete(URL, json={"ids": mine}, headers=alice.bearer).status_code == 422
    assert client.delete(URL, json=[], headers=alice.bearer).get_json() == {"deleted": 0}


def test_another_users_flow_is_404_everywhere(client, alice, bob):
    flow = create(client, bob, name="bob's", data=DATA).get_json()
    fid = flow["id"]
    assert client.get(URL + fid, headers=alice.bearer).status_code == 404
    assert client.patch(URL + fid, json={"name": "x"}, headers=alice.bearer).status_code == 404
    assert client.delete(URL + fid, headers=alice.bearer).status_code == 404
    assert client.get(URL + fid + "/note_translations", headers=alice.bearer).status_code == 404
    assert client.post(URL + "download/", json=[fid], headers=alice.bearer).status_code == 404
    assert client.get(f"/api/v1/flows/public_flow/{fid}").status_code == 404
    listed = client.get(URL, headers=alice.bearer).get_data(as_text=True)
    assert fid not in listed
    page = client.get(URL + "?get_all=false", headers=alice.bearer).get_json()
    assert page["total"] == 0
    assert client.get(URL + fid, headers=bob.bearer).get_json()["name"] == "bob's"


def test_credentials_are_required(client, alice):
    assert client.get(URL).status_code == 403
    assert client.post(URL, json={"name": "x"}).status_code == 403
    assert client.get(URL, headers=alice.key).status_code == 200
    assert client.get(URL, headers={"Authorization": "Bearer nope"}).status_code == 401
