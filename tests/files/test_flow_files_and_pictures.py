"""Deprecated per-flow files, the deprecated upload route, profile pictures, and path containment."""

from __future__ import annotations

import io
import os
import re

import pytest

from tests.files.conftest import make_flow


def flow_upload(client, caller, flow_id, content=b"data", name="doc.txt", route="files/upload"):
    return client.post(f"/api/v1/{route}/{flow_id}", data={"file": (io.BytesIO(content), name)}, headers=caller.bearer)


@pytest.mark.parametrize("route", ["files/upload", "upload"])
def test_flow_upload_list_download_delete(client, alice, route):
    flow_id = make_flow(client, alice)
    response = flow_upload(client, alice, flow_id, b"abc", "doc.txt", route)
    assert response.status_code == 201
    assert response.headers["Deprecation"] == "true"
    body = response.get_json()
    assert body["flowId"] == flow_id
    assert re.fullmatch(rf"{flow_id}/\d{{4}}-\d\d-\d\d_\d\d-\d\d-\d\d_doc\.txt", body["file_path"])
    name = body["file_path"].split("/", 1)[1]
    listed = client.get(f"/api/v1/files/list/{flow_id}", headers=alice.bearer)
    assert listed.get_json() == {"files": [name]} and listed.headers["Deprecation"] == "true"
    downloaded = client.get(f"/api/v1/files/download/{flow_id}/{name}", headers=alice.bearer)
    assert downloaded.status_code == 200 and downloaded.data == b"abc"
    # per-flow files stay out of the per-user listing
    assert client.get("/api/v2/files", headers=alice.bearer).get_json() == []
    deleted = client.delete(f"/api/v1/files/delete/{flow_id}/{name}", headers=alice.bearer)
    assert deleted.status_code == 200
    assert client.get(f"/api/v1/files/list/{flow_id}", headers=alice.bearer).get_json() == {"files": []}


def test_flow_files_of_another_user_are_404(client, alice, bob):
    flow_id = make_flow(client, alice)
    name = flow_upload(client, alice, flow_id).get_json()["file_path"].split("/", 1)[1]
    assert flow_upload(client, bob, flow_id).status_code == 404
    assert client.get(f"/api/v1/files/list/{flow_id}", headers=bob.bearer).status_code == 404
    assert client.get(f"/api/v1/files/download/{flow_id}/{name}", headers=bob.bearer).status_code == 404
    assert client.delete(f"/api/v1/files/delete/{flow_id}/{name}", headers=bob.bearer).status_code == 404
    assert flow_upload(client, alice, "not-a-flow").status_code == 404


def test_images_only_serve_images(client, alice):
    flow_id = make_flow(client, alice)
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
    image = flow_upload(client, alice, flow_id, png, "pic.png").get_json()["file_path"].split("/", 1)[1]
    text = flow_upload(client, alice, flow_id, b"<script>", "page.png").get_json()["file_path"].split("/", 1)[1]
    shown = client.get(f"/api/v1/files/images/{flow_id}/{image}", headers=alice.bearer)
    assert shown.status_code == 200 and shown.headers["Content-Type"] == "image/png"
    assert "sandbox" in shown.headers["Content-Security-Policy"]
    assert client.get(f"/api/v1/files/images/{flow_id}/{text}", headers=alice.bearer).status_code == 415


def test_profile_pictures_are_public_config_dir_first(client, app):
    from core.app import state

    listed = client.get("/api/v1/files/profile_pictures/list")
    assert listed.status_code == 200
    files = listed.get_json()["files"]
    assert "People/Astronaut.svg" in files and "Space/Rocket.svg" in files
    shipped = client.get("/api/v1/files/profile_pictures/People/Astronaut.svg")
    assert shipped.status_code == 200 and shipped.headers["Content-Type"].startswith("image/svg+xml")
    own = state(app).settings.resolved_config_dir / "profile_pictures" / "People"
    own.mkdir(parents=True)
    (own / "Astronaut.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><title>mine</title></svg>')
    (own / "Custom.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    files = client.get("/api/v1/files/profile_pictures/list").get_json()["files"]
    assert files[0].startswith("People/") and "People/Custom.svg" in files
    assert files.count("People/Astronaut.svg") == 1
    assert b"mine" in client.get("/api/v1/files/profile_pictures/People/Astronaut.svg").data


TRAVERSALS = [
    "../../../etc/passwd",
    "..%2F..%2F..%2Fetc%2Fpasswd",
    "%2e%2e/%2e%2e/etc/passwd",
    "%252e%252e%252f%252e%252e%252fetc%252fpasswd",
    "%2fetc%2fpasswd",
    "%252Fetc%252Fpasswd",
    "..%5c..%5cetc%5cpasswd",
]


@pytest.mark.parametrize("attack", TRAVERSALS)
def test_profile_picture_paths_are_contained(client, attack):
    response = client.get(f"/api/v1/files/profile_pictures/People/{attack}", follow_redirects=True)
    assert response.status_code == 404
    assert b"root:" not in response.data
    response = client.get(f"/api/v1/files/profile_pictures/{attack}/x.svg", follow_redirects=True)
    assert response.status_code == 404


def test_symlink_out_of_the_pictures_directory_is_refused(client, app, tmp_path):
    from core.app import state

    secret = tmp_path / "secret.svg"
    secret.write_text("<svg>secret</svg>")
    folder = state(app).settings.resolved_config_dir / "profile_pictures" / "People"
    folder.mkdir(parents=True)
    os.symlink(secret, folder / "Leak.svg")
    os.symlink(tmp_path, folder.parent / "Out")
    assert client.get("/api/v1/files/profile_pictures/People/Leak.svg").status_code == 404
    assert client.get("/api/v1/files/profile_pictures/Out/secret.svg").status_code == 404
    assert "People/Leak.svg" not in client.get("/api/v1/files/profile_pictures/list").get_json()["files"]


@pytest.mark.parametrize(
    "name",
    ["../x", "a/../../x", "%2e%2e/x", "%252e%252e/x", "/etc/passwd", "%2Fetc%2Fpasswd", "a\\..\\x", "a\x00b", ""],
)
def test_contained_refuses_every_escape(tmp_path, name):
    from service_files.storage import PathRefused, contained

    with pytest.raises(PathRefused):
        contained(tmp_path, name)


def test_contained_accepts_plain_names(tmp_path):
    from service_files.storage import contained

    assert contained(tmp_path, "People/a.svg") == (tmp_path / "People" / "a.svg").resolve()
