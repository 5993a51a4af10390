"""``python -m bench.extensions``: the figures of issue 17 against real servers on 127.0.0.1.

* ``reload``: ``service run`` with two gevent workers (SQLite, shared state in files, the
  embedded default); ``POST .../service-bundle-standard/bundles/standard/reload``, then poll
  ``GET /api/v1/extensions/plugins`` on fresh connections until both worker pids report the new
  component generation. Target: every worker within 2 s of the reload request.
* ``executor``: the same flow (the reference ``chat-echo.json``) through the full service's
  simplified run (API key lookup, flow lookup, message storage) and through ``service-exec serve``
  (two workers each, the same gunicorn options), c=16 keep-alive clients, alternating rounds.
  Target: the executor >= 110% of the service's requests per second.
* ``imports``: ``import service_exec.engine`` and loading the installed bundles' registry in a
  fresh interpreter, best of 5 (wall and CPU). Target: < 300 ms.

Merges into ``bench/extensions.json`` (scenarios not run keep their last figures) and prints it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, clean_env, free_port, service_command, start, stop, wait_http
from bench.loadgen import run as load

FLOW = ROOT / "tests" / "reference_flows" / "chat-echo.json"


def call(port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    if response.status >= 400:
        raise RuntimeError(f"{method} {path}: {response.status} {raw[:300]!r}")
    return json.loads(raw) if raw else None


class Service:
    def __init__(self, work: Path, **env: str) -> None:
        self.port = free_port()
        self.proc = start(
            service_command(),
            clean_env(
                SERVICE_CONFIG_DIR=str(work),
                SERVICE_PORT=str(self.port),
                SERVICE_WORKERS="2",
                SERVICE_LOG_LEVEL="warning",
                SERVICE_ENABLE_EXTENSION_RELOAD="true",
                **env,
            ),
            work / "service.log",
        )
        wait_http(self.port, "/health")
        token = call(self.port, "GET", "/api/v1/auto_login")["access_token"]
        self.bearer = {"Authorization": f"Bearer {token}"}
        self.key = {"x-api-key": call(self.port, "POST", "/api/v1/api_key/", {"name": "bench"}, self.bearer)["api_key"]}


def reload_bench(work: Path, rounds: int) -> dict[str, Any]:
    svc = Service(work)
    try:
        seen: list[float] = []
        calls: list[float] = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            result = call(
                svc.port, "POST", "/api/v1/extensions/service-bundle-standard/bundles/standard/reload", None, svc.bearer
            )
            calls.append(time.perf_counter() - t0)
            target = result["generation"]
            pids: dict[int, int] = {}
            deadline = t0 + 30
            while time.perf_counter() < deadline:
                proc = call(svc.port, "GET", "/api/v1/extensions/plugins", None, svc.bearer)["process"]
                pids[proc["pid"]] = proc["components_generation"]
                if len(pids) >= 2 and all(g >= target for g in pids.values()):
                    break
            seen.append(time.perf_counter() - t0)
            time.sleep(0.5)
        return {
            "rounds": rounds,
            "reload_call_s": {"p50": sorted(calls)[len(calls) // 2], "max": max(calls)},
            "all_workers_s": {"p50": sorted(seen)[len(seen) // 2], "max": max(seen)},
            "target_s": 2.0,
            "ok": max(seen) < 2.0,
        }
    finally:
        stop(svc.proc)


def executor_bench(work: Path, rounds: int, seconds: float) -> dict[str, Any]:
    svc = Service(work / "svc")
    exec_port = free_port()
    key = "bench-executor-key-0123456789"
    executor = start(
        [sys.executable, "-m", "service_exec.cli", "serve", str(FLOW), "--port", str(exec_port), "--workers", "2"],
        {**clean_env(SERVICE_EXEC_API_KEY=key), "PYTHONPATH": f"{ROOT / 'executor'}:{ROOT}"},
        work / "executor.log",
    )
    try:
        wait_http(exec_port, "/health")
        flow = json.loads(FLOW.read_text())
        created = call(svc.port, "POST", "/api/v1/flows/", {"name": "echo", "data": flow["data"]}, svc.bearer)
        exec_id = call(exec_port, "GET", "/health")  # warm
        exec_flow = "chat-echo"  # served by name
        body = json.dumps({"input_value": "hello", "input_type": "chat", "output_type": "chat"}).encode()
        headers_s = {"Content-Type": "application/json", **svc.key}
        headers_e = {"Content-Type": "application/json", "x-api-key": key}
        service_url = f"http://127.0.0.1:{svc.port}/api/v1/run/{created['id']}"
        exec_url = f"http://127.0.0.1:{exec_port}/api/v1/run/{exec_flow}"
        for url, h in ((service_url, headers_s), (exec_url, headers_e)):  # warm-up
            load(url, connections=4, duration=1.0, max_requests=200, body=body, headers=h)
        out: dict[str, list[dict[str, Any]]] = {"service": [], "executor": []}
        for _ in range(rounds):
            for name, url, h in (("service", service_url, headers_s), ("executor", exec_url, headers_e)):
                r = load(url, connections=16, duration=seconds, max_requests=1_000_000, body=body, headers=h)
                out[name].append({k: r[k] for k in ("rps", "requests", "errors", "statuses", "p50_ms", "p99_ms")})
        best = {name: max(x["rps"] for x in rounds_) for name, rounds_ in out.items()}
        return {
            "health": exec_id,
            "rounds": out,
            "best_rps": best,
            "ratio": best["executor"] / best["service"] if best["service"] else None,
            "target_ratio": 1.10,
            "ok": best["service"] > 0 and best["executor"] / best["service"] >= 1.10,
        }
    finally:
        stop(executor)
        stop(svc.proc)


IMPORT_PROBE = """
import time
t, c = time.perf_counter(), time.process_time()
import service_exec.engine
service_exec.engine.load_registry()
print(time.perf_counter() - t, time.process_time() - c)
"""


def import_bench(python: str | None, repeats: int = 5) -> dict[str, Any]:
    """In ``python`` (an executor-only venv), else this interpreter with the checkout on the path."""
    import subprocess

    env = clean_env()
    if python is None:
        env["PYTHONPATH"] = f"{ROOT / 'executor'}:{ROOT}"
    else:
        env.pop("PYTHONPATH", None)
    walls, cpus = [], []
    for _ in range(repeats):
        out = subprocess.run(  # noqa: S603 - fixed argv, no shell
            [python or sys.executable, "-c", IMPORT_PROBE], env=env, capture_output=True, text=True, check=True, cwd="/"
        )
        wall, cpu = (float(x) for x in out.stdout.split())
        walls.append(wall * 1000)
        cpus.append(cpu * 1000)
    return {
        "python": python or sys.executable,
        "load_average": os.getloadavg()[0],
        "wall_ms_best": round(min(walls), 1),
        "cpu_ms_best": round(min(cpus), 1),
        "target_ms": 300,
        # on a loaded machine wall time counts the waits for a CPU too: the CPU time is the cost
        "ok": min(cpus) < 300,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=("reload", "executor", "imports"), default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--executor-python", default=None, help="python of an executor-only venv (imports)")
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    path = ROOT / "bench" / "extensions.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    if args.only in (None, "imports"):
        results["imports"] = import_bench(args.executor_python)
    with tempfile.TemporaryDirectory(prefix="bench-ext-") as tmp:
        work = Path(tmp)
        if args.only in (None, "reload"):
            (work / "reload").mkdir()
            results["reload"] = reload_bench(work / "reload", args.rounds)
        if args.only in (None, "executor"):
            (work / "executor" / "svc").mkdir(parents=True)
            results["executor"] = executor_bench(work / "executor", args.rounds, args.seconds)
    text = json.dumps(results, indent=2)
    path.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
