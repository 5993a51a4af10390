# ruff: noqa: S603, S607  (the bench starts the service, wrk and its own load generator: fixed argv, no shell)
"""``python -m bench run``: the run-surface figures of issue 4, measured against a real ``service run``.

1. Starts the service as a user would: ``service run`` (gunicorn + gevent, 2 workers), SQLite and
   in-process jobs in a temporary config directory, auto-login on.
2. Creates an API key and a Chat Input -> Chat Output flow (nodes taken from ``GET /api/v1/all``, as
   the editor saves them), plus a 1,000-node linear flow.
3. Drives ``POST /api/v1/run/{id}`` over loopback with ``wrk`` when installed (else the Python
   generator in ``bench.loadgen``, its own process) at 1, 16 and 64 keep-alive connections; then a bare
   Flask endpoint served by the same gunicorn settings (``bench.ceiling``) at the same concurrencies.
4. Times the 1,000-node flow over HTTP (and in process, for the engine's per-vertex overhead), and the
   workers' RSS before and after 10,000 runs.
5. Writes ``bench/results.json`` and ``bench/RESULTS.md``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import http.client
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGETS = {"rps_16": 1000.0, "fraction_16": 0.20, "p99_16_ms": 50.0, "linear_1000_ms": 150.0, "rss_growth": 0.10}


# --- processes ----------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(SERVICE_ENV_FILE=os.devnull, PYTHONPATH=str(ROOT), **extra)
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


def start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "w") as handle:
        return subprocess.Popen(cmd, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)


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
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw


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


def chat_echo(catalog: dict[str, Any]) -> dict[str, Any]:
    chat_in = catalog_node(catalog, "ChatInput", "ChatInput-AAAAA")
    chat_out = catalog_node(catalog, "ChatOutput", "ChatOutput-BBBBB")
    return {"nodes": [chat_in, chat_out], "edges": [link(chat_in, "message", chat_out, "input_value")]}


def linear(n: int) -> dict[str, Any]:
    """Chat Input -> (n - 2) Pass -> Chat Output, with minimal templates (class defaults)."""
    ids = ["ChatInput-0"] + [f"Pass-{i}" for i in range(1, n - 1)] + [f"ChatOutput-{n - 1}"]
    keys = ["ChatInput"] + ["Pass"] * (n - 2) + ["ChatOutput"]
    nodes = [
        {"id": i, "type": "genericNode", "data": {"id": i, "type": k, "node": {"template": {}}}}
        for i, k in zip(ids, keys, strict=True)
    ]
    edges = []
    for a, b, kb in zip(ids, ids[1:], keys[1:], strict=False):
        out = "message" if a.startswith("ChatInput") else "output_message"
        field = "input_value" if kb == "ChatOutput" else "input_message"
        edges.append(
            {
                "source": a,
                "target": b,
                "data": {
                    "sourceHandle": {"id": a, "name": out, "output_types": ["Message"]},
                    "targetHandle": {"id": b, "fieldName": field, "inputTypes": ["Message"], "type": "str"},
                },
            }
        )
    return {"nodes": nodes, "edges": edges}


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


# --- engine-only timing -----------------------------------------------------------------------------------
def engine_linear(n: int, repeats: int = 5) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from service_bundle_standard.bundle import all_components

    from core.engine import Graph, Registry, RunContext, run_flow

    reg = Registry.from_classes(all_components())
    data = linear(n)
    plain, events, build = [], [], []
    for _ in range(repeats):
        t = time.perf_counter()
        Graph.build(data, reg)
        build.append(time.perf_counter() - t)
        t = time.perf_counter()
        result = run_flow(data, reg, RunContext(flow_id="f"), input_value="x")
        plain.append(time.perf_counter() - t)
        assert result.ok and result.answer() == "x"
        t = time.perf_counter()
        run_flow(data, reg, RunContext(flow_id="f", emit=lambda e, d: None), input_value="x")
        events.append(time.perf_counter() - t)
    return {
        "build_ms": min(build) * 1000,
        "run_ms": min(plain) * 1000,
        "run_with_events_ms": min(events) * 1000,
        "per_vertex_us": min(plain) / n * 1e6,
        "per_vertex_with_events_us": min(events) / n * 1e6,
    }


# --- the whole run ------------------------------------------------------------------------------------------
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


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def installed_plugins() -> list[str]:
    from importlib.metadata import entry_points

    return sorted(ep.name for ep in entry_points(group="service.plugins"))


def main(
    duration: float = 10.0,
    warmup: float = 2.0,
    tool: str = "auto",
    runs_for_rss: int = 10_000,
    clients: tuple[int, ...] = (1, 16, 64),
    write: bool = True,
) -> dict[str, Any]:
    tool = pick_tool(tool)
    work = Path(tempfile.mkdtemp(prefix="service-bench-"))
    port, ceiling_port = free_port(), free_port()
    env = clean_env(
        SERVICE_CONFIG_DIR=str(work / "config"),
        SERVICE_HOST="127.0.0.1",
        SERVICE_PORT=str(port),
        SERVICE_WORKERS="2",
        SERVICE_JOB_BACKEND="inprocess",
        SERVICE_LOG_LEVEL="warning",
    )
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
        "tool": tool,
        "loadavg_start": os.getloadavg(),
        "plugins": installed_plugins(),
        "settings": {
            "server": "service run (gunicorn, gevent, 2 workers)",
            "database": "SQLite",
            "jobs": "in-process",
            "duration_s": duration,
            "warmup_s": warmup,
        },
    }
    print(f"bench: {tool}, work dir {work}", flush=True)
    service = start(service_command(), env, work / "service.log")
    try:
        wait_http(port, "/health")
        api = Client(port)
        _, token = api.call("GET", "/api/v1/auto_login")
        bearer = {"Authorization": f"Bearer {token['access_token']}"}
        _, key = api.call("POST", "/api/v1/api_key/", {"name": "bench"}, bearer)
        key_headers = {"x-api-key": key["api_key"]}
        _, catalog = api.call("GET", "/api/v1/all", headers=bearer)
        status, flow = api.call("POST", "/api/v1/flows/", {"name": "bench-echo", "data": chat_echo(catalog)}, bearer)
        assert status == 201, flow
        body = json.dumps({"input_value": "hello", "input_type": "chat", "output_type": "chat"}).encode()
        status, answer = api.call("POST", f"/api/v1/run/{flow['id']}", json.loads(body), key_headers)
        assert status == 200 and answer["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "hello", answer
        url = f"http://127.0.0.1:{port}/api/v1/run/{flow['id']}"
        stored_probe = api.call("GET", f"/api/v1/monitor/messages?flow_id={flow['id']}", headers=bearer)
        results["message_storage"] = (
            "on (monitor plugin)"
            if stored_probe[0] == 200 and stored_probe[1]
            else "no on_messages implementation installed"
        )
        workers = children(service.pid)
        results["service_workers"] = len(workers)

        results["run"] = {}
        for n in clients:
            load(url, n, warmup, body=body, headers=key_headers, tool=tool, workdir=work)
            figures = load(url, n, duration, body=body, headers=key_headers, tool=tool, workdir=work)
            results["run"][str(n)] = figures
            print(
                f"run   c={n:<3} {figures['rps']:>8} req/s  p50 {figures['p50_ms']:.2f} ms  "
                f"p99 {figures['p99_ms']:.2f} ms  errors {figures['errors']}",
                flush=True,
            )

        # 1,000-node linear flow over HTTP
        status, big = api.call("POST", "/api/v1/flows/", {"name": "bench-linear", "data": linear(1000)}, bearer)
        assert status == 201, big
        times = []
        for i in range(25):
            t = time.perf_counter()
            status, out = api.call("POST", f"/api/v1/run/{big['id']}", {"input_value": "x"}, key_headers)
            if i >= 5:
                times.append((time.perf_counter() - t) * 1000)
            assert status == 200, out
        assert out["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "x"
        results["linear_1000_http_ms"] = {
            "p50": round(statistics.median(times), 2),
            "min": round(min(times), 2),
            "max": round(max(times), 2),
            "runs": len(times),
        }
        results["linear_1000_engine"] = {k: round(v, 2) for k, v in engine_linear(1000).items()}
        print(
            f"1000-node flow over HTTP: p50 {results['linear_1000_http_ms']['p50']} ms; engine: "
            f"{results['linear_1000_engine']}",
            flush=True,
        )

        # RSS growth over 10,000 runs (after a warm-up of 1,000)
        load(url, 16, 60, body=body, headers=key_headers, tool="python", max_requests=1000, workdir=work)
        before = {pid: rss_kib(pid) for pid in workers}
        done = load(
            url, 16, 300, body=body, headers=key_headers, tool="python", max_requests=runs_for_rss, workdir=work
        )
        after = {pid: rss_kib(pid) for pid in workers}
        growth = (sum(after.values()) - sum(before.values())) / max(1, sum(before.values()))
        results["rss"] = {
            "runs": done["requests"],
            "errors": done["errors"],
            "before_kib": before,
            "after_kib": after,
            "growth": round(growth, 4),
        }
        print(
            f"RSS over {done['requests']} runs: {sum(before.values())} -> {sum(after.values())} KiB ({growth:+.1%})",
            flush=True,
        )
    finally:
        stop(service)

    ceiling = start([sys.executable, "-m", "bench.ceiling", str(ceiling_port), "2"], clean_env(), work / "ceiling.log")
    try:
        wait_http(ceiling_port, "/ping")
        curl = f"http://127.0.0.1:{ceiling_port}/ping"
        results["ceiling"] = {}
        for n in clients:
            load(curl, n, warmup, body=body, headers={}, tool=tool, workdir=work)
            figures = load(curl, n, duration, body=body, headers={}, tool=tool, workdir=work)
            results["ceiling"][str(n)] = figures
            print(
                f"flask c={n:<3} {figures['rps']:>8} req/s  p50 {figures['p50_ms']:.2f} ms  "
                f"p99 {figures['p99_ms']:.2f} ms",
                flush=True,
            )
    finally:
        stop(ceiling)
    results["fraction_of_ceiling"] = {
        n: round(results["run"][n]["rps"] / results["ceiling"][n]["rps"], 3) for n in results["run"]
    }
    results["loadavg_end"] = os.getloadavg()
    results["targets"] = check_targets(results)
    if write:
        (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
        (HERE / "RESULTS.md").write_text(report(results))
        print(f"wrote {HERE / 'results.json'} and {HERE / 'RESULTS.md'}")
    shutil.rmtree(work, ignore_errors=True)
    return results


def check_targets(r: dict[str, Any]) -> dict[str, Any]:
    run16 = r["run"].get("16", {})
    return {
        "rps_16 >= 1000": run16.get("rps", 0) >= TARGETS["rps_16"],
        "fraction_16 >= 20%": r["fraction_of_ceiling"].get("16", 0) >= TARGETS["fraction_16"],
        "p99_16 < 50 ms": run16.get("p99_ms", 1e9) < TARGETS["p99_16_ms"],
        "linear_1000 < 150 ms": r["linear_1000_http_ms"]["p50"] < TARGETS["linear_1000_ms"],
        "rss_growth < 10%": r["rss"]["growth"] < TARGETS["rss_growth"],
    }


def report(r: dict[str, Any]) -> str:
    m = r["machine"]
    lines = [
        "# Run-surface benchmark results",
        "",
        f"* Date: {r['date']}; commit `{r['commit']}`",
        f"* Machine: {m['cpu']}, {m['cores']} cores, {m['memory']}; {m['system']}; Python {m['python']}",
        f"* Server: {r['settings']['server']}, {r['settings']['database']}, {r['settings']['jobs']} jobs; "
        f"plugins installed: {', '.join(r['plugins'])}; message storage: {r['message_storage']}",
        f"* Load: `{r['tool']}` over loopback on the same machine (it shares the 2 cores with the server), "
        f"keep-alive, {r['settings']['warmup_s']} s warm-up then {r['settings']['duration_s']} s per step; "
        f"load average at start {r['loadavg_start'][0]:.1f}, at end {r['loadavg_end'][0]:.1f} (other work on the "
        "machine shares the cores)",
        '* Request: `POST /api/v1/run/{id}` `{"input_value": "hello", ...}` with `x-api-key`; flow Chat Input -> '
        "Chat Output (catalog nodes). Ceiling: a bare Flask `POST /ping` returning a small JSON object, same "
        "gunicorn settings (gevent, 2 workers, 1000 connections, keep-alive 5 s, preload).",
        "",
        "| clients | run req/s | p50 ms | p99 ms | errors | ceiling req/s | ceiling p99 ms | fraction |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, run in r["run"].items():
        c = r["ceiling"][n]
        lines.append(
            f"| {n} | {run['rps']:.0f} | {run['p50_ms']:.2f} | {run['p99_ms']:.2f} | {run['errors']} | "
            f"{c['rps']:.0f} | {c['p99_ms']:.2f} | {r['fraction_of_ceiling'][n]:.0%} |"
        )
    lin, eng, rss = r["linear_1000_http_ms"], r["linear_1000_engine"], r["rss"]
    lines += [
        "",
        f"* 1,000-node linear flow (Chat Input -> 998 Pass -> Chat Output) over HTTP: p50 **{lin['p50']} ms** "
        f"(min {lin['min']}, max {lin['max']}, {lin['runs']} runs). In process: build {eng['build_ms']} ms, run "
        f"{eng['run_ms']} ms ({eng['per_vertex_us']} µs per vertex), with events {eng['run_with_events_ms']} ms "
        f"({eng['per_vertex_with_events_us']} µs per vertex).",
        f"* RSS of the {len(rss['before_kib'])} workers over {rss['runs']} runs (after 1,000 warm-up runs): "
        f"{sum(rss['before_kib'].values())} KiB -> {sum(rss['after_kib'].values())} KiB "
        f"(**{rss['growth']:+.1%}**), errors {rss['errors']}.",
        "",
        "## Targets (issue 4)",
        "",
    ]
    lines += [f"* {name}: {'met' if ok else '**missed**'}" for name, ok in r["targets"].items()]
    notes = HERE / "NOTES.md"
    if notes.exists():
        lines += ["", notes.read_text().strip()]
    lines += [
        "",
        "Raw figures: `bench/results.json`. Reproduce: `python -m bench run` (`--help` for options); "
        "profile of the hot path: `python -m bench profile`.",
        "",
    ]
    return "\n".join(lines)
