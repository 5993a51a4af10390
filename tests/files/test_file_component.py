"""The File component reads the caller's stored files in a real run (text, Markdown, CSV, JSON, PDF, DOCX),
never another user's, and honours SERVICE_RESTRICT_LOCAL_FILE_ACCESS."""

from __future__ import annotations

import pytest
from service_bundle_documents.bundle import register_components
from service_bundle_standard.bundle import all_components

from core.engine import Registry
from tests.files.conftest import upload
from tests.files.docs_fixtures import docx_bytes, pdf_bytes
from tests.flowkit import edge, flow, node

PLUGINS = ["accounts", "flows", "files", "run", "standard", "documents"]
REGISTRY = Registry.from_classes([*all_components(), *register_components()])


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)


def file_flow(client, caller, paths, **fields):
    reader = node("File", "File-1", registry=REGISTRY, **fields)
    reader["data"]["node"]["template"]["path"]["file_path"] = paths
    out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    data = flow([reader, out], [edge(reader, "message", out, "input_value")])
    created = client.post("/api/v1/flows/", json={"name": "reader", "data": data}, headers=caller.bearer)
    assert created.status_code == 201, created.get_json()
    return created.get_json()["id"]


def run_text(client, caller, flow_id):
    response = client.post(f"/api/v1/run/{flow_id}", json={"input_value": ""}, headers=caller.key)
    return response.status_code, response.get_json()


def answer(body):
    return body["outputs"][0]["outputs"][0]["results"]["message"]["text"]


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("notes.txt", b"plain words", "plain words"),
        ("guide.md", b"# Guide\n\nUse **bold**.", "# Guide"),
        ("table.csv", b"a,b\n1,2\n", "a,b\n1,2"),
        ("data.json", b'{"k": "v"}', '{"k": "v"}'),
        ("paper.pdf", pdf_bytes("Quarterly revenue grew"), "Quarterly revenue grew"),
        ("letter.docx", docx_bytes("Dear reader,", "the meeting moved to Friday."), "meeting moved to Friday"),
    ],
)
def test_reads_each_supported_type(client, alice, name, content, expected):
    path = upload(client, alice, content, name).get_json()["path"]
    status, body = run_text(client, alice, file_flow(client, alice, [path]))
    assert status == 200, body
    assert expected in answer(body)


def test_reads_by_id_and_joins_several_files(client, alice):
    first = upload(client, alice, b"first", "one.txt").get_json()
    second = upload(client, alice, b"second", "two.txt").get_json()
    status, body = run_text(client, alice, file_flow(client, alice, [first["id"], second["path"]]))
    assert status == 200
    assert answer(body) == "first\n\nsecond"


def test_never_reads_another_users_file(client, alice, bob, app):
    from service_files.config import runtime

    theirs = upload(client, bob, b"bob's secret", "secret.txt").get_json()
    on_disk = str(runtime(app).root.resolve() / bob.id / theirs["id"])
    for ref in (theirs["id"], theirs["path"], on_disk):
        _status, body = run_text(client, alice, file_flow(client, alice, [ref]))
        text = str(body)
        assert "bob's secret" not in text
        assert "File not found" in text or "SERVICE_RESTRICT_LOCAL_FILE_ACCESS" in text, (ref, text)


def test_local_paths_follow_restrict_local_file_access(make_app, tmp_path):
    from tests.conftest import make_user, superuser

    outside = tmp_path / "outside.txt"
    outside.write_text("local content")
    for restrict, visible in ((False, True), (True, False)):
        app = make_app(plugins=PLUGINS, restrict_local_file_access=restrict)
        client = app.test_client()
        user = make_user(client, superuser(client))
        status, body = run_text(client, user, file_flow(client, user, [str(outside)]))
        assert ("local content" in str(body)) is visible and (status == 200) is visible, (restrict, body)
        # the config directory (keys, database, everyone's uploads) is never readable as a local path
        from core.app import state

        config_file = state(app).settings.resolved_config_dir / "private.txt"
        config_file.write_text("config secret")
        _status, body = run_text(client, user, file_flow(client, user, [str(config_file)]))
        assert "config secret" not in str(body)


def test_unsupported_and_missing_files(client, alice):
    path = upload(client, alice, b"\x00\x01binary", "blob.exe").get_json()["path"]
    _status, body = run_text(client, alice, file_flow(client, alice, [path], ignore_unsupported_extensions=False))
    assert "Unsupported file type" in str(body)
    status, body = run_text(client, alice, file_flow(client, alice, [f"{alice.id}/nothing.txt"], silent_errors=True))
    assert status == 200 and answer(body) == ""
