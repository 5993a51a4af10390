"""``/api/v2/mcp/servers`` and the ``MCP Tools`` component against real MCP servers built with the
official SDK's server side (``sdk_server.py``), over Streamable HTTP and stdio."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from core import db, sandbox
from core.engine import Registry
from tests.conftest import make_user
from tests.flowkit import edge, node
from tests.flowkit import flow as flow_data
from tests.mcp.conftest import PLUGINS
from tests.run.runkit import create_flow
from tests.serverkit import mcp_sdk_server

pytest.importorskip("mcp")

SERVER = Path(__file__).with_name("sdk_server.py")
SERVERS = "/api/v2/mcp/servers"


@pytest.fixture(scope="module")
def http_server():
    with mcp_sdk_server() as url:
        yield url


#: what a python MCP server from this virtualenv needs in the sandbox: the venv, its interpreter, the script
BINDS = tuple(dict.fromkeys((sys.prefix, sys.base_prefix, str(SERVER.parent))))


@pytest.fixture
def app(make_app):
    return make_app(
        plugins=[*PLUGINS, "mcp_tools"],
        ssrf_allowed_hosts=("127.0.0.1",),
        mcp_stdio_allowed_commands=("python",),  # ordinary users may store this one stdio command
        sandbox_stdio_binds=BINDS,
    )


def tools_flow(server: str, tool: str, **args) -> dict:
    from service_bundle_mcp.bundle import all_components
    from service_bundle_standard.bundle import all_components as standard

    registry = Registry.from_classes([*standard(), *all_components()])
    tools = node("MCPTools", "MCPTools-AAAAA", registry=registry, mcp_server={"name": server}, tool=tool)
    for key, value in args.items():  # the chosen tool's argument fields, as the editor adds them
        tools["data"]["node"]["template"][key] = {"name": key, "type": "str", "value": value, "show": True}
    out = node("ChatOutput", "ChatOutput-BBBBB")
    return flow_data([tools, out], [edge(tools, "response", out, "input_value")])


def run(client, caller, flow_id: str) -> tuple[int, str]:
    response = client.post(f"/api/v1/run/{flow_id}", json={"input_value": ""}, headers=caller.key)
    body = response.get_json()
    if response.status_code != 200:
        return response.status_code, json.dumps(body)
    return 200, body["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def test_server_configs_keep_secrets(app, client, alice, bob):
    body = {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer top-secret-1"}}
    added = client.post(f"{SERVERS}/remote", json=body, headers=alice.bearer)
    assert added.status_code == 200, added.get_json()
    assert (
        added.get_json()["headers"] == {"Authorization": "********"}
        and added.get_json()["transport"] == "streamablehttp"
    )
    assert client.post(f"{SERVERS}/remote", json=body, headers=alice.bearer).status_code == 409
    stdio = client.post(
        f"{SERVERS}/local",
        json={"command": "python", "args": ["x.py"], "env": {"TOKEN": "top-secret-2"}},
        headers=alice.bearer,
    )
    assert stdio.status_code == 200 and stdio.get_json()["env"] == {"TOKEN": "********"}
    for response in (client.get(SERVERS, headers=alice.bearer), client.get(f"{SERVERS}/remote", headers=alice.bearer)):
        assert response.status_code == 200 and b"top-secret" not in response.data
    assert [s["name"] for s in client.get(SERVERS, headers=alice.bearer).get_json()] == ["local", "remote"]
    with app.app_context():
        stored = db.session().execute(text("select config, secret from mcp_server")).all()
    assert stored and all("top-secret" not in str(row) for row in stored)
    # the mask sent back keeps the stored value; a new value replaces it
    client.patch(
        f"{SERVERS}/remote",
        json={**body, "headers": {"Authorization": "********", "X-More": "top-secret-3"}},
        headers=alice.bearer,
    )
    from service_mcp.servers import get_config

    with app.app_context():
        config = get_config(db.session(), alice.id, "remote")
    assert config["headers"] == {"Authorization": "Bearer top-secret-1", "X-More": "top-secret-3"}
    # another user's server is not found; bad bodies are 422
    assert client.get(f"{SERVERS}/remote", headers=bob.bearer).status_code == 404
    assert client.delete(f"{SERVERS}/remote", headers=bob.bearer).status_code == 404
    assert client.get(SERVERS, headers=bob.bearer).get_json() == []
    assert client.post(f"{SERVERS}/bad", json={}, headers=alice.bearer).status_code == 422
    assert client.post(f"{SERVERS}/bad", json={"url": "ftp://x"}, headers=alice.bearer).status_code == 422
    assert client.delete(f"{SERVERS}/remote", headers=alice.bearer).status_code == 200
    assert client.get(f"{SERVERS}/remote", headers=alice.bearer).status_code == 404


def test_locked_stdio_servers_are_for_superusers(make_app):
    app = make_app(plugins=PLUGINS, mcp_servers_locked=True)
    client = app.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    alice = make_user(client, admin, username="alice")
    body = {"command": "python", "args": ["server.py"]}
    refused = client.post(f"{SERVERS}/local", json=body, headers=alice.bearer)
    assert refused.status_code == 403 and "SERVICE_MCP_SERVERS_LOCKED" in refused.get_json()["detail"]
    assert (
        client.post(f"{SERVERS}/remote", json={"url": "https://mcp.example.com/mcp"}, headers=alice.bearer).status_code
        == 200
    )
    assert client.post(f"{SERVERS}/local", json=body, headers=admin.bearer).status_code == 200


REFUSALS = [
    (["-v", "/:/host"], "'-v /:/host'", "host mounts"),
    (["--volume=/etc:/etc"], "'--volume=/etc:/etc'", "host mounts"),
    (["--mount", "type=bind,source=/,target=/h"], "'--mount type=bind,source=/,target=/h'", "host mounts"),
    (["--pid=host"], "'--pid=host'", "namespace"),
    (["--ipc", "host"], "'--ipc host'", "namespace"),
    (["--network", "container:db"], "'--network container:db'", "namespace"),
    (["--network", "host"], "'--network host'", "namespace"),
    (["--net=corp-internal"], "'--net=corp-internal'", "non-default network"),
    (["--privileged"], "'--privileged'", "privileges"),
    (["-e", "X=1", "--privileged"], "'--privileged'", "privileges"),  # a value is not the image
    (["-v/:/host"], "'-v/:/host'", "host mounts"),
    (["--cap-add", "SYS_ADMIN"], "'--cap-add SYS_ADMIN'", "privileges"),
    (["--device=/dev/kmsg"], "'--device=/dev/kmsg'", "privileges"),
    (["--user", "root"], "'--user root'", "privileges"),
    (["--security-opt", "seccomp=unconfined"], "'--security-opt seccomp=unconfined'", "security option"),
    (["--security-opt=apparmor=unconfined"], "'--security-opt=apparmor=unconfined'", "security option"),
]


@pytest.mark.parametrize(("flags", "named", "reason"), REFUSALS)
def test_docker_hardening_refusals(make_app, flags, named, reason):
    app = make_app(plugins=PLUGINS, mcp_server_docker_hardening=True)
    client = app.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    body = {"command": "docker", "args": ["run", "-i", "--rm", *flags, "mcp/fetch", "--flag-of-the-server"]}
    refused = client.post(f"{SERVERS}/docker", json=body, headers=admin.bearer)
    assert refused.status_code == 400, refused.get_json()
    assert named in refused.get_json()["detail"] and reason in refused.get_json()["detail"]


def test_docker_hardening_allows_a_plain_container(make_app):
    app = make_app(plugins=PLUGINS, mcp_server_docker_hardening=True)
    client = app.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    ok = {
        "command": "docker",
        "args": ["run", "-i", "--rm", "--network", "none", "-e", "X=1", "mcp/fetch", "--privileged"],
    }
    assert (
        client.post(f"{SERVERS}/docker", json=ok, headers=admin.bearer).status_code == 200
    )  # flags after the image are the server's


def test_component_over_streamable_http(client, alice, http_server):
    assert client.post(f"{SERVERS}/calc", json={"url": http_server}, headers=alice.bearer).status_code == 200
    counted = client.get(f"{SERVERS}?action_count=true", headers=alice.bearer).get_json()
    assert counted[0]["toolsCount"] == 5 and counted[0]["error"] is None
    flow = create_flow(client, alice, tools_flow("calc", "shout", text="quiet please"), name="shout")
    assert run(client, alice, flow["id"]) == (200, "| result |\n|--------|\n| QUIET PLEASE |")  # a Table
    adds = create_flow(client, alice, tools_flow("calc", "add", a="2", b="40"), name="add")
    assert run(client, alice, adds["id"]) == (200, "| result |\n|--------|\n| 42 |")
    failing = create_flow(client, alice, tools_flow("calc", "fail"), name="fail")
    status, body = run(client, alice, failing["id"])
    assert status != 200 and "Tool 'fail' failed: Error executing tool fail" in body  # the SDK hides the detail
    missing = create_flow(client, alice, tools_flow("nowhere", "add"), name="missing")
    status, body = run(client, alice, missing["id"])
    assert status != 200 and "MCP server 'nowhere' not found" in body


def test_component_http_goes_through_ssrf_rules(make_app, http_server):
    app = make_app(plugins=[*PLUGINS, "mcp_tools"])  # no allowed hosts: loopback is private
    client = app.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    client.post(f"{SERVERS}/calc", json={"url": http_server}, headers=admin.bearer)
    flow = create_flow(client, admin, tools_flow("calc", "shout", text="x"), name="ssrf")
    status, body = run(client, admin, flow["id"])
    assert status != 200 and "non-public address" in body
    counted = client.get(f"{SERVERS}?action_count=true", headers=admin.bearer).get_json()
    assert counted[0]["toolsCount"] is None and "non-public" in counted[0]["error"]


needs_sandbox = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox: {sandbox.available()}")


@needs_sandbox
def test_component_over_stdio_and_child_cleanup(client, admin):
    body = {"command": sys.executable, "args": [str(SERVER), "stdio"]}
    assert client.post(f"{SERVERS}/local", json=body, headers=admin.bearer).status_code == 200
    flow = create_flow(client, admin, tools_flow("local", "pid"), name="pid")
    before = _children()
    status, table = run(client, admin, flow["id"])
    pid = table.split("\n")[-1].strip("| ")
    assert status == 200 and pid.isdigit(), table
    assert int(pid) < 10, "the server is in its own PID namespace"
    end = time.monotonic() + 10
    while time.monotonic() < end and _children() - before:
        time.sleep(0.1)
    assert _children() - before == set(), "the stdio server outlived the run"


@needs_sandbox
def test_stdio_child_is_killed_on_timeout(client, admin):
    alice = admin  # stdio servers are a superuser's
    body = {"command": sys.executable, "args": [str(SERVER), "stdio"]}
    client.post(f"{SERVERS}/local", json=body, headers=alice.bearer)
    data = tools_flow("local", "sleep", seconds="30")
    data["nodes"][0]["data"]["node"]["template"]["tool_execution_timeout"] = {
        "name": "tool_execution_timeout",
        "type": "float",
        "value": 3.0,
    }
    flow = create_flow(client, alice, data, name="sleepy")
    before = _children()
    started = time.monotonic()
    status, body = run(client, alice, flow["id"])
    assert status != 200 and "did not answer within 3 seconds" in body and time.monotonic() - started < 20
    time.sleep(1)
    assert _children() - before == set()


def test_as_tools_gives_agent_tools(app, client, alice, http_server):
    client.post(f"{SERVERS}/calc", json={"url": http_server}, headers=alice.bearer)
    from service_bundle_mcp.component import MCPTools

    from core.runs import make_context

    with app.app_context():
        ctx = make_context(user_id=alice.id, flow={"id": None, "name": "t"}, log_builds=False, app=app)
        from core.engine.egress import EgressPolicy

        ctx.egress = EgressPolicy.from_settings(True, ("127.0.0.1",))
        component = MCPTools.build(mcp_server={"name": "calc"})
        component.context = ctx
        tools = {t.name: t for t in component.as_tools()}
        assert set(tools) == {"add", "shout", "pid", "sleep", "fail"}
        assert tools["add"].parameters["properties"]["a"]["type"] == "integer"
        assert tools["add"].run({"a": 1, "b": 2}) == "3"
        assert tools["shout"].run("hey") == "HEY" and tools["shout"].tags == ["mcp", "calc"]
        with pytest.raises(ValueError, match="unknown arguments"):
            tools["add"].run({"c": 1})
        assert tools["shout"].description == "Upper-case a text."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def _children() -> set[int]:
    me = str(os.getpid())
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().split()
        except OSError:
            continue
        if fields[3] == me and fields[2] != "Z":
            out.add(int(fields[0]))
    return out


def test_tool_picker_lists_a_servers_tools(client, alice, bob, http_server):
    client.post(f"{SERVERS}/calc", json={"url": http_server}, headers=alice.bearer)
    tools = client.get(f"{SERVERS}/calc/tools", headers=alice.bearer).get_json()
    assert {t["name"] for t in tools} == {"add", "shout", "pid", "sleep", "fail"}
    add = next(t for t in tools if t["name"] == "add")
    assert add["description"] == "Add two numbers." and set(add["inputSchema"]["properties"]) == {"a", "b"}
    assert client.get(f"{SERVERS}/calc/tools", headers=bob.bearer).status_code == 404
    client.post(f"{SERVERS}/down", json={"url": "http://127.0.0.1:9/mcp"}, headers=alice.bearer)
    down = client.get(f"{SERVERS}/down/tools", headers=alice.bearer)
    assert down.status_code == 502 and "down" in down.get_json()["detail"]


def test_policies_apply_to_stored_servers_later(make_app, tmp_path):
    """A server stored before hardening was turned on is refused at listing and run time."""
    first = make_app(plugins=PLUGINS)
    client = first.test_client()
    from tests.conftest import superuser

    admin = superuser(client)
    body = {"command": "docker", "args": ["run", "-i", "--privileged", "img"]}
    assert client.post(f"{SERVERS}/risky", json=body, headers=admin.bearer).status_code == 200
    hardened = make_app(plugins=PLUGINS, mcp_server_docker_hardening=True)
    c2 = hardened.test_client()
    admin2 = superuser(c2)
    listed = c2.get(f"{SERVERS}?action_count=true", headers=admin2.bearer).get_json()
    assert listed[0]["toolsCount"] is None and "'--privileged'" in listed[0]["error"]
    with hardened.app_context():
        from core.app import state
        from core.errors import ApiError

        with pytest.raises(ApiError, match="--privileged"):
            state(hardened).host.hook.mcp_server_config(user_id=admin2.id, name="risky")


@pytest.fixture
def rebinding_resolver(monkeypatch):
    """``rebind.test`` answers 127.0.0.1 (allowed, where the test server listens) to the first lookup
    and 192.0.2.1 (unroutable) to every later one until the list is cleared: a rebinding attack.
    Lookups are counted."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def resolve(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name.rstrip(".").lower() == "rebind.test":
            lookups.append(name)
            return real("127.0.0.1" if len(lookups) == 1 else "192.0.2.1", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return lookups


def _rebinding_url(http_server: str) -> str:
    from urllib.parse import urlsplit

    return f"http://rebind.test:{urlsplit(http_server).port}/mcp"


def test_component_http_connects_to_the_checked_address(rebinding_resolver, http_server):
    from service_bundle_mcp import client as mcp_client

    from core.engine.egress import EgressPolicy

    # the resolver really answers differently the second time
    assert socket.getaddrinfo("rebind.test", 80)[0][4][0] == "127.0.0.1"
    assert socket.getaddrinfo("rebind.test", 80)[0][4][0] == "192.0.2.1"
    rebinding_resolver.clear()
    policy = EgressPolicy(allowed_hosts=("127.0.0.1",))
    config = {"name": "rebind", "transport": "streamablehttp", "url": _rebinding_url(http_server)}
    listed = mcp_client.list_tools(config, owner=None, use_cache=False, policy=policy, timeout=30)
    assert {t["name"] for t in listed} >= {"add", "shout"}
    # one lookup, by the egress check; the SDK's HTTP client never resolved the name (it would have got
    # 192.0.2.1 and failed), and its Host header named the host (the server's Host allow-list checks it)
    assert len(rebinding_resolver) == 1
    rebinding_resolver.clear()
    called = mcp_client.call_tool(config, "shout", {"text": "pinned"}, policy=policy, timeout=30)
    assert called["content"][0]["text"] == "PINNED"
    assert len(rebinding_resolver) == 1


def test_server_listing_connects_to_the_checked_address(app, client, alice, rebinding_resolver, http_server):
    added = client.post(f"{SERVERS}/rebind", json={"url": _rebinding_url(http_server)}, headers=alice.bearer)
    assert added.status_code == 200, added.get_json()
    rebinding_resolver.clear()
    counted = client.get(f"{SERVERS}?action_count=true", headers=alice.bearer).get_json()
    assert counted[0]["toolsCount"] >= 2, counted
    assert len(rebinding_resolver) == 1
