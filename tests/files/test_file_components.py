"""Directory, File System (tool) and Write File: ordinary, empty and bad inputs, containment and
traversal attempts, owner isolation (real runs through the run service), and an export/import round trip."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from service_bundle_documents.bundle import register_components
from service_bundle_documents.local import Directory, FileSystemTool
from service_bundle_standard.bundle import all_components

from core.engine import ComponentError, Registry, RunContext
from core.engine.host_access import Hardening, LocalAccessDenied, contain
from tests.files.conftest import upload
from tests.flowkit import edge, export_and_import, flow, node, node_templates

PLUGINS = ["accounts", "flows", "files", "run", "standard", "documents"]
REGISTRY = Registry.from_classes([*all_components(), *register_components()])
TRAVERSALS = ["../x", "a/../../x", "%2e%2e/x", "%252e%252e/x", "..%2fx", "/etc/passwd", "a\\..\\x", "a\x00b"]


@pytest.fixture
def app(make_app):
    return make_app(plugins=PLUGINS)


def tree(root: Path) -> Path:
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.txt").write_text("alpha")
    (root / "b.md").write_text("# beta")
    (root / ".hidden.txt").write_text("hidden")
    (root / "image.bin").write_bytes(b"\x00\x01")
    (root / "sub" / "c.txt").write_text("gamma")
    (root / "sub" / "deeper" / "d.txt").write_text("delta")
    return root


def ctx(tmp_path: Path, *, restrict: bool, user: str = "u1") -> RunContext:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    return RunContext(
        user_id=user,
        hardening=Hardening(restrict_local_files=restrict, config_dir=config if restrict else None, private_dir=config),
    )


def directory(context: RunContext, **params) -> list[str]:
    comp = Directory({**{i.name: i.value for i in Directory.inputs}, **params}, context=context)
    return sorted(Path(r["file_path"]).name + "=" + r["text"] for r in comp.as_dataframe().to_records())


# --- the containment helper ----------------------------------------------------------------
def test_contain_refuses_every_escape(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "in.txt").write_text("x")
    os.symlink(tmp_path, root / "out")
    assert contain(root, "in.txt") == (root / "in.txt").resolve()
    assert contain(root, str(root / "in.txt")) == (root / "in.txt").resolve()  # absolute, but inside
    for bad in [*TRAVERSALS, "out/anything", str(tmp_path)]:
        with pytest.raises(LocalAccessDenied):
            contain(root, bad)


# --- Directory -----------------------------------------------------------------------------
def test_directory_ordinary(tmp_path):
    root = tree(tmp_path / "docs")
    context = ctx(tmp_path, restrict=False)
    assert directory(context, path=str(root)) == ["a.txt=alpha", "b.md=# beta"]
    assert directory(context, path=str(root), recursive=True) == [
        "a.txt=alpha",
        "b.md=# beta",
        "c.txt=gamma",
        "d.txt=delta",
    ]
    assert directory(context, path=str(root), recursive=True, depth=1) == ["a.txt=alpha", "b.md=# beta", "c.txt=gamma"]
    assert directory(context, path=str(root), types=["md"]) == ["b.md=# beta"]
    assert "hidden.txt=hidden" in " ".join(directory(context, path=str(root), load_hidden=True))


def test_directory_empty_and_bad_inputs(tmp_path):
    context = ctx(tmp_path, restrict=False)
    (tmp_path / "empty").mkdir()
    assert directory(context, path=str(tmp_path / "empty")) == []
    with pytest.raises(ComponentError, match="Directory not found"):
        directory(context, path=str(tmp_path / "missing"))
    with pytest.raises(ComponentError, match="Unsupported file types: exe"):
        directory(context, path=str(tmp_path / "empty"), types=["exe"])
    with pytest.raises(ComponentError, match="'depth' must be 0 or more"):
        directory(context, path=str(tmp_path / "empty"), depth=-1)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(ComponentError, match=r"Could not read broken\.pdf"):
        directory(context, path=str(bad), types=["pdf"])
    assert directory(context, path=str(bad), types=["pdf"], silent_errors=True) == []


def test_directory_containment(tmp_path):
    # unrestricted: any path but the config directory (keys, database, stored files) or one holding it
    context = ctx(tmp_path, restrict=False)
    (tmp_path / "config" / "secret_key").write_text("k")
    for private in (tmp_path / "config", tmp_path, tmp_path / "config" / "."):
        with pytest.raises(LocalAccessDenied, match="private files"):
            directory(context, path=str(private))
    with pytest.raises(LocalAccessDenied):
        directory(context, path=str(tmp_path / "x" / ".." / "config"))
    # restricted: only the user's workspace under the config directory
    restricted = ctx(tmp_path, restrict=True)
    workspace = tmp_path / "config" / "workspace" / "u1"
    assert directory(restricted, path=".") == []
    (workspace / "mine.txt").write_text("mine")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside")
    os.symlink(outside, workspace / "link.txt")
    assert directory(restricted, path="", silent_errors=True) == ["mine.txt=mine"]
    with pytest.raises(ComponentError, match=r"link\.txt"):
        directory(restricted, path=".")  # the symlink out is refused, not followed
    for bad in [*TRAVERSALS, str(tmp_path), str(tmp_path / "config")]:
        with pytest.raises(LocalAccessDenied):
            directory(restricted, path=bad)


def test_directory_owner_isolation_when_restricted(tmp_path):
    alice, bob = ctx(tmp_path, restrict=True, user="alice"), ctx(tmp_path, restrict=True, user="bob")
    directory(alice, path=".")
    (tmp_path / "config" / "workspace" / "alice" / "diary.txt").write_text("alice's diary")
    assert directory(bob, path=".") == []
    for ref in ("../alice", "%2e%2e/alice", str(tmp_path / "config" / "workspace" / "alice")):
        with pytest.raises(LocalAccessDenied):
            directory(bob, path=ref)
    anonymous = RunContext(user_id=None, hardening=alice.hardening)
    with pytest.raises(LocalAccessDenied, match="signed-in user"):
        directory(anonymous, path=".")


# --- File System (tool) -------------------------------------------------------------------------
def toolkit(context: RunContext, **params) -> dict:
    comp = FileSystemTool({**{i.name: i.value for i in FileSystemTool.inputs}, **params}, context=context)
    return {t.name: t for t in comp.as_tools()}, comp


def test_file_system_tools_ordinary(tmp_path):
    # the tool works in the user's workspace whatever SERVICE_RESTRICT_LOCAL_FILE_ACCESS says (issue 26)
    root = tree(tmp_path / "config" / "workspace" / "u1" / "root")
    tools, comp = toolkit(ctx(tmp_path, restrict=False), root_path="root")
    assert sorted(tools) == ["list_files", "read_file", "write_file"]
    listing = tools["list_files"].run({"path": "."})
    assert {"path": "a.txt", "type": "file", "size": 5} in listing and any(e["path"] == "sub" for e in listing)
    assert tools["read_file"].run({"path": "sub/c.txt"}) == "gamma"
    assert tools["write_file"].run({"path": "new/e.txt", "content": "epsilon"}) == "Wrote 7 bytes to new/e.txt"
    assert (root / "new" / "e.txt").read_text() == "epsilon"
    meta = comp.build_metadata().data
    assert meta == {"root_path": str(root.resolve()), "read_only": False, "tools": list(tools)}
    read_only, _ = toolkit(ctx(tmp_path, restrict=False), root_path="root", read_only=True)
    assert sorted(read_only) == ["list_files", "read_file"]


def test_file_system_empty_and_bad_inputs(tmp_path):
    tools, _ = toolkit(ctx(tmp_path, restrict=False), root_path="root")
    assert tools["list_files"].run({}) == []
    with pytest.raises(ComponentError, match="File not found"):
        tools["read_file"].run({"path": "nothing.txt"})
    with pytest.raises(ComponentError, match="Not a file path"):
        tools["write_file"].run({"path": ".", "content": "x"})
    with pytest.raises(ValueError, match="unknown arguments"):
        tools["read_file"].run({"path": "a", "mode": "w"})
    with pytest.raises(LocalAccessDenied, match="workspace"):  # a root outside the workspace, even opened
        toolkit(ctx(tmp_path, restrict=False), root_path=str(tmp_path / "missing"))[0]["list_files"].run({})
    assert not (tmp_path / "missing").exists()


def test_file_system_containment_and_isolation(tmp_path):
    context = ctx(tmp_path, restrict=True, user="alice")
    tools, comp = toolkit(context, root_path="")
    workspace = tmp_path / "config" / "workspace" / "alice"
    assert comp.build_metadata().data["root_path"] == str(workspace.resolve())
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", workspace / "link.txt")
    for bad in [*TRAVERSALS, "link.txt", str(tmp_path / "secret.txt")]:
        with pytest.raises(LocalAccessDenied):
            tools["read_file"].run({"path": bad})
        with pytest.raises(LocalAccessDenied):
            tools["write_file"].run({"path": bad, "content": "pwned"})
    assert (tmp_path / "secret.txt").read_text() == "secret"
    assert tools["list_files"].run({"path": "."}) == []  # the symlink out is not listed
    with pytest.raises(LocalAccessDenied):
        toolkit(context, root_path="../bob")[1].build_metadata()
    bob_tools, _ = toolkit(ctx(tmp_path, restrict=True, user="bob"), root_path=".")
    tools["write_file"].run({"path": "note.txt", "content": "alice only"})
    assert bob_tools["list_files"].run({}) == []
    with pytest.raises(LocalAccessDenied):
        bob_tools["read_file"].run({"path": "../alice/note.txt"})


# --- real runs: Write File, and Directory / File System through the run service ----------------
def run(client, caller, nodes, edges, **body):
    created = client.post("/api/v1/flows/", json={"name": "files", "data": flow(nodes, edges)}, headers=caller.bearer)
    assert created.status_code == 201, created.get_json()
    response = client.post(
        f"/api/v1/run/{created.get_json()['id']}", json={"input_value": "", **body}, headers=caller.key
    )
    return response.status_code, response.get_json()


def text_of(body):
    return body["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def write_flow(value: str, **fields):
    source = node("TextInput", "TextInput-1", registry=REGISTRY, input_value=value)
    writer = node("SaveToFile", "SaveToFile-1", registry=REGISTRY, **fields)
    out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    return [source, writer, out], [edge(source, "text", writer, "input"), edge(writer, "message", out, "input_value")]


def content(client, caller, name):
    files = {f["path"]: f for f in client.get("/api/v2/files", headers=caller.bearer).get_json()}
    found = files[f"{caller.id}/{name}"]
    return client.get(f"/api/v2/files/{found['id']}", headers=caller.bearer).get_data()


def test_write_file_formats_and_append(client, alice):
    status, body = run(client, alice, *write_flow("hello", file_name="notes", local_format="txt"))
    assert status == 200, body
    assert text_of(body) == f"Message saved successfully as '{alice.id}/notes.txt'"
    assert content(client, alice, "notes.txt") == b"hello"
    run(client, alice, *write_flow("again", file_name="notes", local_format="txt", append_mode=True))
    assert content(client, alice, "notes.txt") == b"hello\nagain"
    run(client, alice, *write_flow("replaced", file_name="notes", local_format="txt"))
    assert content(client, alice, "notes.txt") == b"replaced"
    run(client, alice, *write_flow("one", file_name="log.json"))
    run(client, alice, *write_flow("two", file_name="log.json", append_mode=True))
    assert json.loads(content(client, alice, "log.json")) == [{"text": "one"}, {"text": "two"}]
    run(client, alice, *write_flow("a|b", file_name="t", local_format="markdown"))
    assert content(client, alice, "t.md") == b"a|b"
    run(client, alice, *write_flow("<b>x</b>", file_name="page", local_format="html"))
    assert content(client, alice, "page.html") == b"<p>&lt;b&gt;x&lt;/b&gt;</p>\n"
    run(client, alice, *write_flow("=1+1", file_name="sheet", local_format="csv"))
    run(client, alice, *write_flow("row two", file_name="sheet", local_format="csv", append_mode=True))
    assert content(client, alice, "sheet.csv") == b"text\n=1+1\nrow two\n"
    run(client, alice, *write_flow("=1+1", file_name="book", local_format="excel"))
    from openpyxl import load_workbook

    sheet = load_workbook(io.BytesIO(content(client, alice, "book.xlsx"))).active
    assert [c.value for c in sheet[1]] == ["text"] and sheet["A2"].value == "'=1+1"  # no formula injection


def test_write_file_empty_and_bad_inputs(client, alice):
    for fields, message in (
        ({"file_name": ""}, "A file name is required"),
        ({"file_name": "../escape"}, "without folders"),
        ({"file_name": "a/b"}, "without folders"),
        ({"file_name": "%2e%2e"}, None),  # a plain (odd) name: kept as the user's own file
        ({"file_name": "x", "local_format": "exe"}, "Unsupported file format"),
        ({"file_name": "x", "storage_location": [{"name": "AWS"}]}, "Storage location 'AWS' is not available"),
    ):
        status, body = run(client, alice, *write_flow("v", **fields))
        if message is None:
            assert status == 200 and text_of(body).endswith(f"'{alice.id}/%2e%2e.json'"), body
        else:
            assert message in str(body), (fields, body)
    status, body = run(client, alice, *write_flow("", file_name="empty"))
    assert "Nothing to save" in str(body)
    listed = [f["path"] for f in client.get("/api/v2/files", headers=alice.bearer).get_json()]
    assert listed == [f"{alice.id}/%2e%2e.json"]  # no half-written or stray files


def test_write_file_belongs_to_the_runs_user(client, alice, bob):
    upload(client, bob, b"bob's original", "shared.txt")
    run(client, alice, *write_flow("alice's", file_name="shared", local_format="txt"))
    assert content(client, bob, "shared.txt") == b"bob's original"
    assert content(client, alice, "shared.txt") == b"alice's"
    # appending never reads another user's file of the same name
    run(client, alice, *write_flow("more", file_name="shared", local_format="txt", append_mode=True))
    assert content(client, alice, "shared.txt") == b"alice's\nmore"
    assert content(client, bob, "shared.txt") == b"bob's original"


def test_write_user_file_hook(app):
    """The files plugin's ``write_user_file`` answer: a plain name, replace or append, the owner's own row."""
    import uuid

    from core.app import state

    user = str(uuid.uuid4())
    with app.app_context():
        hook = state(app).host.hooks
        first = hook.write_user_file(user_id=user, name="h.txt", content=b"one", append=False)
        assert first is not None and first.path == f"{user}/h.txt" and first.size == 3
        again = hook.write_user_file(user_id=user, name="h.txt", content=b"two", append=True)
        assert again is not None and again.id == first.id and again.size == 6
        assert hook.read_user_file(user_id=user, ref=first.id) == b"onetwo"
        assert hook.read_user_file(user_id=str(uuid.uuid4()), ref=first.id) is None
        for bad in ("", "a/b", "..", "a\\b", "a\x00b"):
            with pytest.raises(ValueError):
                hook.write_user_file(user_id=user, name=bad, content=b"x", append=False)


def test_directory_and_file_system_in_runs_are_per_user_when_restricted(make_app):
    from core.app import state
    from tests.conftest import make_user, superuser

    app = make_app(plugins=PLUGINS, restrict_local_file_access=True)
    client = app.test_client()
    admin = superuser(client)
    alice, bob = make_user(client, admin, username="alice"), make_user(client, admin, username="bob")
    workspace = state(app).settings.resolved_config_dir / "workspace"
    (workspace / alice.id).mkdir(parents=True)
    (workspace / alice.id / "plan.txt").write_text("alice's plan")

    def directory_run(caller, path):
        reader = node("Directory", "Directory-1", registry=REGISTRY, path=path)
        out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
        return run(client, caller, [reader, out], [edge(reader, "dataframe", out, "input_value")])

    status, body = directory_run(alice, ".")
    assert status == 200 and "alice's plan" in text_of(body), body
    for caller, path in ((bob, "."), (bob, f"../{alice.id}"), (bob, str(workspace / alice.id)), (alice, "..")):
        _status, body = directory_run(caller, path)
        assert "alice's plan" not in str(body), (caller.username, path)
    _status, body = directory_run(bob, f"../{alice.id}")
    assert "SERVICE_RESTRICT_LOCAL_FILE_ACCESS" in str(body) or "refused" in str(body)


def test_export_import_round_trip(make_app):
    from core.app import state
    from core.engine import Graph
    from tests.conftest import make_user, superuser

    app = make_app(plugins=PLUGINS)
    client = app.test_client()
    admin = superuser(client)
    alice, bob = make_user(client, admin, username="alice"), make_user(client, admin, username="bob")
    registry = state(app).components.current
    keys = ["Directory", "FileSystemTool", "SaveToFile"]
    nodes = [node(key, f"n{i}", registry=registry) for i, key in enumerate(keys)]
    nodes[2]["data"]["node"]["template"]["file_name"]["value"] = "out"
    created = client.post("/api/v1/flows/", json={"name": "files", "data": flow(nodes, [])}, headers=alice.bearer)
    data = export_and_import(client, alice, bob, created.get_json()["id"], "files.json")
    assert node_templates(data["nodes"]) == node_templates(nodes)
    assert [v.key for v in Graph.build(data, registry).vertices.values()] == keys


def test_anonymous_public_runs_never_reach_the_owners_files(make_app):
    """A PUBLIC flow run by an anonymous visitor acts as the visitor's principal: the owner's stored file is
    "not found", and what Write File saves is the principal's own file, never written over the owner's."""
    from core.app import state
    from core.runs import public as public_runs
    from tests.conftest import make_user, superuser

    app = make_app(plugins=["accounts", "flows", "variables", "monitor", "workflows", "files", "standard", "documents"])
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    mine = upload(client, alice, b"alice's private notes", "notes.txt").get_json()

    def public_run(nodes, edges):
        created = client.post(
            "/api/v1/flows/", json={"name": "public", "data": flow(nodes, edges)}, headers=alice.bearer
        ).get_json()
        assert client.post(f"/api/v1/flows/{created['id']}/shares", json={}, headers=alice.bearer).status_code == 201
        client.set_cookie("client_id", "visitor-7")
        response = client.post(
            "/api/v2/workflows/public", json={"flow_id": created["id"], "input_value": "", "mode": "stream"}
        )
        return response.get_data(as_text=True)

    reader = node("File", "File-1", registry=REGISTRY)
    reader["data"]["node"]["template"]["path"]["file_path"] = [mine["path"], mine["id"]]
    out = node("ChatOutput", "ChatOutput-1", registry=REGISTRY)
    raw = public_run([reader, out], [edge(reader, "message", out, "input_value")])
    assert "alice's private notes" not in raw
    raw = public_run(*write_flow("visitor text", file_name="notes", local_format="txt"))
    principal = public_runs.principal("visitor-7")
    assert content(client, alice, "notes.txt") == b"alice's private notes"
    with app.app_context():
        hook = state(app).host.hook
        assert hook.read_user_file(user_id=principal, ref=f"{principal}/notes.txt") == b"visitor text"
        assert hook.read_user_file(user_id=principal, ref=mine["id"]) is None
