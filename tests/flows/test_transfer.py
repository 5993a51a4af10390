"""Upload (JSON, ZIP, all-or-nothing, stable ids) and download (JSON for one, ZIP for several)."""

from __future__ import annotations

import io
import json
import uuid
import zipfile

import pytest

from tests.flowkit import load_reference as reference_flow
from tests.flows.conftest import FIXTURE_NAMES

URL = "/api/v1/flows/"


def upload(client, caller, payload: bytes, filename="flows.json", query=""):
    return client.post(
        URL + "upload/" + query,
        data={"file": (io.BytesIO(payload), filename)},
        headers=caller.bearer,
        content_type="multipart/form-data",
    )


def zip_of(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def own_flows(client, caller):
    return client.get(URL + "?remove_example_flows=true", headers=caller.bearer).get_json()


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_reference_fixture_uploads_lists_reads_and_exports_back(client, alice, fixture):
    original = reference_flow(fixture)
    response = upload(client, alice, json.dumps(original, ensure_ascii=False).encode(), fixture)
    assert response.status_code == 201, response.get_json()
    (created,) = response.get_json()
    assert created["name"] == original["name"]
    assert created["data"] == original["data"]
    assert created["webhook"] is original.get("webhook", False)
    listed = {f["id"]: f for f in own_flows(client, alice)}
    assert listed[created["id"]]["data"] == original["data"]
    read = client.get(URL + created["id"], headers=alice.bearer).get_json()
    assert read["data"] == original["data"] and read["description"] == original.get("description")
    exported = client.post(URL + "download/", json=[created["id"]], headers=alice.bearer)
    assert exported.status_code == 200 and exported.mimetype == "application/json"
    body = exported.get_json()
    for key, value in original.items():  # every member of the reference export is kept
        assert body[key] == value, key
    # the œ-encoded handle strings survive byte for byte
    assert body["data"]["edges"][0]["sourceHandle"] == original["data"]["edges"][0]["sourceHandle"]
    assert "œ" in body["data"]["edges"][0]["sourceHandle"]


def test_round_trip_export_zip_then_import_keeps_every_member(client, alice, bob):
    ids = []
    for fixture in FIXTURE_NAMES:
        ids.append(client.post(URL, json=reference_flow(fixture), headers=alice.bearer).get_json()["id"])
    download = client.post(URL + "download/", json=ids, headers=alice.bearer)
    assert download.status_code == 200
    assert download.mimetype == "application/x-zip-compressed"
    assert download.headers["Content-Disposition"].startswith("attachment; filename=")
    archive = zipfile.ZipFile(io.BytesIO(download.get_data()))
    assert sorted(archive.namelist()) == sorted(f"{reference_flow(f)['name']}.json" for f in FIXTURE_NAMES)
    exported = {json.loads(archive.read(n))["id"]: json.loads(archive.read(n)) for n in archive.namelist()}
    # bob imports alice's archive: copies with new ids, every member of the flows kept
    imported = upload(client, bob, download.get_data(), "export.zip")
    assert imported.status_code == 201, imported.get_json()
    for flow in imported.get_json():
        assert flow["id"] not in exported and flow["user_id"] == bob.id
        source = next(e for e in exported.values() if e["name"] == flow["name"])
        for key in (
            "name",
            "description",
            "data",
            "webhook",
            "tags",
            "endpoint_name",
            "access_type",
            "flow_type",
            "is_component",
            "locked",
            "mcp_enabled",
            "icon",
            "gradient",
        ):
            assert flow[key] == source[key], key
    # alice re-imports her own archive: stable ids update in place, nothing duplicated
    again = upload(client, alice, download.get_data(), "export.zip")
    assert again.status_code == 201
    assert sorted(f["id"] for f in again.get_json()) == sorted(ids)
    assert len(own_flows(client, alice)) == 3


def test_zip_with_one_corrupt_entry_imports_nothing(client, alice):
    good = json.dumps(reference_flow("chat-echo.json")).encode()
    payload = zip_of({"a.json": good, "b.json": b"{ this is not json", "c.json": good})
    response = upload(client, alice, payload, "flows.zip")
    assert response.status_code == 422  # the one JSON parser: invalid JSON is a 422 naming the entry
    assert response.get_json()["detail"][0]["loc"] == ["body", "file", "b.json"]
    assert own_flows(client, alice) == []


def test_zip_with_an_invalid_flow_imports_nothing(client, alice):
    good = json.dumps(reference_flow("chat-echo.json")).encode()
    payload = zip_of({"a.json": good, "b.json": json.dumps({"name": "x", "data": {"nodes": []}}).encode()})
    response = upload(client, alice, payload, "flows.zip")
    assert response.status_code == 422
    assert response.get_json()["detail"][0]["loc"][:3] == ["body", "file", "b.json"]
    assert own_flows(client, alice) == []


def test_broken_and_empty_files(client, alice):
    assert upload(client, alice, b"PK\x03\x04garbage", "x.zip").status_code == 400
    assert upload(client, alice, b"", "x.json").status_code == 400
    assert upload(client, alice, b"[1, 2]", "x.json").status_code == 422
    assert upload(client, alice, b'"just a string"', "x.json").status_code == 400
    assert upload(client, alice, zip_of({"readme.txt": b"hi"}), "x.zip").status_code == 400
    missing = client.post(URL + "upload/", data={}, headers=alice.bearer, content_type="multipart/form-data")
    assert missing.status_code == 422
    assert own_flows(client, alice) == []


def test_duplicate_ids_in_one_upload_are_refused(client, alice):
    flow_id = str(uuid.uuid4())
    payload = json.dumps({"flows": [{"id": flow_id, "name": "a"}, {"id": flow_id, "name": "b"}]}).encode()
    response = upload(client, alice, payload)
    assert response.status_code == 422
    assert flow_id in response.get_json()["detail"][0]["msg"]
    assert own_flows(client, alice) == []


def test_flows_list_document_and_stable_ids(client, alice, bob):
    bobs = client.post(URL, json={"name": "bob-original"}, headers=bob.bearer).get_json()
    new_id = str(uuid.uuid4())
    payload = {"flows": [{"id": new_id, "name": "fresh"}, {"id": bobs["id"], "name": "copy of bob's"}]}
    response = upload(client, alice, json.dumps(payload).encode())
    assert response.status_code == 201
    fresh, copy = response.get_json()
    assert fresh["id"] == new_id
    assert copy["id"] != bobs["id"] and copy["user_id"] == alice.id
    assert client.get(URL + bobs["id"], headers=bob.bearer).get_json()["name"] == "bob-original"
    update = upload(client, alice, json.dumps({"id": new_id, "name": "fresh v2", "description": "2"}).encode())
    assert update.get_json()[0]["id"] == new_id and update.get_json()[0]["name"] == "fresh v2"
    assert len(own_flows(client, alice)) == 2


def test_upload_into_a_project(client, alice, bob):
    project = client.post("/api/v1/projects/", json={"name": "Imports"}, headers=alice.bearer).get_json()
    payload = json.dumps(reference_flow("chat-echo.json")).encode()
    response = upload(client, alice, payload, query=f"?folder_id={project['id']}")
    assert response.get_json()[0]["folder_id"] == project["id"]
    bobs = client.post("/api/v1/projects/", json={"name": "Bob"}, headers=bob.bearer).get_json()
    assert upload(client, alice, payload, query=f"?folder_id={bobs['id']}").status_code == 404
    # a folder_id inside the file that is not the caller's lands in the default project
    foreign = json.dumps({**reference_flow("chat-echo.json"), "folder_id": bobs["id"]}).encode()
    placed = upload(client, alice, foreign).get_json()[0]
    assert placed["folder_id"] != bobs["id"]


def test_upload_ignores_fs_path_and_never_writes_there(client, alice, tmp_path, caplog):
    target = tmp_path / "owned.json"
    payload = json.dumps({"name": "x", "fs_path": str(target)}).encode()
    response = upload(client, alice, payload)
    assert response.status_code == 201, response.get_json()
    assert [f["name"] for f in own_flows(client, alice)] == ["x"]
    assert not target.exists()
    assert "fs_path" in caplog.text  # a warning names what was ignored


@pytest.mark.parametrize(
    "document",
    [
        b'{"name": "deep", "data": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"name": "big", "data": {"n": ' + b"9" * 5000 + b"}}",
        b'{"name": "\\ud800 lone", "description": "\\udfff"}',
        b'{"name": "nan", "data": {"n": NaN}}',
    ],
)
def test_upload_refuses_hostile_json_with_422(client, alice, document):
    for payload, name in ((document, "flows.json"), (zip_of({"a.json": document}), "flows.zip")):
        response = upload(client, alice, payload, filename=name)
        assert response.status_code == 422, response.get_data(as_text=True)
        assert response.get_json()["detail"][0]["type"].startswith("json_")
    assert own_flows(client, alice) == []


def test_download_skips_other_users_flows(client, alice, bob):
    mine = client.post(URL, json={"name": "mine"}, headers=alice.bearer).get_json()
    theirs = client.post(URL, json={"name": "theirs"}, headers=bob.bearer).get_json()
    response = client.post(URL + "download/", json=[mine["id"], theirs["id"]], headers=alice.bearer)
    assert response.status_code == 200 and response.mimetype == "application/json"
    assert response.get_json()["id"] == mine["id"]
    assert "theirs" not in response.get_data(as_text=True)
    assert client.post(URL + "download/", json=[theirs["id"]], headers=alice.bearer).status_code == 404
    assert client.post(URL + "download/", json="x", headers=alice.bearer).status_code == 422


def test_zip_entry_names_are_safe(client, alice):
    ids = [
        client.post(URL, json={"name": n}, headers=alice.bearer).get_json()["id"]
        for n in ("../../etc/passwd", "a/b", "same", "Same")
    ]
    archive = zipfile.ZipFile(io.BytesIO(client.post(URL + "download/", json=ids, headers=alice.bearer).get_data()))
    names = archive.namelist()
    assert len(names) == 4 and len({n.lower() for n in names}) == 4
    assert all("/" not in n and "\\" not in n and not n.startswith(".") for n in names)
