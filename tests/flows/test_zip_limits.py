"""ZIP (and JSON) uploads are bounded in entries, expanded size and error size before anything is parsed:
many tiny entries, a highly compressed big entry, a lying size header, a nested archive and error bombs."""

from __future__ import annotations

import io
import json
import resource
import struct
import time
import zipfile

import pytest

from tests.flows.test_transfer import upload, zip_of

FLOWS = "/api/v1/flows/upload/"
PROJECTS = "/api/v1/projects/upload/"


def post(client, caller, url, payload, filename="bomb.zip"):
    return client.post(
        url,
        data={"file": (io.BytesIO(payload), filename)},
        headers=caller.bearer,
        content_type="multipart/form-data",
    )


def deflated(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def flow_json(name="f") -> bytes:
    return json.dumps({"name": name, "data": {"nodes": [], "edges": []}}).encode()


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("url", [FLOWS, PROJECTS])
def test_many_tiny_entries_are_refused_before_reading(client, alice, url):
    # 5,000 entries, most not even .json: every entry of the central directory counts
    payload = zip_of({f"e{i}.txt": b"" for i in range(4990)} | {f"f{i}.json": flow_json() for i in range(10)})
    response = post(client, alice, url, payload)
    assert response.status_code == 413, response.get_json()
    assert "1000 entries" in response.get_json()["detail"]
    assert len(response.get_data()) < 4096


def test_the_entry_cap_is_a_setting(make_app):
    from tests.conftest import make_user, superuser

    app = make_app(plugins=["accounts", "flows"], SERVICE_MAX_ZIP_ENTRIES="3")
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    ok = upload(client, alice, zip_of({f"f{i}.json": flow_json(f"f{i}") for i in range(3)}), "f.zip")
    assert ok.status_code == 201, ok.get_json()
    refused = upload(client, alice, zip_of({f"f{i}.json": flow_json(f"f{i}") for i in range(4)}), "f.zip")
    assert refused.status_code == 413 and "3 entries" in refused.get_json()["detail"]


@pytest.mark.parametrize("url", [FLOWS, PROJECTS])
def test_a_highly_compressed_big_entry_is_refused_from_its_declared_size(client, alice, url):
    payload = deflated({"big.json": b" " * (200 * 1024 * 1024)})  # 200 MB of spaces, ~200 KB zipped
    assert len(payload) < 400_000
    before, t0 = rss_mb(), time.monotonic()
    response = post(client, alice, url, payload)
    assert response.status_code == 413, response.get_json()
    assert "expands to more than" in response.get_json()["detail"]
    assert time.monotonic() - t0 < 2 and rss_mb() - before < 50


def _lie_about_size(payload: bytes, name: bytes, declared: int) -> bytes:
    """Rewrite the uncompressed size of ``name`` in its local header and its central directory record."""
    data = bytearray(payload)
    local = data.find(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 22, declared)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        name_len = struct.unpack_from("<H", data, central + 28)[0]
        if bytes(data[central + 46 : central + 46 + name_len]) == name:
            struct.pack_into("<I", data, central + 24, declared)
        central = data.find(b"PK\x01\x02", central + 4)
    return bytes(data)


def test_a_lying_size_header_never_expands_past_what_it_declares(client, alice):
    real = json.dumps({"name": "x", "description": "y" * (20 * 1024 * 1024), "data": {}}).encode()
    payload = _lie_about_size(deflated({"small.json": real}), b"small.json", 100)
    before = rss_mb()
    response = post(client, alice, FLOWS, payload)
    assert response.status_code in (400, 413, 422), response.get_json()
    body = response.get_data()
    assert len(body) < 4096 and rss_mb() - before < 50
    assert "small.json" in response.get_json()["detail"]


def test_a_nested_archive_is_never_expanded(client, alice):
    inner = deflated({f"f{i}.json": flow_json() for i in range(3)})
    response = upload(client, alice, zip_of({"inner.zip": inner}), "outer.zip")
    assert response.status_code in (400, 422)
    assert "no .json" in str(response.get_json()["detail"])
    disguised = upload(client, alice, zip_of({"inner.json": inner}), "outer.zip")
    assert disguised.status_code == 422 and len(disguised.get_data()) < 4096


@pytest.mark.parametrize("as_zip", [True, False])
def test_error_bodies_are_bounded(client, alice, as_zip):
    """A small file whose every item is an error: a bounded list of errors (checking stops), the rest counted."""
    document = b"[" + b",".join([b"1"] * 999) + b"]"
    payload, name = (deflated({"a.json": document}), "a.zip") if as_zip else (document, "a.json")
    response = post(client, alice, FLOWS, payload, name)
    assert response.status_code == 422
    assert len(response.get_data()) < 8192, len(response.get_data())
    items = response.get_json()["detail"]
    assert items[0]["msg"] == "a flow must be an object" and items[0]["loc"] == ["body", "file", "a.json", "0"]
    assert "more errors" in items[-1]["msg"]


def test_a_million_items_answer_a_short_413(client, alice):
    document = b"[" + b",".join([b"1"] * 1_000_000) + b"]"  # 2 MB: 4 KB zipped
    response = post(client, alice, FLOWS, deflated({"a.json": document}), "a.zip")
    assert response.status_code == 413 and len(response.get_data()) < 1024


def test_too_many_flows_in_one_document(client, alice):
    document = json.dumps([{"name": f"f{i}", "data": {"nodes": [], "edges": []}} for i in range(1001)]).encode()
    response = post(client, alice, FLOWS, document, "many.json")
    assert response.status_code == 413 and "1000 flows" in response.get_json()["detail"]


def test_long_entry_names_are_truncated_in_errors(client, alice):
    name = "n" * 60_000 + ".json"
    response = upload(client, alice, zip_of({name: b"{ not json"}), "x.zip")
    assert response.status_code == 422 and len(response.get_data()) < 4096


def test_a_normal_export_still_imports(client, alice):
    payload = deflated({f"f{i}.json": flow_json(f"f{i}") for i in range(20)})
    response = upload(client, alice, payload, "export.zip")
    assert response.status_code == 201 and len(response.get_json()) == 20


def test_an_end_record_that_lies_about_the_count(client, alice):
    payload = bytearray(zip_of({f"e{i}.json": b"{}" for i in range(3000)}))
    end = payload.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", payload, end + 8, 1, 1)  # entries on this disk, entries in total
    response = post(client, alice, FLOWS, bytes(payload))
    assert response.status_code == 413 and "1000 entries" in response.get_json()["detail"]
