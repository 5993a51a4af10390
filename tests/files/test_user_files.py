"""/api/v2/files: upload, list, download, rename, delete, batch zip and batch delete, owner isolation, limits."""

from __future__ import annotations

import io
import zipfile

from tests.files.conftest import upload


def test_upload_returns_the_reference_shape(client, alice):
    response = upload(client, alice, b"hello world", "notes.txt")
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"id", "name", "path", "size", "provider"}
    assert body["name"] == "notes"  # extension stripped, as the reference does
    assert body["path"] == f"{alice.id}/notes.txt"
    assert body["size"] == 11
    # the trailing-slash path is served too
    again = client.post("/api/v2/files/", data={"file": (io.BytesIO(b"x"), "notes.txt")}, headers=alice.bearer)
    assert again.status_code == 201
    assert again.get_json()["path"] == f"{alice.id}/notes (1).txt"


def test_upload_requires_a_file_and_credentials(client, alice):
    missing = client.post("/api/v2/files", data={"other": "x"}, headers=alice.bearer)
    assert missing.status_code == 422
    assert missing.get_json()["detail"][0]["loc"] == ["body", "file"]
    anonymous = client.post("/api/v2/files", data={"file": (io.BytesIO(b"x"), "a.txt")})
    assert anonymous.status_code in (401, 403)


def test_append_adds_to_the_file_of_the_same_name(client, alice):
    first = upload(client, alice, b"one,", "log.txt").get_json()
    second = upload(client, alice, b"two", "log.txt", "?append=true")
    assert second.status_code == 201
    assert second.get_json()["id"] == first["id"]
    assert second.get_json()["size"] == 7
    content = client.get(f"/api/v2/files/{first['id']}?return_content=true", headers=alice.bearer)
    assert content.get_json() == "one,two"


def test_ephemeral_files_are_not_listed_but_readable(client, alice):
    kept = upload(client, alice, b"k", "kept.txt").get_json()
    temp = upload(client, alice, b"t", "temp.txt", "?ephemeral=true").get_json()
    listed = client.get("/api/v2/files", headers=alice.bearer).get_json()
    assert [f["id"] for f in listed] == [kept["id"]]
    assert client.get(f"/api/v2/files/{temp['id']}", headers=alice.bearer).data == b"t"


def test_list_shape_and_owner_isolation(client, alice, bob):
    mine = upload(client, alice, b"a", "a.txt").get_json()
    upload(client, bob, b"b", "b.txt")
    listed = client.get("/api/v2/files", headers=alice.bearer).get_json()
    assert len(listed) == 1
    item = listed[0]
    assert set(item) == {"id", "name", "path", "size", "provider", "user_id", "created_at", "updated_at"}
    assert item["user_id"] == alice.id and item["id"] == mine["id"]
    # bob can neither read, rename, delete nor zip alice's file
    assert client.get(f"/api/v2/files/{mine['id']}", headers=bob.bearer).status_code == 404
    assert client.put(f"/api/v2/files/{mine['id']}?name=x", headers=bob.bearer).status_code == 404
    assert client.delete(f"/api/v2/files/{mine['id']}", headers=bob.bearer).status_code == 404
    assert client.post("/api/v2/files/batch/", json=[mine["id"]], headers=bob.bearer).status_code == 404
    assert client.delete("/api/v2/files/batch/", json=[mine["id"]], headers=bob.bearer).status_code == 404
    client.delete("/api/v2/files", headers=bob.bearer)
    assert client.get(f"/api/v2/files/{mine['id']}", headers=alice.bearer).data == b"a"


def test_download_streams_an_attachment(client, alice):
    payload = bytes(range(256)) * 1000
    file_id = upload(client, alice, payload, "blob.bin").get_json()["id"]
    response = client.get(f"/api/v2/files/{file_id}", headers=alice.bearer)
    assert response.status_code == 200
    assert response.data == payload
    assert response.headers["Content-Type"] == "application/octet-stream"
    assert response.headers["Content-Disposition"].startswith("attachment")
    assert response.headers["Content-Length"] == str(len(payload))
    assert client.get("/api/v2/files/not-a-uuid", headers=alice.bearer).status_code == 404


def test_rename_and_delete_one(client, alice):
    file_id = upload(client, alice, b"x", "draft.md").get_json()["id"]
    renamed = client.put(f"/api/v2/files/{file_id}?name=final", headers=alice.bearer)
    assert renamed.status_code == 200 and renamed.get_json()["name"] == "final"
    assert client.put(f"/api/v2/files/{file_id}", headers=alice.bearer).status_code == 422
    assert client.put(f"/api/v2/files/{file_id}?name=a/b", headers=alice.bearer).status_code == 422
    deleted = client.delete(f"/api/v2/files/{file_id}", headers=alice.bearer)
    assert deleted.status_code == 200
    assert deleted.get_json() == {"detail": "File final deleted successfully"}
    assert client.get(f"/api/v2/files/{file_id}", headers=alice.bearer).status_code == 404


def test_delete_all_removes_bytes(client, alice, app):
    from service_files.config import runtime

    ids = [upload(client, alice, b"x", f"f{i}.txt").get_json()["id"] for i in range(3)]
    root = runtime(app).root
    assert len(list((root / alice.id).iterdir())) == 3
    assert client.delete("/api/v2/files", headers=alice.bearer).status_code == 200
    assert client.get("/api/v2/files", headers=alice.bearer).get_json() == []
    assert list((root / alice.id).iterdir()) == []
    assert all(client.get(f"/api/v2/files/{i}", headers=alice.bearer).status_code == 404 for i in ids)


def test_batch_zip_holds_exactly_the_chosen_files(client, alice):
    a = upload(client, alice, b"alpha", "a.txt").get_json()["id"]
    b = upload(client, alice, b"beta" * 10000, "b.csv").get_json()["id"]
    upload(client, alice, b"not chosen", "c.txt")
    response = client.post("/api/v2/files/batch/", json=[a, b], headers=alice.bearer)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.data))
    assert sorted(archive.namelist()) == ["a.txt", "b.csv"]
    assert archive.read("a.txt") == b"alpha" and archive.read("b.csv") == b"beta" * 10000
    assert archive.testzip() is None


def test_batch_validation_and_delete(client, alice):
    assert client.post("/api/v2/files/batch/", json={"ids": []}, headers=alice.bearer).status_code == 422
    assert client.post("/api/v2/files/batch/", json=["nope"], headers=alice.bearer).status_code == 422
    a = upload(client, alice, b"1", "a.txt").get_json()["id"]
    b = upload(client, alice, b"2", "b.txt").get_json()["id"]
    response = client.delete("/api/v2/files/batch/", json=[a], headers=alice.bearer)
    assert response.status_code == 200 and "message" in response.get_json()
    assert [f["id"] for f in client.get("/api/v2/files", headers=alice.bearer).get_json()] == [b]


def test_size_limit_is_413(make_app, admin_factory=None):
    from tests.conftest import make_user, superuser

    app = make_app(plugins=["accounts", "flows", "files"], max_file_size_upload=1)
    client = app.test_client()
    user = make_user(client, superuser(client))
    ok = upload(client, user, b"x" * (1024 * 1024 - 10), "fits.bin")
    assert ok.status_code == 201
    big = upload(client, user, b"x" * (1024 * 1024 + 1), "big.bin")
    assert big.status_code == 413
    assert "maximum file size 1MB" in big.get_json()["detail"]
    # nothing half-written: no row, no leftover upload
    from service_files.config import runtime

    assert len(client.get("/api/v2/files", headers=user.bearer).get_json()) == 1
    assert list(runtime(app).storage.tmp.iterdir()) == []


def test_content_type_is_sniffed_not_trusted(client, alice, app):
    from service_files.models import StoredFile

    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
    upload(client, alice, png, "looks-like.txt")
    upload(client, alice, b"# Title\n\ntext", "readme.md")
    with app.app_context():
        from core import db

        types = {r.path.rsplit("/", 1)[-1]: r.content_type for r in db.session().query(StoredFile)}
    assert types["looks-like.txt"] == "image/png"
    assert types["readme.md"] == "text/markdown"


def test_client_file_names_never_become_paths(client, alice, app):
    from service_files.config import runtime

    for name in ["../../escape.txt", "/etc/passwd", "..\\..\\win.txt", "%2e%2e%2fenc.txt"]:
        response = upload(client, alice, b"x", name)
        assert response.status_code == 201
        assert ".." not in response.get_json()["path"].split("/")
    root = runtime(app).root
    stored = [p for p in root.rglob("*") if p.is_file() and ".uploads" not in p.parts]
    assert len(stored) == 4 and all(p.parent == root / alice.id for p in stored)


def test_read_user_file_hook_answers_only_the_owner(client, alice, bob, app):
    from core.app import state

    mine = upload(client, alice, b"alice bytes", "a.txt").get_json()
    with app.app_context():
        hook = state(app).host.hook
        assert hook.read_user_file(user_id=alice.id, ref=mine["id"]) == b"alice bytes"
        assert hook.read_user_file(user_id=alice.id, ref=mine["path"]) == b"alice bytes"
        assert hook.read_user_file(user_id=bob.id, ref=mine["id"]) is None
        assert hook.read_user_file(user_id=bob.id, ref=mine["path"]) is None
        assert hook.read_user_file(user_id=alice.id, ref="not/a/file") is None
