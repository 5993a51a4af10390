"""Stored names stay unique: two uploads of one name (same second, or at once from threads) never answer 500.

Issue 26 (low): two per-flow uploads of one name within a second collided on the unique ``(user_id, path)``
and answered 500. Per-flow uploads keep the reference's ``<flow_id>/<YYYY-MM-DD_HH-MM-SS>_<name>`` and add
`` (n)`` before the extension on a clash; per-user uploads already did so, but a concurrent upload could
still take the name between the check and the insert.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import threading

import pytest
from service_files import services

from tests.files.conftest import make_flow, upload

STAMP = r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d"


@pytest.fixture
def frozen(monkeypatch):
    """Every per-flow upload in the same second."""
    monkeypatch.setattr(services, "_now", lambda: dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC))


def _flow_upload(client, caller, flow_id, content=b"data", name="doc.txt", route="files/upload"):
    return client.post(f"/api/v1/{route}/{flow_id}", data={"file": (io.BytesIO(content), name)}, headers=caller.bearer)


def _stored_bytes(app) -> list:
    from core.app import state

    root = state(app).settings.resolved_config_dir / "files"
    return [p for p in root.rglob("*") if p.is_file() and ".uploads" not in p.parts]


@pytest.mark.parametrize("route", ["files/upload", "upload"])
def test_two_flow_uploads_of_one_name_in_the_same_second(client, alice, app, frozen, route):
    flow_id = make_flow(client, alice)
    first = _flow_upload(client, alice, flow_id, b"one", route=route)
    second = _flow_upload(client, alice, flow_id, b"two", route=route)
    assert first.status_code == 201, first.get_json()
    assert second.status_code == 201, second.get_json()
    paths = [first.get_json()["file_path"], second.get_json()["file_path"]]
    assert paths[0] == f"{flow_id}/2025-01-02_03-04-05_doc.txt"
    assert paths[1] == f"{flow_id}/2025-01-02_03-04-05_doc (1).txt"
    for path, content in zip(paths, (b"one", b"two"), strict=True):
        name = path.split("/", 1)[1]
        got = client.get(f"/api/v1/files/download/{flow_id}/{name}", headers=alice.bearer)
        assert got.status_code == 200 and got.data == content
    assert len(_stored_bytes(app)) == 2


def test_a_name_taken_between_the_check_and_the_insert_is_retried(client, alice, app, monkeypatch):
    """The row of a concurrent upload lands after the free name was chosen: the next free one is used."""
    assert upload(client, alice, b"first", "race.txt").status_code == 201
    real = services._free_path
    calls = []

    def stale(s, user_id, prefix, filename, lost):
        calls.append(filename)
        return f"{prefix}/{filename}" if len(calls) == 1 else real(s, user_id, prefix, filename, lost)

    monkeypatch.setattr(services, "_free_path", stale)
    second = upload(client, alice, b"second", "race.txt")
    assert second.status_code == 201, second.get_json()
    assert second.get_json()["path"] == f"{alice.id}/race (1).txt"
    assert len(calls) == 2
    assert len(_stored_bytes(app)) == 2


def test_a_name_that_stays_taken_is_409_and_leaves_nothing(client, alice, app, monkeypatch):
    assert upload(client, alice, b"first", "busy.txt").status_code == 201
    monkeypatch.setattr(services, "_free_path", lambda s, user_id, prefix, filename, lost: f"{prefix}/{filename}")
    refused = upload(client, alice, b"second", "busy.txt")
    assert refused.status_code == 409, refused.get_json()
    assert "busy.txt" in refused.get_json()["detail"]
    assert len(_stored_bytes(app)) == 1
    listed = client.get("/api/v2/files", headers=alice.bearer).get_json()
    assert [f["path"] for f in listed] == [f"{alice.id}/busy.txt"]
    from core.app import state

    assert not any((state(app).settings.resolved_config_dir / "files" / ".uploads").iterdir())


def _at_once(app, caller, count: int, send) -> list:
    results: list = [None] * count
    barrier = threading.Barrier(count)

    def one(i: int) -> None:
        client = app.test_client()
        barrier.wait()
        results[i] = send(client, i)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_concurrent_uploads_of_one_name_all_succeed(client, alice, app, frozen):
    flow_id = make_flow(client, alice)
    count = 6
    per_flow = _at_once(app, alice, count, lambda c, i: _flow_upload(c, alice, flow_id, str(i).encode()))
    per_user = _at_once(app, alice, count, lambda c, i: upload(c, alice, str(i).encode(), "same.txt"))
    for response in per_flow + per_user:
        assert response.status_code == 201, response.get_json()
    flow_paths = {r.get_json()["file_path"] for r in per_flow}
    user_paths = {r.get_json()["path"] for r in per_user}
    assert len(flow_paths) == count and len(user_paths) == count
    assert all(re.fullmatch(rf"{flow_id}/{STAMP}_doc( \(\d\))?\.txt", p) for p in flow_paths)
    assert len(_stored_bytes(app)) == 2 * count


def test_concurrent_appends_to_a_new_name_make_one_file(client, alice, app):
    count = 8
    results = _at_once(app, alice, count, lambda c, i: upload(c, alice, b"x", "log.txt", "?append=true"))
    assert all(r.status_code == 201 for r in results), [r.get_json() for r in results]
    assert len({r.get_json()["id"] for r in results}) == 1
    assert results[0].get_json()["path"] == f"{alice.id}/log.txt"
    listed = client.get("/api/v2/files", headers=alice.bearer).get_json()
    assert [(f["path"], f["size"]) for f in listed] == [(f"{alice.id}/log.txt", count)]
