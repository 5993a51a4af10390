"""Hardening switches, each on and off: code execution, custom component code, local files, connectors."""

from __future__ import annotations

import pytest
from service_bundle_sandbox.python_interpreter import PythonREPLComponent

from core import sandbox
from core.engine import Registry
from core.engine.egress import EgressBlocked, EgressPolicy, check_connector_host, check_url
from core.engine.host_access import Hardening, LocalAccessDenied
from tests.conftest import make_user, superuser
from tests.flowkit import edge, flow, node, standard_registry
from tests.run.runkit import create_flow

PLUGINS = ["accounts", "flows", "run", "catalog", "build", "standard", "sandbox"]
needs_sandbox = pytest.mark.skipif(sandbox.available() is not None, reason=f"{sandbox.available()}")


def registry() -> Registry:
    return Registry.from_classes([*standard_registry().classes(), PythonREPLComponent])


def interpreter_flow(code: str, imports: str = "math") -> dict:
    repl = node(
        "PythonREPLComponent",
        "PythonREPLComponent-AAAAA",
        registry=registry(),
        python_code=code,
        global_imports=imports,
    )
    out = node("ChatOutput", "ChatOutput-BBBBB")
    return flow([repl, out], [edge(repl, "results", out, "input_value")])


def run(client, caller, flow_id):
    return client.post(f"/api/v1/run/{flow_id}", json={"input_value": "x"}, headers=caller.key)


def text_of(response) -> str:
    return response.get_json()["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def setup(make_app, **config):
    app = make_app(plugins=PLUGINS, **config)
    client = app.test_client()
    admin = superuser(client)
    return app, client, admin, make_user(client, admin, username="alice")


@needs_sandbox
def test_python_interpreter_runs_in_the_sandbox_when_allowed(make_app):
    _app, client, _admin, alice = setup(make_app, allow_custom_components=True)
    ok = create_flow(client, alice, interpreter_flow("print(math.factorial(5))"), name="calc")
    response = run(client, alice, ok["id"])
    assert response.status_code == 200, response.get_json()
    assert "120" in text_of(response)
    net = create_flow(
        client,
        alice,
        interpreter_flow("socket.create_connection(('1.1.1.1', 80), timeout=2)", imports="socket"),
        name="net",
    )
    answer = text_of(run(client, alice, net["id"]))
    assert "Network is unreachable" in answer or "Errno" in answer
    slow = create_flow(client, alice, interpreter_flow("while True: pass"), name="loop")
    assert "limit" in text_of(run(client, alice, slow["id"]))
    # the server is unaffected: the next run answers normally
    assert "120" in text_of(run(client, alice, ok["id"]))


@pytest.mark.parametrize(
    ("config", "setting"),
    [
        ({}, "SERVICE_ALLOW_CUSTOM_COMPONENTS"),  # the default: code execution off
        ({"allow_custom_components": False}, "SERVICE_ALLOW_CUSTOM_COMPONENTS"),
        (
            {"allow_custom_components": True, "block_code_interpreter_components": True},
            "SERVICE_BLOCK_CODE_INTERPRETER",
        ),
    ],
)
def test_code_execution_switches_refuse_every_surface(make_app, config, setting):
    _app, client, _admin, alice = setup(make_app, **config)
    created = create_flow(client, alice, interpreter_flow("print(1)"), name="code")
    refused = run(client, alice, created["id"])
    assert refused.status_code == 403
    assert "'PythonREPLComponent'" in refused.get_json()["detail"] and setting in refused.get_json()["detail"]
    advanced = client.post(f"/api/v1/run/advanced/{created['id']}", json={}, headers=alice.key)
    assert advanced.status_code == 403
    built = client.post(f"/api/v1/build/{created['id']}/flow?event_delivery=direct", json={}, headers=alice.bearer)
    assert built.status_code == 403 and setting in built.get_json()["detail"]
    webhook = client.post(f"/api/v1/webhook/{created['id']}", data="x", headers=alice.key)
    assert webhook.status_code == 403 and setting in webhook.get_json()["detail"]


def test_component_refuses_by_itself_too():
    """A caller that skipped check_run still cannot run code: the component checks the hardening record."""
    component = PythonREPLComponent.build(python_code="print(1)", global_imports="math")
    assert component.context.hardening.allow_code_execution is False
    with pytest.raises(Exception, match="SERVICE_ALLOW_CUSTOM_COMPONENTS"):
        component.run_python_repl()


def test_imports_must_be_module_names():
    from service_bundle_sandbox.python_interpreter import parse_imports

    assert parse_imports("math, json\nos.path") == ["math", "json", "os.path"]
    with pytest.raises(Exception, match="not a module name"):
        parse_imports("math; import os")


# --- custom component code -------------------------------------------------------------------------------
UPDATE = "/api/v1/custom_component/update"
BODY = {
    "code": "class X:\n    pass\n",
    "field": "text",
    "field_value": "new",
    "template": {"text": {"value": "old", "type": "str"}, "code": {"value": ""}},
    "frontend_node": {"display_name": "X"},
}


def test_custom_component_update_refused_unless_allowed(make_app):
    _app, client, admin, alice = setup(make_app)
    refused = client.post(UPDATE, json=BODY, headers=alice.bearer)
    assert refused.status_code == 403 and "SERVICE_ALLOW_CUSTOM_COMPONENTS" in refused.get_json()["detail"]
    assert client.post(UPDATE, json=BODY, headers=admin.bearer).status_code == 403


def test_custom_component_update_admin_only(make_app):
    _app, client, admin, alice = setup(make_app, allow_custom_components=True, custom_component_admin_only=True)
    refused = client.post(UPDATE, json=BODY, headers=alice.bearer)
    assert refused.status_code == 403 and "SERVICE_CUSTOM_COMPONENT_ADMIN_ONLY" in refused.get_json()["detail"]
    done = client.post(UPDATE, json=BODY, headers=admin.bearer)
    assert done.status_code == 200
    node_ = done.get_json()
    assert node_["template"]["text"]["value"] == "new" and node_["template"]["code"]["value"] == BODY["code"]
    config = client.get("/api/v1/config", headers=alice.bearer).get_json()
    assert config["allow_custom_components"] is True and config["custom_component_admin_only"] is True


def test_custom_component_update_allowed_for_everyone_and_code_never_runs(make_app, tmp_path):
    _app, client, _admin, alice = setup(make_app, allow_custom_components=True)
    marker = tmp_path / "ran"
    body = {**BODY, "code": f"open({str(marker)!r}, 'w').write('x')\n"}
    assert client.post(UPDATE, json=body, headers=alice.bearer).status_code == 200
    assert not marker.exists()  # parsed, never executed in the server
    bad = client.post(UPDATE, json={**BODY, "code": "def ("}, headers=alice.bearer)
    assert bad.status_code == 400 and "Invalid code" in bad.get_json()["detail"]
    assert client.post(UPDATE, json={**BODY, "field": "nope"}, headers=alice.bearer).status_code == 400
    assert client.post(UPDATE, json={"code": "x"}, headers=alice.bearer).status_code == 422


# --- local files, file databases, git ------------------------------------------------------------------
def test_local_paths_on_and_off(tmp_path):
    config = tmp_path / "config"
    workspace = config / "workspace" / "u1"
    workspace.mkdir(parents=True)
    inside = workspace / "data.txt"
    inside.write_text("x")
    outside = tmp_path / "shared.txt"
    outside.write_text("y")
    # opened (the admin's opt-out): absolute paths outside the never-reachable ones; relative ones in the workspace
    off = Hardening(restrict_local_files=False, config_dir=config, private_dir=config)
    assert off.local_path(str(outside), "u1") == outside.resolve()
    assert off.local_path("data.txt", "u1") == inside.resolve()
    for never in ("/etc/passwd", "/proc/self/environ", str(config / "secret_key"), str(config / "workspace" / "u2")):
        with pytest.raises(LocalAccessDenied, match="never reachable"):
            off.local_path(never, "u1")
    # restricted (the default): the user's workspace only
    on = Hardening(restrict_local_files=True, config_dir=config, private_dir=config)
    assert Hardening().restrict_local_files
    assert on.local_path(str(inside), "u1") == inside.resolve()
    assert on.local_path("data.txt", "u1") == inside.resolve()  # relative paths are read from the workspace
    for bad in ("/etc/passwd", "../outside", str(workspace) + "/../x", str(outside), str(config / "secret_key")):
        with pytest.raises(LocalAccessDenied, match="SERVICE_RESTRICT_LOCAL_FILE_ACCESS"):
            on.local_path(bad, "u1")
    with pytest.raises(LocalAccessDenied, match="signed-in user"):
        on.local_path("data.txt", None)
    link = workspace / "link"
    link.symlink_to("/etc")
    for hardening in (on, off):
        with pytest.raises(LocalAccessDenied):
            hardening.local_path(str(link / "passwd"), "u1")


def test_file_databases_and_local_git_on_and_off(tmp_path):
    config = tmp_path / "config"
    on = Hardening(restrict_local_files=True, config_dir=config, private_dir=config)
    off = Hardening(restrict_local_files=False, config_dir=config, private_dir=config)
    workspace = on.workspace("u1")
    for hardening in (on, off):
        assert hardening.check_database_url("sqlite:///x.db", "u1") == workspace / "x.db"
        assert hardening.check_database_url("sqlite+pysqlite:///:memory:", "u1") is None
        assert hardening.check_database_url("sqlite://", "u1") is None
        for url in (f"sqlite:///{config}/service.db", "duckdb:////etc/x.duckdb", "SQLITE:////proc/self/environ"):
            with pytest.raises(LocalAccessDenied, match="Database file refused"):
                hardening.check_database_url(url, "u1")
        with pytest.raises(LocalAccessDenied, match="plain file path"):
            hardening.check_database_url("sqlite:///file:x.db?uri=true", "u1")
        hardening.check_database_url("postgresql+psycopg://u@db.example.com/x?sslmode=require", "u1")
        for url in ("postgresql:///x", "postgresql://u@h/x?host=/run/postgresql", "mysql://h/x?read_default_file=/f"):
            with pytest.raises(LocalAccessDenied, match="refused"):
                hardening.check_database_url(url, "u1")
    assert off.check_database_url(f"sqlite:///{tmp_path}/open.db", "u1") == tmp_path / "open.db"
    with pytest.raises(LocalAccessDenied, match="SERVICE_RESTRICT_LOCAL_FILE_ACCESS"):
        on.check_database_url(f"sqlite:///{tmp_path}/open.db", "u1")
    for repo in ("/srv/repo", "file:///srv/repo", "./repo", "../repo"):
        off.check_git_source(repo)
        with pytest.raises(LocalAccessDenied, match="local repository"):
            on.check_git_source(repo)
    for repo in ("https://github.com/a/b.git", "git@github.com:a/b.git", "ssh://git@host/a.git"):
        on.check_git_source(repo)


def test_hardening_and_connector_settings_reach_the_run_context(make_app):
    from core.runs import make_context

    app = make_app(
        plugins=PLUGINS,
        restrict_local_file_access=True,
        allow_custom_components=True,
        connector_ssrf_validation_enabled=False,
        connector_ssrf_allow_loopback=False,
        sandbox_cpu_seconds=3,
    )
    with app.app_context():
        ctx = make_context(user_id="u", flow={"id": None, "data": {}})
    assert ctx.hardening.restrict_local_files and ctx.hardening.allow_code_execution
    assert ctx.hardening.config_dir is not None and ctx.hardening.sandbox.cpu_seconds == 3
    assert ctx.egress.connector_validation is False and ctx.egress.for_connector().enabled is False
    assert ctx.child(flow_id="x", flow_name="x", session_id=None).hardening is ctx.hardening
    with make_app(plugins=PLUGINS).app_context():
        default = make_context(user_id="u", flow={"id": None, "data": {}})
    # the defaults since issue 26: local files restricted, loopback connectors refused
    assert default.hardening.restrict_local_files and not default.egress.connector_allow_loopback
    assert default.hardening.tool_root is None  # the File System tool: each user's workspace
    assert {e.name for e in default.hardening.service_endpoints} <= {"database"}  # no Redis configured here


# --- connector SSRF -------------------------------------------------------------------------------------
def test_connector_validation_and_loopback_switches():
    default = EgressPolicy()
    for loopback in ("127.0.0.1", "localhost", "[::1]", "0177.0.0.1"):  # refused by default since issue 26
        with pytest.raises(EgressBlocked, match="SERVICE_CONNECTOR_SSRF_ALLOW_LOOPBACK"):
            check_connector_host(loopback, 5432, default)
    opened = EgressPolicy(connector_allow_loopback=True)
    assert str(check_connector_host("127.0.0.1", 5432, opened)) == "127.0.0.1"
    assert check_connector_host("localhost", 5432, opened) is not None
    with pytest.raises(EgressBlocked, match="SERVICE_CONNECTOR_SSRF_VALIDATION_ENABLED"):
        check_connector_host("10.1.2.3", 5432, default)
    with pytest.raises(EgressBlocked):
        check_connector_host("169.254.169.254", 80, default)
    no_loopback = EgressPolicy(connector_allow_loopback=False)
    with pytest.raises(EgressBlocked):
        check_connector_host("127.0.0.1", 5432, no_loopback)
    off = EgressPolicy(connector_validation=False)
    assert str(check_connector_host("10.1.2.3", 5432, off)) == "10.1.2.3"
    # the API Request policy itself is unchanged: loopback stays blocked there
    with pytest.raises(EgressBlocked):
        check_url("http://127.0.0.1/", default)
    # HTTP connectors use the connector view of the policy
    assert check_url("http://127.0.0.1/", opened.for_connector())[3] is not None
    with pytest.raises(EgressBlocked):
        check_url("http://127.0.0.1/", default.for_connector())
    with pytest.raises(EgressBlocked):
        check_url("http://10.0.0.1/", default.for_connector())
