"""The official ``mcp`` client (its current release) against ``service run --workers 2``.

Two servers, each with two gunicorn gevent workers on SQLite (the embedded default):

* ``stateless``: the defaults (no sessions, replies framed as SSE), as the reference serves;
* ``sessions``: ``SERVICE_MCP_SESSIONS=true`` and ``SERVICE_MCP_JSON_RESPONSE=true``.

Every HTTP request of the client goes over a fresh connection (``Connection: close``), so the two
workers share the traffic: session state and the legacy SSE queue must be in the shared store.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import requests

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.build.buildkit import child_env
from tests.jobkit import stop_processes
from tests.run.runkit import chat_echo
from tests.serverkit import auto_login, service_run

pytestmark = pytest.mark.slow


class Server:
    def __init__(self, tmp: Path, **settings: str) -> None:
        env = child_env(
            tmp,
            SERVICE_PLUGINS="accounts,flows,run,monitor,mcp,standard",
            SERVICE_MCP_TOOLS_POLL_SECONDS="0.3",
            SERVICE_MCP_KEEPALIVE_SECONDS="1",
            **settings,
        )
        self.log = tmp / "server.log"
        self.proc, self.base = service_run(env, self.log, workers=2)
        token = auto_login(self.base)
        auth = {"Authorization": f"Bearer {token}", "Connection": "close"}
        self.key = requests.post(f"{self.base}/api/v1/api_key/", json={"name": "mcp"}, headers=auth, timeout=10).json()[
            "api_key"
        ]
        self.headers = {"x-api-key": self.key, "Connection": "close"}
        project = requests.post(
            f"{self.base}/api/v1/projects/", json={"name": "Tools"}, headers=self.headers, timeout=10
        )
        assert project.status_code == 201, project.text
        self.project = project.json()["id"]
        self.flows = []
        for name in ("Echo One", "Echo Two"):
            made = requests.post(
                f"{self.base}/api/v1/flows/",
                json={"name": name, "data": chat_echo(), "folder_id": self.project},
                headers=self.headers,
                timeout=10,
            )
            assert made.status_code == 201, made.text
            self.flows.append(made.json()["id"])
        self.set_tools(self.flows)

    def set_tools(self, enabled: list[str]) -> None:
        body = {
            "settings": [{"id": f, "mcp_enabled": f in enabled} for f in self.flows],
            "auth_settings": {"auth_type": "apikey"},
        }
        response = requests.patch(
            f"{self.base}/api/v1/mcp/project/{self.project}", json=body, headers=self.headers, timeout=10
        )
        assert response.status_code == 200, response.text

    @property
    def streamable(self) -> str:
        return f"{self.base}/api/v1/mcp/project/{self.project}/streamable"

    @property
    def sse(self) -> str:
        return f"{self.base}/api/v1/mcp/project/{self.project}/sse"

    def http(self) -> Any:
        return create_mcp_http_client(headers=self.headers)

    def stop(self) -> None:
        stop_processes([self.proc], timeout=20)


@pytest.fixture(scope="module")
def stateless(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("mcp-stateless"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def stateful(tmp_path_factory):
    server = Server(
        tmp_path_factory.mktemp("mcp-sessions"), SERVICE_MCP_SESSIONS="true", SERVICE_MCP_JSON_RESPONSE="true"
    )
    yield server
    server.stop()


async def _use(client: Client) -> dict[str, Any]:
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async with client:
        listed = await client.list_tools()
        calls = []
        for i in range(4):  # several calls: with fresh connections both workers answer some
            result = await client.call_tool("echo_two", {"input_value": f"hello {i}"}, progress_callback=on_progress)
            calls.append((result.is_error, result.content[0].text))
        missing = await client.call_tool("nope", {})
        return {
            "version": client.protocol_version,
            "server": client.server_info.name if client.server_info else None,
            "tools": [(t.name, t.description) for t in listed.tools],
            "calls": calls,
            "missing": (missing.is_error, missing.content[0].text),
            "progress": progress,
        }


def _check(out: dict[str, Any], server: Server, progress: bool, version: str = "2025-11-25") -> None:
    # mode "auto" probes server/discover: 2026-07-28 over Streamable HTTP; legacy SSE has only the handshake
    assert out["version"] == version
    assert out["server"] == f"service-mcp-project-{server.project}"
    assert [name for name, _ in out["tools"]] == ["echo_one", "echo_two"]
    assert out["calls"] == [(False, f"hello {i}") for i in range(4)]
    assert out["missing"] == (True, "Unknown tool: nope")
    if progress:
        assert out["progress"][:2] == [(1.0, 2.0), (2.0, 2.0)]


def _initialize(server: Server, version: str = "2025-06-18") -> tuple[requests.Response, dict[str, str]]:
    """A raw ``initialize`` over Streamable HTTP: its response, and the headers later requests send."""
    h = {**server.headers, "Accept": "application/json, text/event-stream"}
    init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
    return requests.post(server.streamable, json=body, headers=h, timeout=10), h


def test_streamable_stateless_sse_frames(stateless):
    out = anyio.run(_use, Client(streamable_http_client(stateless.streamable, http_client=stateless.http())))
    _check(out, stateless, progress=True, version="2026-07-28")
    legacy = Client(streamable_http_client(stateless.streamable, http_client=stateless.http()), mode="legacy")
    _check(anyio.run(_use, legacy), stateless, progress=True)
    # a client pinned to 2026-07-28 sends no server/discover (so it knows no server info)
    pinned = Client(streamable_http_client(stateless.streamable, http_client=stateless.http()), mode="2026-07-28")
    out = anyio.run(_use, pinned)
    assert out.pop("server") is None
    _check(
        {**out, "server": f"service-mcp-project-{stateless.project}"}, stateless, progress=True, version="2026-07-28"
    )
    raw = requests.post(
        stateless.streamable,
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={**stateless.headers, "Accept": "application/json, text/event-stream"},
        timeout=10,
    )
    assert raw.headers["Content-Type"].startswith("text/event-stream") and "Mcp-Session-Id" not in raw.headers


def test_streamable_sessions_json(stateful):
    # the modern era has no sessions: each request stands alone, whatever SERVICE_MCP_SESSIONS says
    out = anyio.run(_use, Client(streamable_http_client(stateful.streamable, http_client=stateful.http())))
    _check(out, stateful, progress=False, version="2026-07-28")  # JSON replies carry no progress notifications
    legacy = Client(streamable_http_client(stateful.streamable, http_client=stateful.http()), mode="legacy")
    _check(anyio.run(_use, legacy), stateful, progress=False)  # the handshake era: an Mcp-Session-Id session
    first, h = _initialize(stateful, "2025-03-26")
    assert (
        first.headers["Content-Type"] == "application/json"
        and first.json()["result"]["protocolVersion"] == "2025-03-26"
    )
    sid = first.headers["Mcp-Session-Id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert requests.post(stateful.streamable, json=ping, headers=h, timeout=10).status_code == 400  # no session id
    assert (
        requests.post(stateful.streamable, json=ping, headers={**h, "Mcp-Session-Id": "0" * 32}, timeout=10).status_code
        == 404
    )
    for _ in range(4):  # the session is known to both workers
        assert (
            requests.post(stateful.streamable, json=ping, headers={**h, "Mcp-Session-Id": sid}, timeout=10).json()[
                "result"
            ]
            == {}
        )
    assert requests.delete(stateful.streamable, headers={**h, "Mcp-Session-Id": sid}, timeout=10).status_code == 200
    assert (
        requests.post(stateful.streamable, json=ping, headers={**h, "Mcp-Session-Id": sid}, timeout=10).status_code
        == 404
    )


REDIS_URL = os.environ.get("SERVICE_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")


@pytest.fixture(scope="module")
def on_redis(tmp_path_factory):
    """Scale-out: the shared store (sessions, the SSE queue) on Redis (``SERVICE_TEST_REDIS_URL``)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    server = Server(
        tmp_path_factory.mktemp("mcp-redis"),
        SERVICE_JOB_BACKEND="rq",
        SERVICE_REDIS_URL=REDIS_URL,
        SERVICE_MCP_SESSIONS="true",
    )
    yield server
    server.stop()
    for key in client.scan_iter("service:shared:*mcp/*"):  # this test's keys only
        client.delete(key)


@pytest.mark.parametrize("which", ["stateless", "stateful", "on_redis"])
def test_legacy_sse_across_workers(which, request):
    server: Server = request.getfixturevalue(which)
    out = anyio.run(_use, Client(sse_client(server.sse, headers=server.headers)))
    _check(out, server, progress=True)


async def _watch_list_changed(client: Client, server: Server) -> list[str]:
    seen: list[str] = []
    changed = anyio.Event()

    async def handler(message: Any) -> None:
        name = type(getattr(message, "root", message)).__name__
        seen.append(name)
        if "ToolListChanged" in name:
            changed.set()

    client.message_handler = handler
    async with client:
        before = [t.name for t in (await client.list_tools()).tools]
        await anyio.to_thread.run_sync(server.set_tools, server.flows[:1])
        with anyio.fail_after(15):
            await changed.wait()
        after = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
    server.set_tools(server.flows)
    return [",".join(before), ",".join(after)]


def test_tools_list_changed_over_legacy_sse(stateless):
    client = Client(sse_client(stateless.sse, headers=stateless.headers))
    assert anyio.run(_watch_list_changed, client, stateless) == ["echo_one,echo_two", "echo_one"]


def test_sessions_and_queue_on_redis(on_redis):
    import redis

    client = Client(streamable_http_client(on_redis.streamable, http_client=on_redis.http()), mode="legacy")
    _check(anyio.run(_use, client), on_redis, progress=True)  # sessions with SSE replies
    client = Client(sse_client(on_redis.sse, headers=on_redis.headers))
    assert anyio.run(_watch_list_changed, client, on_redis) == ["echo_one,echo_two", "echo_one"]
    # a session is a key in Redis, gone when the session is deleted
    first, h = _initialize(on_redis)
    sid = first.headers["Mcp-Session-Id"]
    r = redis.Redis.from_url(REDIS_URL)
    assert [k.decode() for k in r.scan_iter(f"service:shared:*mcp/s/{sid}")] != []
    assert requests.delete(on_redis.streamable, headers={**h, "Mcp-Session-Id": sid}, timeout=10).status_code == 200
    assert list(r.scan_iter(f"service:shared:*mcp/s/{sid}")) == []


def test_tools_list_changed_over_session_stream(stateful):
    client = Client(streamable_http_client(stateful.streamable, http_client=stateful.http()), mode="legacy")
    assert anyio.run(_watch_list_changed, client, stateful) == ["echo_one,echo_two", "echo_one"]


def _stream_events(server: Server, sid: str, seconds: float) -> list[str]:
    """The ``data:`` lines a session's notification stream sends within ``seconds``."""
    h = {**server.headers, "Accept": "text/event-stream", "Mcp-Session-Id": sid}
    seen: list[str] = []
    end = time.monotonic() + seconds
    with requests.get(server.streamable, headers=h, stream=True, timeout=seconds + 5) as stream:
        assert stream.status_code == 200, stream.text
        for line in stream.iter_lines(decode_unicode=True):  # keep-alives every second end each wait
            if line.startswith("data:"):
                seen.append(line[5:].strip())
            if "list_changed" in "".join(seen) or time.monotonic() > end:
                break
    return seen


def test_a_change_before_the_stream_opens_is_announced_once(stateful):
    """The client opens its GET stream after ``initialize``; a change in between still reaches it."""
    first, h = _initialize(stateful)
    sid = first.headers["Mcp-Session-Id"]
    stateful.set_tools(stateful.flows[:1])
    try:
        announced = _stream_events(stateful, sid, 10)
        assert [json.loads(d)["method"] for d in announced] == ["notifications/tools/list_changed"]
        # the session was told: a stream opened again (on either worker) stays quiet
        assert _stream_events(stateful, sid, 2) == []
    finally:
        stateful.set_tools(stateful.flows)
        requests.delete(stateful.streamable, headers={**h, "Mcp-Session-Id": sid}, timeout=10)


def test_wrong_key_is_refused(stateless):
    bad = requests.post(
        stateless.streamable,
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"x-api-key": "sk-nope"},
        timeout=10,
    )
    assert bad.status_code == 403
    none = requests.get(stateless.sse, headers={"Connection": "close"}, timeout=10, stream=True)
    assert none.status_code == 401


async def _inputs(client: Client) -> dict[str, Any]:
    async with client:
        listed = await client.list_tools()
        tool = next(t for t in listed.tools if t.name == "two_inputs")
        args = {"input_value": "hello", "input_value__TextInput-CCCCC": "world", "sender_name": "Bot"}
        done = await client.call_tool("two_inputs", args)
        return {"schema": tool.input_schema, "result": (done.is_error, done.content[0].text)}


def test_input_schema_and_arguments_with_the_official_client(stateless):
    from tests.mcp.mcpkit import two_inputs_flow

    project = requests.post(
        f"{stateless.base}/api/v1/projects/", json={"name": "Inputs"}, headers=stateless.headers, timeout=10
    ).json()["id"]
    made = requests.post(
        f"{stateless.base}/api/v1/flows/",
        json={"name": "Two Inputs", "data": two_inputs_flow(), "folder_id": project},
        headers=stateless.headers,
        timeout=10,
    ).json()
    body = {"settings": [{"id": made["id"], "mcp_enabled": True}], "auth_settings": {"auth_type": "apikey"}}
    assert (
        requests.patch(
            f"{stateless.base}/api/v1/mcp/project/{project}", json=body, headers=stateless.headers, timeout=10
        ).status_code
        == 200
    )
    url = f"{stateless.base}/api/v1/mcp/project/{project}/streamable"
    for mode in ("auto", "legacy"):
        out = anyio.run(_inputs, Client(streamable_http_client(url, http_client=stateless.http()), mode=mode))
        assert list(out["schema"]["properties"]) == [
            "input_value",
            "session_id",
            "sender_name",
            "input_value__TextInput-CCCCC",
        ], mode
        assert out["schema"]["properties"]["input_value"]["description"] == "Message to be passed as input."
        assert out["result"] == (False, "hello world"), mode
