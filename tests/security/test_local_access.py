"""Issue 26, findings 2, 5 and 6 reproduced: under default settings an ordinary user's components reach no host
file, no service database and no directory outside their workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from service_bundle_data.sql import SQLComponent
from service_bundle_documents.local import Directory, FileSystemTool
from service_bundle_documents.read_file import ReadFile
from service_bundle_standard.http import CSVtoData, JSONtoData

from core.engine import ComponentError
from tests.security.conftest import PG_URL, build, run_context

HOST_PATHS = ["/etc/passwd", "/etc/shadow", "/proc/self/environ", "/proc/self/cwd/pyproject.toml", "./.env"]
#: a relative path names a file of the user's workspace: "not found" there is the right answer
REFUSED = ("SERVICE_RESTRICT_LOCAL_FILE_ACCESS", "File not found")


def read_file(ctx, ref: str):
    """The File component reading ``ref`` (unsupported extensions read too, so the path check is reached)."""
    return build(ReadFile, ctx, file_path_str=ref, ignore_unsupported_extensions=False).load_files()


def _refused(call, *rules: str) -> str:
    with pytest.raises(ComponentError) as caught:
        call()
    text = str(caught.value)
    assert any(rule in text for rule in rules), text
    return text


# --- finding 2: the SQL Database component ----------------------------------------------------------------
def test_sql_refuses_the_service_sqlite_database(app, alice):
    ctx = run_context(app, alice.id)
    config = app.config.get("SERVICE_CONFIG_DIR") or str(Path(ctx.hardening.private_dir))
    urls = [f"sqlite:///{config}/service.db", f"sqlite:///{config}/../config/service.db", f"sqlite:///{config}/."]
    urls += [f"sqlite+pysqlite:///{config}%2Fservice.db", f"sqlite:///file:{config}/service.db?uri=true"]
    for url in urls:
        for query in ("select password from accounts_user", "update accounts_user set is_superuser=1"):
            sql = build(SQLComponent, ctx, database_url=url, query=query, allow_writes=True)
            _refused(sql.run_sql_query, "SERVICE_RESTRICT_LOCAL_FILE_ACCESS", "refused")
    # a relative name is a file of the user's own workspace, not the service's database
    relative = build(SQLComponent, ctx, database_url="sqlite:///service.db", query="select * from accounts_user")
    _refused(relative.run_sql_query, "no such table")


def test_sql_refuses_the_loopback_postgresql_by_default(app, alice):
    ctx = run_context(app, alice.id)
    for url in (PG_URL, "postgresql+psycopg://postgres@localhost/test", "postgresql://postgres@[::1]:5432/test"):
        sql = build(SQLComponent, ctx, database_url=url, query="update accounts_user set is_superuser=true")
        _refused(sql.run_sql_query, "SERVICE_CONNECTOR_SSRF_ALLOW_LOOPBACK", "service's own")


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg:///test",  # no host: libpq's Unix socket
        "postgresql+psycopg://postgres@/test?host=/var/run/postgresql",
        "postgresql+psycopg://postgres@db.example.com/test?service=local",
        "mysql+pymysql://root@db.example.com/x?unix_socket=/run/mysqld/mysqld.sock",
    ],
)
def test_sql_refuses_sockets_and_connection_files(app, alice, url):
    sql = build(SQLComponent, run_context(app, alice.id), database_url=url, query="select 1")
    _refused(sql.run_sql_query, "refused", "not allowed")


def test_sql_never_reaches_the_service_database_even_with_loopback_allowed(tmp_path):
    """An admin who opens loopback for connectors still keeps the service's own database and Redis out.

    The record is built from settings naming the PostgreSQL test server as the service's database (no app
    is started on it: the shared test database belongs to the suites).
    """
    from core.engine import RunContext
    from core.engine.egress import EgressPolicy
    from core.engine.host_access import Hardening
    from core.settings import Settings

    settings = Settings.load(
        {"config_dir": tmp_path, "database_url": PG_URL, "redis_url": "redis://localhost:6379/0"}, environ={}
    )
    hardening = Hardening.from_settings(settings)
    assert {e.name for e in hardening.service_endpoints} == {"database", "Redis"}
    ctx = RunContext(user_id="u1", hardening=hardening, egress=EgressPolicy(connector_allow_loopback=True))
    urls = [PG_URL, "postgresql://postgres@localhost:5432/postgres", "postgresql://postgres@127.0.0.2/test"]
    urls += ["postgresql://postgres@[::1]:5432/test", "postgresql://postgres@[::ffff:127.0.0.1]/x"]
    for url in urls:
        sql = build(SQLComponent, ctx, database_url=url, query="update accounts_user set is_superuser=true")
        _refused(sql.run_sql_query, "service's own database")
    ctx.hardening.check_service_endpoint("127.0.0.1", 3306)  # another loopback service is the loopback rule's
    with pytest.raises(ComponentError, match="service's own Redis"):
        ctx.hardening.check_service_endpoint("0.0.0.0", 6379)  # noqa: S104 - the unspecified address reaches it too


def test_sql_refuses_dialects_whose_sql_reads_host_files(app, alice):
    ctx = run_context(app, alice.id)
    for url in ("duckdb:///:memory:", "duckdb:///mine.duckdb"):
        query = "select * from read_csv('/etc/passwd')"
        sql = build(SQLComponent, ctx, database_url=url, query=query, allow_writes=True)
        _refused(sql.run_sql_query, "can read and write any server file")


def test_sql_sqlite_inside_the_workspace_still_works(app, alice):
    import sqlite3

    ctx = run_context(app, alice.id)
    workspace = ctx.hardening.workspace(alice.id)
    with sqlite3.connect(workspace / "shop.db") as conn:
        conn.execute("CREATE TABLE items (name TEXT)")
        conn.execute("INSERT INTO items VALUES ('pen')")
    for url in ("sqlite:///shop.db", f"sqlite:///{workspace}/shop.db", "sqlite://"):
        sql = build(SQLComponent, ctx, database_url=url, query="select 1 as one")
        assert sql.run_sql_query().rows == [{"one": 1}]
    rows = build(SQLComponent, ctx, database_url="sqlite:///shop.db", query="select name from items").run_sql_query()
    assert rows.rows == [{"name": "pen"}]


# --- finding 5: File, Load CSV, Load JSON, knowledge ingestion -------------------------------------------
@pytest.mark.parametrize("ref", [*HOST_PATHS, "<config>/secret_key", "<config>/service.db", "<config>"])
def test_file_components_refuse_host_paths(app, alice, ref):
    ctx = run_context(app, alice.id)
    ref = ref.replace("<config>", str(ctx.hardening.private_dir))
    readers = [
        lambda: read_file(ctx, ref),
        lambda: build(CSVtoData, ctx, csv_path=ref).load_csv_to_data(),
        lambda: build(JSONtoData, ctx, json_path=ref).convert_json_to_data(),
    ]
    with app.app_context():
        for read in readers:
            text = _refused(read, *REFUSED)
            assert "root:" not in text


def test_knowledge_ingestion_refuses_host_paths(client, alice):
    from tests.knowledge.conftest import create_kb, ingest, wait_job

    create_kb(client, alice, name="host")
    for ref in ("/etc/passwd", "/proc/self/environ", "./.env"):
        job = wait_job(client, alice, "host", ingest(client, alice, "host", file_ids=[ref]))
        assert job["state"] == "failed", job
        assert any(rule in str(job["error"]) for rule in REFUSED), job
        chunks = client.get("/api/v1/knowledge_bases/host/chunks", headers=alice.bearer).get_json()
        assert "root:" not in str(chunks)


def test_opting_out_still_never_reaches_system_service_or_secret_paths(make_app, tmp_path, monkeypatch):
    server = tmp_path / "srv"
    server.mkdir()
    (server / ".env").write_text("SERVICE_SECRET_KEY=leaked-marker\n")
    monkeypatch.chdir(server)
    opened = make_app(plugins=["accounts", "files", "run", "standard", "documents"], restrict_local_file_access=False)
    client = opened.test_client()
    from tests.conftest import make_user, superuser

    bob = make_user(client, superuser(client), username="bob")
    ctx = run_context(opened, bob.id)
    allowed = tmp_path / "shared.csv"
    allowed.write_text("a,b\n1,2\n")
    with opened.app_context():
        assert build(CSVtoData, ctx, csv_path=str(allowed)).load_csv_to_data()[0].data["a"] == "1"
    link = tmp_path / "innocent.txt"
    link.symlink_to(server / ".env")
    never = [*HOST_PATHS, str(server / ".env"), str(link), str(ctx.hardening.private_dir / "service.db")]
    never += [os.path.expanduser("~/.bashrc"), "/root/.profile", "/sys/kernel/hostname", "/dev/stdin"]
    never += ["%2Fetc%2Fpasswd"]
    with opened.app_context():
        for ref in never:
            for read in (
                lambda ref=ref: read_file(ctx, ref),
                lambda ref=ref: build(CSVtoData, ctx, csv_path=ref).load_csv_to_data(),
            ):
                text = _refused(read, "never", "File not found")
                assert "leaked-marker" not in text and "root:" not in text


# --- finding 6: the File System tool ---------------------------------------------------------------------
def test_file_system_tool_writes_only_in_the_workspace(app, alice, tmp_path):
    ctx = run_context(app, alice.id)
    outside = tmp_path / "outside"
    for root in ("", ".", "notes", str(outside), "/tmp/outside", "/", "../.."):
        tool = build(FileSystemTool, ctx, root_path=root)
        for path in ("../escape.txt", "/tmp/outside/x.txt", str(outside / "x.txt"), "%2e%2e/x.txt", "a/../../x"):
            with pytest.raises(ComponentError):
                tool.write_file(path, "pwned")
        if root in ("", ".", "notes"):
            tool.write_file("notes/ok.txt" if root != "notes" else "ok.txt", "mine")
        else:  # a root outside the workspace is refused, whatever is written
            with pytest.raises(ComponentError, match="workspace"):
                tool.write_file("ok.txt", "pwned")
    assert not outside.exists() and not Path("/tmp/outside/x.txt").exists()
    assert (ctx.hardening.workspace(alice.id) / "notes" / "ok.txt").read_text() == "mine"


def test_file_system_tool_stays_in_the_workspace_when_local_access_is_opened(make_app, tmp_path):
    opened = make_app(plugins=["accounts", "run", "documents"], restrict_local_file_access=False)
    client = opened.test_client()
    from tests.conftest import make_user, superuser

    bob = make_user(client, superuser(client), username="bob")
    ctx = run_context(opened, bob.id)
    tool = build(FileSystemTool, ctx, root_path=str(tmp_path))
    with pytest.raises(ComponentError):
        tool.write_file(str(tmp_path / "x.txt"), "pwned")
    assert not (tmp_path / "x.txt").exists()
    with pytest.raises(ComponentError, match="SERVICE_FILE_SYSTEM_TOOL_ROOT"):
        tool.build_metadata()
    own = build(FileSystemTool, ctx, root_path="")
    assert own.build_metadata().data["root_path"] == str(ctx.hardening.workspace(bob.id))


def test_file_system_tool_root_setting_confines_to_the_admins_root(make_app, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    opened = make_app(plugins=["accounts", "run", "documents"], file_system_tool_root=str(shared))
    client = opened.test_client()
    from tests.conftest import make_user, superuser

    bob = make_user(client, superuser(client), username="bob")
    ctx = run_context(opened, bob.id)
    tool = build(FileSystemTool, ctx, root_path="team")
    (shared / "team").mkdir()
    tool.write_file("a.txt", "x")
    assert (shared / "team" / "a.txt").read_text() == "x"
    for bad in ("../b.txt", str(tmp_path / "b.txt")):
        with pytest.raises(ComponentError):
            tool.write_file(bad, "x")
    with pytest.raises(ComponentError):
        build(FileSystemTool, ctx, root_path=str(tmp_path)).write_file("b.txt", "x")


def test_directory_reads_only_the_workspace_by_default(app, alice):
    ctx = run_context(app, alice.id)
    for path in ("/etc", "/proc/self", ".", "..", str(ctx.hardening.private_dir)):
        comp = build(Directory, ctx, path=path)
        try:
            rows = comp.as_dataframe().to_records()
        except ComponentError:
            continue
        assert all(str(ctx.hardening.workspace(alice.id)) in r["file_path"] for r in rows), rows


def test_an_opened_default_is_named_at_start_up(make_app):
    from core import startup
    from core.app import state

    assert startup.warn_opened_host_reach(state(make_app(plugins=["accounts"])).settings) == []
    opened = make_app(plugins=["accounts"], restrict_local_file_access=False, connector_ssrf_allow_loopback=True)
    messages = startup.warn_opened_host_reach(state(opened).settings)
    assert [m.split(" ", 1)[0] for m in messages] == [
        "SERVICE_RESTRICT_LOCAL_FILE_ACCESS",
        "SERVICE_CONNECTOR_SSRF_ALLOW_LOOPBACK",
    ]


def test_never_paths_never_hold_the_filesystem_root(tmp_path):
    """A server started from ``/`` keeps ``/.env`` out without refusing every path."""
    from core.engine.hostreach import never_paths

    roots = never_paths(None, cwd="/")
    assert Path("/") not in roots and Path("/.env") in roots and Path("/proc") in roots
    env = tmp_path / "conf" / "service.env"
    assert tmp_path / "conf" in never_paths(str(env), cwd=str(tmp_path / "srv"))
