"""Projects: list, create, read (both forms), update, delete, download, upload, legacy redirect."""

from __future__ import annotations

import io
import json
import uuid
import zipfile

from tests.flowkit import load_reference as reference_flow

URL = "/api/v1/projects/"


def flow(client, caller, name, **body):
    return client.post("/api/v1/flows/", json={"name": name, **body}, headers=caller.bearer).get_json()


def project(client, caller, name="Proj", **body):
    response = client.post(URL, json={"name": name, **body}, headers=caller.bearer)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_list_creates_the_default_project_once(client, alice):
    first = client.get(URL, headers=alice.bearer)
    assert first.status_code == 200
    (default,) = first.get_json()
    assert default["name"] == "Starter Project"
    assert set(default) == {"name", "description", "auth_settings", "id", "parent_id", "owner_username", "is_owner"}
    assert (default["owner_username"], default["is_owner"]) == ("alice", True)
    assert client.get(URL, headers=alice.bearer).get_json() == [default]


def test_default_project_name_follows_the_setting(make_app):
    from tests.conftest import superuser

    app = make_app(plugins=["accounts", "flows"], default_folder_name="My Collection")
    client = app.test_client()
    admin = superuser(client)
    assert [p["name"] for p in client.get(URL, headers=admin.bearer).get_json()] == ["My Collection"]


def test_create_moves_listed_flows_and_components(client, alice, bob):
    f1 = flow(client, alice, "f1")
    c1 = flow(client, alice, "c1", is_component=True)
    theirs = flow(client, bob, "theirs")
    created = client.post(
        URL,
        json={
            "name": "Work",
            "description": "d",
            "auth_settings": {"auth_type": "none"},
            "flows_list": [f1["id"], theirs["id"]],
            "components_list": [c1["id"]],
        },
        headers=alice.bearer,
    )
    assert created.status_code == 201
    body = created.get_json()
    assert set(body) == {"name", "description", "auth_settings", "id", "parent_id"}
    assert body["auth_settings"] == {"auth_type": "none"}
    assert client.get("/api/v1/flows/" + f1["id"], headers=alice.bearer).get_json()["folder_id"] == body["id"]
    assert client.get("/api/v1/flows/" + c1["id"], headers=alice.bearer).get_json()["folder_id"] == body["id"]
    assert client.get("/api/v1/flows/" + theirs["id"], headers=bob.bearer).get_json()["folder_id"] != body["id"]
    assert project(client, alice, "Work")["name"] == "Work (1)"
    assert client.post(URL, json={"name": ""}, headers=alice.bearer).status_code == 422


def test_read_without_and_with_pagination_and_filters(client, alice):
    p = project(client, alice, "Read me")
    for name in ("alpha", "beta", "gamma_1"):
        flow(client, alice, name, folder_id=p["id"])
    flow(client, alice, "comp", folder_id=p["id"], is_component=True)
    flow(client, alice, "elsewhere")
    plain = client.get(URL + p["id"], headers=alice.bearer)
    assert plain.status_code == 200
    body = plain.get_json()
    assert body["id"] == p["id"] and body["name"] == "Read me"
    assert sorted(f["name"] for f in body["flows"]) == ["alpha", "beta", "comp", "gamma_1"]
    paged = client.get(URL + p["id"] + "?page=1&size=3", headers=alice.bearer).get_json()
    assert paged["folder"]["id"] == p["id"]
    assert (paged["flows"]["total"], paged["flows"]["pages"], len(paged["flows"]["items"])) == (4, 2, 3)
    page2 = client.get(URL + p["id"] + "?page=2&size=3", headers=alice.bearer).get_json()
    assert len(page2["flows"]["items"]) == 1
    only_flows = client.get(URL + p["id"] + "?page=1&size=10&is_flow=true", headers=alice.bearer).get_json()
    assert sorted(f["name"] for f in only_flows["flows"]["items"]) == ["alpha", "beta", "gamma_1"]
    only_comps = client.get(URL + p["id"] + "?page=1&size=10&is_component=true", headers=alice.bearer).get_json()
    assert [f["name"] for f in only_comps["flows"]["items"]] == ["comp"]
    search = client.get(URL + p["id"] + "?page=1&size=10&search=ET", headers=alice.bearer).get_json()
    assert [f["name"] for f in search["flows"]["items"]] == ["beta"]
    underscore = client.get(URL + p["id"] + "?page=1&size=10&search=_", headers=alice.bearer).get_json()
    assert [f["name"] for f in underscore["flows"]["items"]] == ["gamma_1"]  # LIKE wildcards are literal
    assert client.get(URL + p["id"] + "?page=0&size=10", headers=alice.bearer).status_code == 422
    assert client.get(URL + p["id"] + "?page=1&size=101", headers=alice.bearer).status_code == 422


def test_update_renames_moves_reparents(client, alice, bob):
    parent = project(client, alice, "Parent")
    child = project(client, alice, "Child")
    f1 = flow(client, alice, "f1")
    theirs = flow(client, bob, "theirs")
    response = client.patch(
        URL + child["id"],
        json={
            "name": "Kid",
            "description": "new",
            "parent_id": parent["id"],
            "flows": [f1["id"], theirs["id"]],
            "auth_settings": {"auth_type": "apikey"},
        },
        headers=alice.bearer,
    )
    assert response.status_code == 200
    body = response.get_json()
    assert (body["name"], body["description"], body["parent_id"], body["auth_settings"]) == (
        "Kid",
        "new",
        parent["id"],
        {"auth_type": "apikey"},
    )
    assert client.get("/api/v1/flows/" + f1["id"], headers=alice.bearer).get_json()["folder_id"] == child["id"]
    assert client.get("/api/v1/flows/" + theirs["id"], headers=bob.bearer).get_json()["folder_id"] != child["id"]
    # a cycle and a foreign parent are refused; a taken name is 400
    assert client.patch(URL + parent["id"], json={"parent_id": child["id"]}, headers=alice.bearer).status_code == 400
    assert client.patch(URL + child["id"], json={"parent_id": child["id"]}, headers=alice.bearer).status_code == 400
    bobs = project(client, bob, "Bob's")
    assert client.patch(URL + child["id"], json={"parent_id": bobs["id"]}, headers=alice.bearer).status_code == 404
    assert client.patch(URL + child["id"], json={"name": "Parent"}, headers=alice.bearer).status_code == 400
    cleared = client.patch(URL + child["id"], json={"parent_id": None}, headers=alice.bearer).get_json()
    assert cleared["parent_id"] is None


def test_delete_removes_the_project_and_its_flows(client, alice):
    p = project(client, alice, "Doomed")
    inside = flow(client, alice, "inside", folder_id=p["id"])
    outside = flow(client, alice, "outside")
    sub = project(client, alice, "Sub")
    client.patch(URL + sub["id"], json={"parent_id": p["id"]}, headers=alice.bearer)
    response = client.delete(URL + p["id"], headers=alice.bearer)
    assert response.status_code == 204 and response.get_data() == b""
    assert client.get(URL + p["id"], headers=alice.bearer).status_code == 404
    assert client.get("/api/v1/flows/" + inside["id"], headers=alice.bearer).status_code == 404
    assert client.get("/api/v1/flows/" + outside["id"], headers=alice.bearer).status_code == 200
    assert client.get(URL + sub["id"], headers=alice.bearer).get_json()["parent_id"] is None
    assert client.delete(URL + p["id"], headers=alice.bearer).status_code == 404


def test_download_and_upload_a_project(client, alice, bob):
    p = project(client, alice, "Exported / Project")
    originals = {}
    for name in ("chat-echo.json", "webhook-parser-chat.json"):
        body = reference_flow(name)
        originals[body["name"]] = body
        flow(client, alice, body.pop("name"), folder_id=p["id"], **body)
        body["name"] = name  # keep the file name aside
    flow(client, alice, "not in project")
    response = client.get(URL + "download/" + p["id"], headers=alice.bearer)
    assert response.status_code == 200
    assert response.mimetype == "application/x-zip-compressed"
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="') and disposition.endswith('_Exported _ Project_flows.zip"')
    archive = zipfile.ZipFile(io.BytesIO(response.get_data()))
    assert sorted(archive.namelist()) == ["chat-echo.json", "webhook-flow.json"]
    # bob creates a project from alice's archive; flows are copies with new ids
    archive_name = "20260101_120000_Exported _ Project_flows.zip"
    uploaded = client.post(
        URL + "upload/",
        data={"file": (io.BytesIO(response.get_data()), archive_name)},
        headers=bob.bearer,
        content_type="multipart/form-data",
    )
    assert uploaded.status_code == 201, uploaded.get_json()
    flows = uploaded.get_json()
    assert sorted(f["name"] for f in flows) == ["chat-echo", "webhook-flow"]
    assert len({f["folder_id"] for f in flows}) == 1
    projects = {x["id"]: x["name"] for x in client.get(URL, headers=bob.bearer).get_json()}
    assert projects[flows[0]["folder_id"]] == "Exported _ Project"
    echo = next(f for f in flows if f["name"] == "chat-echo")
    assert echo["data"] == reference_flow("chat-echo.json")["data"]
    # the ZIP as the whole body (langflow-sdk's upload_project) is read the same way
    raw = client.post(
        URL + "upload/", data=response.get_data(), headers=bob.bearer, content_type="application/octet-stream"
    )
    assert raw.status_code == 201, raw.get_json()
    assert sorted(f["name"] for f in raw.get_json()) == ["chat-echo (1)", "webhook-flow (1)"]
    assert client.post(URL + "upload/", data=b"", headers=bob.bearer, content_type="text/plain").status_code == 422


def test_upload_a_project_json_and_all_or_nothing(client, alice):
    document = {
        "folder_name": "From JSON",
        "folder_description": "desc",
        "flows": [reference_flow("chat-echo.json"), reference_flow("data-operations-uppercase.json")],
    }
    response = client.post(
        URL + "upload/",
        data={"file": (io.BytesIO(json.dumps(document).encode()), "p.json")},
        headers=alice.bearer,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201
    projects = client.get(URL, headers=alice.bearer).get_json()
    made = next(x for x in projects if x["name"] == "From JSON")
    assert made["description"] == "desc"
    assert {f["folder_id"] for f in response.get_json()} == {made["id"]}
    broken = {"folder_name": "Broken", "flows": [reference_flow("chat-echo.json"), {"name": ""}]}
    bad = client.post(
        URL + "upload/",
        data={"file": (io.BytesIO(json.dumps(broken).encode()), "b.json")},
        headers=alice.bearer,
        content_type="multipart/form-data",
    )
    assert bad.status_code == 422
    assert "Broken" not in [x["name"] for x in client.get(URL, headers=alice.bearer).get_json()]


def test_another_users_project_is_404_everywhere(client, alice, bob):
    p = project(client, bob, "Private")
    flow(client, bob, "secret flow", folder_id=p["id"])
    for method, path in (
        ("get", URL + p["id"]),
        ("patch", URL + p["id"]),
        ("delete", URL + p["id"]),
        ("get", URL + "download/" + p["id"]),
        ("get", URL + str(uuid.uuid4())),
        ("get", URL + "not-a-uuid"),
    ):
        kwargs = {"json": {"name": "x"}} if method == "patch" else {}
        assert getattr(client, method)(path, headers=alice.bearer, **kwargs).status_code == 404, path
    assert p["id"] not in client.get(URL, headers=alice.bearer).get_data(as_text=True)
    assert client.get(URL + p["id"], headers=bob.bearer).status_code == 200


def test_legacy_folders_redirect_with_307(client, alice):
    p = project(client, alice)
    response = client.get(f"/api/v1/folders/{p['id']}?page=1&size=2", headers=alice.bearer)
    assert response.status_code == 307
    assert response.headers["Location"].endswith(f"/api/v1/projects/{p['id']}?page=1&size=2")
    post = client.post("/api/v1/folders/", json={"name": "x"}, headers=alice.bearer)
    assert post.status_code == 307 and post.headers["Location"].endswith("/api/v1/projects/")
    followed = client.get("/api/v1/folders/", headers=alice.bearer, follow_redirects=True)
    assert followed.status_code == 200 and any(x["id"] == p["id"] for x in followed.get_json())
    download = client.get(f"/api/v1/folders/download/{p['id']}", headers=alice.bearer)
    assert download.headers["Location"].endswith(f"/api/v1/projects/download/{p['id']}")
