"""Issue 26's catalog walk: every component with a path, URL, command or connection field, run by an ordinary
user under default settings, reaches no host file, not the service's database and no loopback service.

The fields are found at collection time from every installed plugin and bundle (``register_components``), so a
new component is covered without editing this file; the test ids list what was checked
(``pytest --collect-only -q tests/security/test_catalog_walk.py``). For each field the component is built with
its defaults, the field set to each probe value, companion inputs filled (a SQL query...), then every output
method and every tool it offers is called. Components may fail for other reasons (no API key, no connected
input); what must hold: the marker file's content and the service database's marker row never appear in any
result, status, log or error, and the loopback listener sees no connection.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from core.engine import Component
from tests.conftest import make_user, superuser
from tests.security.conftest import run_context

#: an input whose name says it names a path, URL, command or connection (or whose type is a file or MCP server)
HOST_FIELD = re.compile(
    r"(^|_)(path|paths|file|files|url|urls|uri|dsn|database|db|connection|conn|command|cmd|args|directory|dir|"
    r"folder|root|host|hosts|endpoint|server|base|curl|repo|socket|address|location)(_|$)",
    re.I,
)
HOST_TYPES = {"FileInput", "McpInput"}
NOT_TEXT = {"BoolInput", "IntInput", "FloatInput", "SliderInput", "TabInput"}
#: inputs filled on every probe so the component gets as far as opening what the field names
COMPANIONS = {
    "query": "select username from accounts_user",
    "search_query": "x",
    "input_value": "x",
    "input": "x",
    "text": "x",
    "method": "GET",
}
#: fields every install must find (a guard on HOST_FIELD itself)
EXPECTED = {
    "SQLComponent.database_url",
    "File.path",
    "File.file_path_str",
    "Directory.path",
    "FileSystemTool.root_path",
    "CSVtoData.csv_path",
    "JSONtoData.json_path",
    "APIRequest.url_input",
    "URLComponent.urls",
    "MCPTools.mcp_server",
}


def _installed_components() -> list[type[Component]]:
    from core.plugins import build_host
    from core.reload import component_sources

    sources = component_sources(build_host(None, None, ())).sources
    return [klass for classes in sources.values() for klass in classes]


def host_fields() -> list[tuple[str, str]]:
    found = []
    for klass in _installed_components():
        for item in klass.inputs:
            kind = type(item).__name__
            if kind in NOT_TEXT:
                continue
            if HOST_FIELD.search(item.name) or kind in HOST_TYPES:
                found.append((klass.key, item.name))
    return sorted(set(found))


FIELDS = host_fields()


class Listener:
    """A loopback TCP server that records every connection (and answers nothing)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections: list[Any] = []
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                continue
            self.connections.append(peer)
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def probes(marker: Path, service_db: str, config: Path, port: int) -> dict[str, str]:
    return {
        "host file": str(marker),
        "host directory": str(marker.parent),
        "file URL": f"file://{marker}",
        "traversal": "../" * 16 + str(marker).lstrip("/"),
        "config dir database": f"sqlite:///{config}/service.db",
        "service database": service_db,
        "loopback HTTP": f"http://127.0.0.1:{port}/probe",
        "loopback name": f"http://localhost:{port}/probe",
        "loopback database": f"postgresql://postgres@127.0.0.1:{port}/x",
        "loopback host:port": f"127.0.0.1:{port}",
        "loopback curl": f"curl http://127.0.0.1:{port}/probe",
    }


def _text(value: Any) -> str:
    from core.engine.types import jsonable

    try:
        return json.dumps(jsonable(value), default=str)
    except Exception:
        return repr(value)


def exercise(klass: type[Component], field: str, value: str, ctx: Any) -> str:
    """Build ``klass`` with ``field`` = ``value``; call every output and tool; everything it answered, as text."""
    params: dict[str, Any] = {i.name: i.value for i in klass.inputs}
    for name, companion in COMPANIONS.items():
        if name in params and name != field and not params[name]:
            params[name] = companion
    target = next(i for i in klass.inputs if i.name == field)
    params[field] = [value] if getattr(target, "is_list", False) or isinstance(target.value, list) else value
    seen: list[str] = []
    ctx.deadline = time.monotonic() + 10
    try:
        component = klass(params, context=ctx)
    except Exception as exc:
        return f"build: {exc}"
    calls = [getattr(component, output.method, None) for output in klass.outputs]
    for call in calls:
        if call is None:
            continue
        try:
            seen.append(_text(call()))
        except BaseException as exc:  # every refusal or failure is fine; its text is checked too
            if isinstance(exc, KeyboardInterrupt):
                raise
            seen.append(f"{type(exc).__name__}: {exc}")
    if type(component).as_tools is not Component.as_tools:
        try:
            tools = component.as_tools()
        except Exception as exc:
            tools = []
            seen.append(f"{type(exc).__name__}: {exc}")
        for tool in tools:
            props = (tool.args_schema or {}).get("properties", {}) if hasattr(tool, "args_schema") else {}
            props = props or (getattr(tool, "schema", None) or {}).get("properties", {})
            args = {name: value for name, spec in props.items() if spec.get("type", "string") == "string"}
            try:
                seen.append(_text(tool.run(args)))
            except Exception as exc:
                seen.append(f"{type(exc).__name__}: {exc}")
    seen.append(_text(getattr(component, "status", None)))
    seen.append(_text(getattr(component, "_logs", None) or getattr(component, "logs", None)))
    return "\n".join(seen)


def test_the_walk_finds_every_kind_of_field():
    keys = {f"{key}.{field}" for key, field in FIELDS}
    missing = EXPECTED - keys
    assert not missing, f"HOST_FIELD no longer finds {sorted(missing)}; checked: {sorted(keys)}"
    print(f"\n{len(FIELDS)} host-reaching fields checked:\n" + "\n".join(sorted(keys)))


@pytest.mark.parametrize(("key", "field"), FIELDS, ids=[f"{k}.{f}" for k, f in FIELDS])
def test_an_ordinary_user_reaches_no_host_file_service_database_or_loopback(make_app, tmp_path, listener, key, field):
    app = make_app()  # every installed plugin and bundle, default settings
    client = app.test_client()
    admin = superuser(client)
    db_marker = f"svcdbmarker{uuid.uuid4().hex[:12]}"
    make_user(client, admin, username=db_marker)  # a row of the service's database the probes must not read
    alice = make_user(client, admin, username="alice")
    host = tmp_path / "host"
    host.mkdir()
    file_marker = f"HOSTMARKER-{uuid.uuid4().hex}"
    marker = host / "marker.json"
    marker.write_text(json.dumps({"marker": file_marker}))
    (host / "marker.txt").write_text(file_marker)
    from core.app import state

    settings = state(app).settings
    ctx = run_context(app, alice.id)
    klass = ctx.registry.get(key)
    assert klass is not None, key
    checked = []
    values = probes(marker, settings.resolved_database_url, settings.resolved_config_dir, listener.port)
    with app.app_context():
        for name, value in values.items():
            answer = exercise(klass, field, value, ctx)
            assert file_marker not in answer, (name, value, answer[:2000])
            assert db_marker not in answer, (name, value, answer[:2000])
            checked.append(name)
    time.sleep(0.3)  # let the listener's accept loop see a late connection
    assert listener.connections == [], f"{key}.{field} reached the loopback listener: {listener.connections}"
    assert checked == list(values)
