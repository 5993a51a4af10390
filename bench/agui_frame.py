"""``python -m bench.agui_frame``: the first AG-UI frame of a v2 stream, in process, as CPU time.

On this shared 2-core machine the wall-clock figure of ``python -m bench workflows`` mostly measures
the other sessions' load. The CPU time a request's own thread spends (``time.thread_time``) does not
wait for them, so it is the stable figure here: from the start of ``POST /api/v2/workflows``
(``mode: stream``, ``stream_protocol: agui``) to the first frame (``RUN_STARTED``), next to the same
thread's CPU time for ``GET /health`` (the floor of any request) and for the simplified run of the
same flow (``POST /api/v1/run``), alternated in the same loop. The run's own thread starts only after
the first frame, so it is not counted. Writes ``bench/agui_frame.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main(n: int = 300) -> dict[str, Any]:
    for key in [k for k in os.environ if k.startswith("SERVICE_")]:
        del os.environ[key]
    os.environ["SERVICE_ENV_FILE"] = os.devnull
    from bench.common import chat_echo
    from core.app import create_app

    app = create_app(config={"config_dir": tempfile.mkdtemp(prefix="service-agui-"), "log_level": "warning"})
    client = app.test_client()
    token = client.get("/api/v1/auto_login").get_json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    key = {"x-api-key": client.post("/api/v1/api_key/", json={"name": "b"}, headers=bearer).get_json()["api_key"]}
    catalog = client.get("/api/v1/all", headers=bearer).get_json()
    flow = client.post("/api/v1/flows/", json={"name": "b", "data": chat_echo(catalog)}, headers=bearer).get_json()
    stream_body = json.dumps(
        {"flow_id": flow["id"], "input_value": "hello", "mode": "stream", "stream_protocol": "agui"}
    )
    run_body = json.dumps({"input_value": "hello"})
    figures: dict[str, list[float]] = {"first_frame_cpu": [], "first_frame_wall": [], "health_cpu": [], "run_cpu": []}
    for i in range(n + 30):
        c0 = time.thread_time()
        client.get("/health")
        health = time.thread_time() - c0

        c0, w0 = time.thread_time(), time.perf_counter()
        response = client.post(
            "/api/v2/workflows", data=stream_body, headers=key, content_type="application/json", buffered=False
        )
        chunks = iter(response.response)
        first = next(chunks)
        cpu, wall = time.thread_time() - c0, time.perf_counter() - w0
        assert b"RUN_STARTED" in (first if isinstance(first, bytes) else first.encode()), first
        rest = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
        response.close()
        assert b"RUN_FINISHED" in rest, rest[-200:]

        c0 = time.thread_time()
        r = client.post(f"/api/v1/run/{flow['id']}", data=run_body, headers=key, content_type="application/json")
        run = time.thread_time() - c0
        assert r.status_code == 200
        if i >= 30:  # warm-up
            figures["first_frame_cpu"].append(cpu * 1000)
            figures["first_frame_wall"].append(wall * 1000)
            figures["health_cpu"].append(health * 1000)
            figures["run_cpu"].append(run * 1000)
    out: dict[str, Any] = {
        name: {"p50_ms": round(statistics.median(v), 3), "p90_ms": round(_pct(v, 90), 3)} for name, v in figures.items()
    }
    out["n"] = n
    out["first_frame_over_health_cpu"] = round(out["first_frame_cpu"]["p50_ms"] / out["health_cpu"]["p50_ms"], 2)
    out["first_frame_over_run_cpu"] = round(out["first_frame_cpu"]["p50_ms"] / out["run_cpu"]["p50_ms"], 2)
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    out["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (HERE / "agui_frame.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300), indent=2))
