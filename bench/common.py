# ruff: noqa: S603, S607  (the bench starts the service, wrk and its own load generator: fixed argv, no shell)
"""Shared helpers of the bench: processes, HTTP, load generation, flows, machine facts."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


# --- processes ----------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    # this checkout first, then the caller's path (a worktree whose plugins are not the installed ones)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env.update(SERVICE_ENV_FILE=os.devnull, PYTHONPATH=path, **extra)
    return env


def wait_http(port: int, path: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status < 500:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"nothing answered on port {port}{path}")


def service_command() -> list[str]:
    script = Path(sys.executable).parent / "service"
    return [str(script), "run"] if script.exists() else [sys.executable, "-m", "core.cli", "run"]


def start(cmd: list[str], env: dict[str, str], log: Path, cwd: Path | None = None) -> subprocess.Popen:
    with open(log, "w") as handle:
        return subprocess.Popen(cmd, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True, cwd=cwd)


def code_path(code: Path) -> str:
    """``PYTHONPATH`` that runs another checkout's ``core``, plugins and bundles (a ``git worktree``)."""
    dirs = [code, *sorted((code / "plugins").iterdir()), *sorted((code / "bundles").iterdir())]
    return ":".join(str(d) for d in dirs)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return sorted(out)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# --- HTTP helpers ---------------------------------------------------------------------------------------
class Client:
    def __init__(self, port: int):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        status, answer, _ = self.call_headers(method, path, body, headers)
        return status, answer

    def call_headers(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any, dict[str, str]]:
        """:meth:`call` and the response's headers (names in lower case)."""
        data = json.dumps(body).encode() if body is not None else None
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        try:
            self.conn.request(method, path, body=data, headers=hdrs)
            response = self.conn.getresponse()
        except (ConnectionError, http.client.HTTPException):  # the server closed an idle keep-alive connection
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            self.conn.request(method, path, body=data, headers=hdrs)
            response = self.conn.getresponse()
        raw = response.read()
        got = {k.lower(): v for k, v in response.getheaders()}
        try:
            return response.status, json.loads(raw), got
        except ValueError:
            return response.status, raw, got


def catalog_node(catalog: dict[str, Any], key: str, node_id: str) -> dict[str, Any]:
    fnode = next(cat[key] for name, cat in catalog.items() if name != "component_display_names" and key in cat)
    return {
        "id": node_id,
        "type": "genericNode",
        "position": {"x": 0, "y": 0},
        "data": {"id": node_id, "type": key, "node": json.loads(json.dumps(fnode))},
    }


def link(src: dict[str, Any], output: str, tgt: dict[str, Any], field: str) -> dict[str, Any]:
    types = next(o["types"] for o in src["data"]["node"]["outputs"] if o["name"] == output)
    tfield = tgt["data"]["node"]["template"][field]
    return {
        "id": f"e-{src['id']}-{tgt['id']}",
        "source": src["id"],
        "target": tgt["id"],
        "data": {
            "sourceHandle": {"dataType": src["data"]["type"], "id": src["id"], "name": output, "output_types": types},
            "targetHandle": {
                "fieldName": field,
                "id": tgt["id"],
                "inputTypes": tfield.get("input_types"),
                "type": tfield["type"],
            },
        },
    }


def in_process_run(client: Any) -> tuple[str, str, dict[str, str]]:
    """In an app's test ``client`` (auto-login on): an API key and the Chat Input -> Chat Output flow; the run's
    URL, its JSON body and the key's header, for ``client.post(url, data=body, headers=key, ...)``."""
    token = client.get("/api/v1/auto_login").get_json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    key = {"x-api-key": client.post("/api/v1/api_key/", json={"name": "p"}, headers=bearer).get_json()["api_key"]}
    catalog = client.get("/api/v1/all", headers=bearer).get_json()
    flow = client.post("/api/v1/flows/", json={"name": "p", "data": chat_echo(catalog)}, headers=bearer).get_json()
    return f"/api/v1/run/{flow['id']}", json.dumps({"input_value": "hello"}), key


def chat_echo(catalog: dict[str, Any]) -> dict[str, Any]:
    chat_in = catalog_node(catalog, "ChatInput", "ChatInput-AAAAA")
    chat_out = catalog_node(catalog, "ChatOutput", "ChatOutput-BBBBB")
    return {"nodes": [chat_in, chat_out], "edges": [link(chat_in, "message", chat_out, "input_value")]}


def _pass_edge(a: str, b: str, kb: str) -> dict[str, Any]:
    out = "message" if a.startswith("ChatInput") else "output_message"
    field = "input_value" if kb == "ChatOutput" else "input_message"
    return {
        "source": a,
        "target": b,
        "data": {
            "sourceHandle": {"id": a, "name": out, "output_types": ["Message"]},
            "targetHandle": {"id": b, "fieldName": field, "inputTypes": ["Message"], "type": "str"},
        },
    }


def _nodes(ids: list[str], keys: list[str]) -> list[dict[str, Any]]:
    return [
        {"id": i, "type": "genericNode", "data": {"id": i, "type": k, "node": {"template": {}}}}
        for i, k in zip(ids, keys, strict=True)
    ]


def fanout(n: int) -> dict[str, Any]:
    """Chat Input feeding (n - 2) Pass components side by side; the last one feeds Chat Output."""
    ids = ["ChatInput-0"] + [f"Pass-{i}" for i in range(1, n - 1)] + [f"ChatOutput-{n - 1}"]
    keys = ["ChatInput"] + ["Pass"] * (n - 2) + ["ChatOutput"]
    edges = [_pass_edge(ids[0], b, "Pass") for b in ids[1:-1]] + [_pass_edge(ids[-2], ids[-1], "ChatOutput")]
    return {"nodes": _nodes(ids, keys), "edges": edges}


def linear(n: int) -> dict[str, Any]:
    """Chat Input -> (n - 2) Pass -> Chat Output, with minimal templates (class defaults)."""
    ids = ["ChatInput-0"] + [f"Pass-{i}" for i in range(1, n - 1)] + [f"ChatOutput-{n - 1}"]
    keys = ["ChatInput"] + ["Pass"] * (n - 2) + ["ChatOutput"]
    edges = [_pass_edge(a, b, kb) for a, b, kb in zip(ids, ids[1:], keys[1:], strict=False)]
    return {"nodes": _nodes(ids, keys), "edges": edges}


# --- load -------------------------------------------------------------------------------------------------
WRK_SCRIPT = """
wrk.method = "%(method)s"
wrk.body = %(body)s
wrk.headers["Content-Type"] = "application/json"
%(headers)s
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p90_us": %%d, "p99_us": %%d, ' ..
    '"max_us": %%d, "status_errors": %%d, "connect_errors": %%d, "read_errors": %%d, "write_errors": %%d, ' ..
    '"timeouts": %%d}\\n', summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, e.status, e.connect, e.read, e.write, e.timeout))
end
"""


def load(
    url: str,
    connections: int,
    duration: float,
    *,
    body: bytes,
    headers: dict[str, str],
    method: str = "POST",
    tool: str,
    max_requests: int = 10_000_000,
    workdir: Path,
) -> dict[str, Any]:
    if tool == "wrk":
        hdrs = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())
        script = workdir / "wrk.lua"
        script.write_text(WRK_SCRIPT % {"method": method, "body": json.dumps(body.decode()), "headers": hdrs})
        threads = min(2, connections)
        out = subprocess.run(
            [
                "wrk",
                "-t",
                str(threads),
                "-c",
                str(connections),
                "-d",
                f"{max(1, round(duration))}s",
                "--timeout",
                "10s",
                "-s",
                str(script),
                url,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        raw = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
        secs = raw["duration_us"] / 1e6
        errors = sum(raw[k] for k in ("status_errors", "connect_errors", "read_errors", "write_errors", "timeouts"))
        return {
            "tool": "wrk",
            "connections": connections,
            "requests": raw["requests"],
            "errors": errors,
            "duration_s": round(secs, 3),
            "rps": round(raw["requests"] / secs, 1),
            "p50_ms": raw["p50_us"] / 1000,
            "p90_ms": raw["p90_us"] / 1000,
            "p99_ms": raw["p99_us"] / 1000,
            "max_ms": raw["max_us"] / 1000,
        }
    body_file = workdir / "body.json"
    body_file.write_bytes(body)
    cmd = [
        sys.executable,
        "-m",
        "bench.loadgen",
        "--url",
        url,
        "--connections",
        str(connections),
        "--duration",
        str(duration),
        "--max-requests",
        str(max_requests),
        "--method",
        method,
        "--body-file",
        str(body_file),
    ]
    for k, v in headers.items():
        cmd += ["--header", f"{k}:{v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])


def pick_tool(requested: str) -> str:
    if requested == "python":
        return "python"
    if shutil.which("wrk"):
        return "wrk"
    if requested == "wrk":
        raise SystemExit("wrk is not installed (apt-get install -y wrk), use --tool python")
    return "python"


# --- a running service ---------------------------------------------------------------------------------------
class Service:
    """``service run`` in a temporary config directory, with an API key and the Chat Input -> Chat Output flow."""

    def __init__(
        self,
        work: Path,
        *,
        workers: int = 2,
        name: str = "service",
        wrap: list[str] | None = None,
        code: Path | None = None,
        **settings: str,
    ) -> None:
        """``wrap``: a command the service runs under (``valgrind ...``). ``code``: another checkout to run
        instead of this one, started in its directory (``python -m core.server`` puts the working directory
        first on ``sys.path``: started elsewhere it would import this checkout's ``core``)."""
        self.work = work
        self.port = free_port()
        env = {
            "SERVICE_CONFIG_DIR": str(work / f"{name}-config"),
            "SERVICE_HOST": "127.0.0.1",
            "SERVICE_PORT": str(self.port),
            "SERVICE_WORKERS": str(workers),
            "SERVICE_JOB_BACKEND": "inprocess",
            "SERVICE_LOG_LEVEL": "warning",
        }
        # ``OTEL_*`` (the OpenTelemetry variables) as given; the others are the service's settings
        env.update(
            {k if k.startswith(("SERVICE_", "OTEL_")) else f"SERVICE_{k.upper()}": v for k, v in settings.items()}
        )
        self.env = clean_env(**env)
        if code is not None:
            self.env["PYTHONPATH"] = code_path(code)
        self.log = work / f"{name}.log"
        self.started = time.perf_counter()
        self.proc = start([*(wrap or []), *service_command()], self.env, self.log, cwd=code)
        self.ready_s = 0.0

    def wait(self, timeout: float = 180.0) -> float:
        """Seconds from process start to the first healthy ``/health`` answer."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"service exited: {self.log.read_text()[-2000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    self.ready_s = time.perf_counter() - self.started
                    return self.ready_s
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError(f"service did not answer: {self.log.read_text()[-2000:]}")

    def setup(self) -> Service:
        """Sign in (auto-login), create an API key and the Chat Input -> Chat Output flow; check one run."""
        self.api = Client(self.port)
        _, token = self.api.call("GET", "/api/v1/auto_login")
        self.bearer = {"Authorization": f"Bearer {token['access_token']}"}
        _, key = self.api.call("POST", "/api/v1/api_key/", {"name": "bench"}, self.bearer)
        self.key = {"x-api-key": key["api_key"]}
        _, self.catalog = self.api.call("GET", "/api/v1/all", headers=self.bearer)
        self.echo = self.create_flow("bench-echo", chat_echo(self.catalog))
        self.body = json.dumps({"input_value": "hello", "input_type": "chat", "output_type": "chat"}).encode()
        status, answer = self.api.call("POST", f"/api/v1/run/{self.echo}", json.loads(self.body), self.key)
        assert status == 200 and answer["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "hello", answer
        return self

    def create_flow(self, name: str, data: dict[str, Any], **extra: Any) -> str:
        status, flow = self.api.call("POST", "/api/v1/flows/", {"name": name, "data": data, **extra}, self.bearer)
        assert status == 201, flow
        return str(flow["id"])

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def workers(self) -> list[int]:
        return children(self.proc.pid)

    def stop(self) -> None:
        stop(self.proc)


def machine() -> dict[str, Any]:
    model = mem = ""
    with contextlib.suppress(OSError, StopIteration):
        model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    with contextlib.suppress(OSError):
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split(":", 1)[1].strip()
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }
