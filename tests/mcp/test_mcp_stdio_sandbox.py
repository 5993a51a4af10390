"""Stdio MCP servers (issue 26, #1): only superusers (or an admin's allow-list) define them, a config an
ordinary user stored before never starts, and every server starts inside the sandbox (empty environment,
own PID namespace, none of the host's files, no network by default)."""

from __future__ import annotations

import json
import logging
import socket
import sys
import uuid
from pathlib import Path

import pytest

from core import db, sandbox
from tests.conftest import PASSWORD, make_user, superuser
from tests.mcp.conftest import PLUGINS

pytest.importorskip("mcp")

SERVERS = "/api/v2/mcp/servers"
PROBE = Path(__file__).with_name("probe_server.py")
#: what a python MCP server from this virtualenv needs: the venv, the interpreter it links to, the script
BINDS = tuple(dict.fromkeys((sys.prefix, sys.base_prefix, str(PROBE.parent))))
needs_sandbox = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox: {sandbox.available()}")


@pytest.fixture
def loopback_port():
    """A service listening on loopback (as the database and Redis do)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


@pytest.fixture
def marker(tmp_path):
    path = tmp_path / f"pwned-{uuid.uuid4().hex}"
    yield path
    assert not path.exists(), "the stdio command ran"


def _pwn(marker: Path) -> dict:
    return {"command": "sh", "args": ["-c", f"echo pwned > {marker}"]}


def test_ordinary_user_cannot_store_a_stdio_server(client, alice, marker):
    """The audit's repro: store {command: sh ...}, then list its tools."""
    refused = client.post(f"{SERVERS}/x", json=_pwn(marker), headers=alice.bearer)
    assert refused.status_code == 403, refused.get_json()
    detail = refused.get_json()["detail"]
    assert isinstance(detail, str) and "superuser" in detail and "SERVICE_MCP_STDIO_ALLOWED_COMMANDS" in detail
    assert client.get(f"{SERVERS}/x/tools", headers=alice.bearer).status_code == 404
    assert client.get(f"{SERVERS}?action_count=true", headers=alice.bearer).get_json() == []
    # an HTTP server stays allowed (it goes through the egress rules)
    remote = client.post(f"{SERVERS}/remote", json={"url": "https://mcp.example.com/mcp"}, headers=alice.bearer)
    assert remote.status_code == 200
    # nor may a stored HTTP server be turned into a stdio one
    patched = client.patch(f"{SERVERS}/remote", json=_pwn(marker), headers=alice.bearer)
    assert patched.status_code == 403 and "superuser" in patched.get_json()["detail"]
    assert client.get(f"{SERVERS}/remote", headers=alice.bearer).get_json()["transport"] == "streamablehttp"


def test_an_admin_allow_list_opens_named_commands(make_app, marker):
    app = make_app(plugins=PLUGINS, mcp_stdio_allowed_commands=("/usr/bin/true",))
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    ok = client.post(f"{SERVERS}/ok", json={"command": "/usr/bin/true"}, headers=alice.bearer)
    assert ok.status_code == 200, ok.get_json()
    for command in ("true", "sh", "/usr/bin/true2"):
        refused = client.post(f"{SERVERS}/no", json={**_pwn(marker), "command": command}, headers=alice.bearer)
        assert refused.status_code == 403, command


def test_a_stdio_config_stored_before_never_starts(make_app, marker, caplog):
    first = make_app(plugins=[*PLUGINS, "mcp_tools"])
    client = first.test_client()
    alice = make_user(client, superuser(client), username="alice")
    with first.app_context():  # what an ordinary user could store before this change
        from service_mcp import servers
        from service_mcp.models import Server

        config, secret = servers.normalise(_pwn(marker))
        config["added_by_superuser"] = False
        with db.transaction() as s:
            s.add(Server(user_id=uuid.UUID(alice.id), name="legacy", config=config, secret=servers._encrypt(secret)))
    with caplog.at_level(logging.WARNING):
        second = make_app(plugins=[*PLUGINS, "mcp_tools"])
    warned = [r.getMessage() for r in caplog.records if "legacy" in r.getMessage()]
    assert len(warned) == 1 and alice.id in warned[0] and "will not start" in warned[0], warned
    client = second.test_client()
    login = client.post("/api/v1/login", data={"username": "alice", "password": PASSWORD})
    token = {"Authorization": f"Bearer {login.get_json()['access_token']}"}
    listed = client.get(f"{SERVERS}/legacy/tools", headers=token)
    assert listed.status_code == 403 and "superuser" in listed.get_json()["detail"]
    counted = client.get(f"{SERVERS}?action_count=true", headers=token).get_json()
    assert counted[0]["toolsCount"] is None and "superuser" in counted[0]["error"]
    with second.app_context():
        from service_mcp import servers

        assert [(r["name"], r["user_id"]) for r in servers.unapproved_stdio_servers(db.session())] == [
            ("legacy", alice.id)
        ]


def _probe(app, caller, server: str, **args) -> dict:
    """Call the probe tool through the MCP Tools component (the bundle's stdio launch)."""
    return _probe_tool(app, caller, server, "probe", **args)


def _probe_tool(app, caller, server: str, tool: str, **args) -> dict:
    """Call one tool of the probe server through the MCP Tools component."""
    from service_bundle_mcp.component import MCPTools

    from core.runs import make_context

    with app.app_context():
        ctx = make_context(user_id=caller.id, flow={"id": None, "name": "t"}, log_builds=False, app=app)
        component = MCPTools.build(mcp_server={"name": server})
        component.context = ctx
        tools = {t.name: t for t in component.as_tools()}
        return json.loads(tools[tool].run(args))


@needs_sandbox
def test_a_superusers_stdio_server_runs_in_the_sandbox(make_app, monkeypatch, loopback_port):
    secret = f"fake-secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("SERVICE_SECRET_KEY", secret)
    monkeypatch.setenv("SERVICE_DATABASE_PASSWORD_PROBE", secret)
    app = make_app(plugins=[*PLUGINS, "mcp_tools"], sandbox_stdio_binds=BINDS)
    client = app.test_client()
    admin = superuser(client)
    body = {"command": sys.executable, "args": [str(PROBE)], "env": {"TOKEN": "the-servers-own"}}
    assert client.post(f"{SERVERS}/probe", json=body, headers=admin.bearer).status_code == 200
    listed = client.get(f"{SERVERS}/probe/tools", headers=admin.bearer)  # the plugin's stdio launch
    assert listed.status_code == 200, listed.get_json()
    assert {t["name"] for t in listed.get_json()} == {"probe", "fill", "limits"}
    config_dir = str(app.extensions["service"].settings.resolved_config_dir)
    host_files = [config_dir, str(Path.cwd() / "pyproject.toml"), "/etc/passwd", "/work/main/pyproject.toml", "/root"]
    assert Path(host_files[1]).exists() and Path(host_files[3]).exists()
    seen = _probe(app, admin, "probe", paths=",".join(host_files), port=loopback_port)
    text = json.dumps(seen)
    assert secret not in text and "SERVICE_" not in text
    assert seen["environ"]["TOKEN"] == "the-servers-own" and seen["environ"]["HOME"] == "/tmp"
    assert set(seen["environ"]) <= {"TOKEN", "HOME", "TMPDIR", "PATH", "LANG", "PWD"}, seen["environ"]
    assert "USER=" not in seen["proc1"] and "SHELL=" not in seen["proc1"]
    assert seen["pid"] < 10  # its own PID namespace
    assert int(seen["caps"], 16) == 0  # no capability, even when the service runs as root
    assert seen["passwd"] == "<FileNotFoundError>" and seen["cwd"] == "/tmp"
    assert {k: seen["paths"][k] for k in host_files[:4]} == dict.fromkeys(host_files[:4], False)
    assert seen["paths"]["/root"] == any(b.startswith("/root/") for b in BINDS)
    assert seen["connect"].startswith("<"), "a loopback service was reachable"


@needs_sandbox
def test_a_stdio_server_runs_under_memory_and_cpu_limits(make_app):
    app = make_app(
        plugins=[*PLUGINS, "mcp_tools"],
        sandbox_stdio_binds=BINDS,
        sandbox_stdio_memory_mb=768,
        sandbox_stdio_cpu_seconds=40,
    )
    client = app.test_client()
    admin = superuser(client)
    client.post(f"{SERVERS}/probe", json={"command": sys.executable, "args": [str(PROBE)]}, headers=admin.bearer)
    seen = _probe_tool(app, admin, "probe", "limits", megabytes=1024)
    assert seen["as"] == 768 * 1024 * 1024 and seen["cpu"] == 40 and seen["core"] == 0
    assert seen["held"] == "MemoryError"  # 1 GB does not fit under 768 MB of address space
    assert _probe_tool(app, admin, "probe", "limits", megabytes=64)["held"] == "held 64 MB"


def test_a_demoted_superusers_stdio_server_stops_starting(make_app, marker):
    app = make_app(plugins=[*PLUGINS, "mcp_tools"])
    client = app.test_client()
    admin = superuser(client)
    carol = make_user(client, admin, username="carol")
    promoted = client.patch(f"/api/v1/users/{carol.id}", json={"is_superuser": True}, headers=admin.bearer)
    assert promoted.status_code == 200, promoted.get_json()
    assert client.post(f"{SERVERS}/mine", json=_pwn(marker), headers=carol.bearer).status_code == 200
    from service_mcp import hookspecs

    from core import appstate

    def superuser_now() -> bool | None:
        with app.app_context():
            return appstate.hooks().first(hookspecs.user_is_superuser, user_id=carol.id)

    assert superuser_now() is True
    demoted = client.patch(f"/api/v1/users/{carol.id}", json={"is_superuser": False}, headers=admin.bearer)
    assert demoted.status_code == 200
    assert superuser_now() is False
    listed = client.get(f"{SERVERS}/mine/tools", headers=carol.key)
    assert listed.status_code == 403 and "current superuser" in listed.get_json()["detail"]


@needs_sandbox
def test_network_is_an_admin_opt_in(make_app, loopback_port):
    app = make_app(plugins=[*PLUGINS, "mcp_tools"], sandbox_stdio_binds=BINDS, sandbox_stdio_network=True)
    client = app.test_client()
    admin = superuser(client)
    client.post(f"{SERVERS}/probe", json={"command": sys.executable, "args": [str(PROBE)]}, headers=admin.bearer)
    assert _probe(app, admin, "probe", port=loopback_port)["connect"] == "connected"


def test_without_the_sandbox_stdio_servers_are_refused(make_app, monkeypatch, marker):
    monkeypatch.setattr(sandbox, "available", lambda: "the sandbox tool 'bwrap' is not installed")
    app = make_app(plugins=[*PLUGINS, "mcp_tools"])
    client = app.test_client()
    admin = superuser(client)
    assert client.post(f"{SERVERS}/x", json=_pwn(marker), headers=admin.bearer).status_code == 200
    listed = client.get(f"{SERVERS}/x/tools", headers=admin.bearer)
    assert listed.status_code in (502, 503) and "bwrap" in listed.get_json()["detail"]
    assert "SERVICE_SANDBOX_STDIO_UNSANDBOXED" in listed.get_json()["detail"]
    from service_bundle_mcp.component import MCPTools

    from core.engine import ComponentError
    from core.runs import make_context

    with app.app_context():
        component = MCPTools.build(mcp_server={"name": "x"})
        component.context = make_context(user_id=admin.id, flow={"id": None, "name": "t"}, log_builds=False, app=app)
        with pytest.raises(ComponentError, match="bwrap"):
            component.as_tools()


@needs_sandbox
def test_a_stdio_servers_disk_use_is_capped(make_app, monkeypatch):
    monkeypatch.setattr(sandbox, "tmpfs_size_supported", lambda: False)  # the watched host dir
    app = make_app(plugins=[*PLUGINS, "mcp_tools"], sandbox_stdio_binds=BINDS, sandbox_disk_mb=16)
    client = app.test_client()
    admin = superuser(client)
    client.post(f"{SERVERS}/probe", json={"command": sys.executable, "args": [str(PROBE)]}, headers=admin.bearer)
    from service_bundle_mcp.component import MCPTools

    from core.engine import ComponentError
    from core.runs import make_context

    with app.app_context():
        component = MCPTools.build(mcp_server={"name": "probe"})
        component.context = make_context(user_id=admin.id, flow={"id": None, "name": "t"}, log_builds=False, app=app)
        tools = {t.name: t for t in component.as_tools()}
        with pytest.raises(ComponentError, match="disk limit"):
            tools["fill"].run({"megabytes": 200})


def test_an_inline_stdio_config_in_a_flow_is_never_used(make_app, marker):
    """The MCP Tools field may carry the editor's ``config`` too: only the user's stored config by name counts."""
    from tests.mcp.test_mcp_servers_component import run, tools_flow
    from tests.run.runkit import create_flow

    app = make_app(plugins=[*PLUGINS, "mcp_tools"])
    client = app.test_client()
    alice = make_user(client, superuser(client), username="alice")
    data = tools_flow("x", "anything")
    data["nodes"][0]["data"]["node"]["template"]["mcp_server"]["value"] = {"name": "x", "config": _pwn(marker)}
    flow = create_flow(client, alice, data, name="inline")
    status, body = run(client, alice, flow["id"])
    assert status != 200 and "MCP server 'x' not found" in body
