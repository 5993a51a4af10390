"""A2A ``message/send`` against the simplified run, same flow, same server, same run of the bench.

``python -m bench.a2a_scenario [--duration 5] [--clients 4,8]``: one ``service run`` (2 gevent workers,
SQLite, in-process jobs, ``SERVICE_A2A_ENABLED=true``), the Chat Input -> Chat Output flow published as an
agent in an ``apikey`` project; each step alternates ``POST /api/v1/run/{id}`` and ``message/send`` on
``/api/v1/a2a/{id}/jsonrpc`` (owner key on both), twice, and reports each one's best throughput and the
ratio. Target: A2A >= 80% of the simplified run (issue 14). Results go to ``bench/a2a_results.json``.

``--cpu N``: also the CPU time per request in one process (Flask test client, no HTTP): five times ``N`` requests
of each, alternated in blocks of 25, and the median of the blocks' ratios (message/send over run): on a shared
machine the wall-clock figures above swing by a factor of two between rounds, single CPU figures by a third (cache
and frequency effects of the neighbours), the ratio of adjacent blocks much less. ``--cpu-only``: skip the HTTP
part.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench.common import Service, chat_echo, load

HERE = Path(__file__).resolve().parent


BLOCK = 25  # requests per block of the in-process CPU comparison


def cpu_per_request(n: int, rounds: int = 5) -> dict[str, Any]:
    """CPU milliseconds per request of the simplified run and of ``message/send``, in process.

    ``rounds`` x ``n`` requests of each, in alternated blocks of :data:`BLOCK`; the medians of the blocks and
    the median of the pairs' ratios (message/send over run, the load-independent figure of issue 14).
    """
    import time

    for key in [k for k in os.environ if k.startswith("SERVICE_")]:
        del os.environ[key]
    os.environ["SERVICE_ENV_FILE"] = os.devnull
    from core.app import create_app

    app = create_app(
        config={
            "config_dir": tempfile.mkdtemp(prefix="bench-a2a-cpu-"),
            "log_level": "warning",
            "a2a_enabled": True,
        }
    )
    client = app.test_client()
    bearer = {"Authorization": f"Bearer {client.get('/api/v1/auto_login').get_json()['access_token']}"}
    key = {"x-api-key": client.post("/api/v1/api_key/", json={"name": "b"}, headers=bearer).get_json()["api_key"]}
    catalog = client.get("/api/v1/all", headers=bearer).get_json()
    body = {"name": "agents", "auth_settings": {"auth_type": "apikey"}}
    folder = client.post("/api/v1/projects/", json=body, headers=bearer).get_json()
    flow = client.post(
        "/api/v1/flows/",
        json={
            "name": "a",
            "data": chat_echo(catalog),
            "folder_id": folder["id"],
            "flow_type": "agent",
            "a2a_enabled": True,
        },
        headers=bearer,
    ).get_json()
    message = {"role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text": "hello"}]}
    targets = {
        "run": (f"/api/v1/run/{flow['id']}", json.dumps({"input_value": "hello"})),
        "a2a": (
            f"/api/v1/a2a/{flow['id']}/jsonrpc",
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}),
        ),
    }

    def go(label: str, count: int) -> float:
        url, data = targets[label]
        start = time.process_time()
        for _ in range(count):
            response = client.post(url, data=data, headers=key, content_type="application/json")
            assert response.status_code == 200, response.get_json()
        return (time.process_time() - start) / count * 1000

    for label in targets:
        go(label, 50)  # warm-up
    # blocks of BLOCK requests, run and message/send alternated: a neighbour's burst slows both of a pair
    # alike, so the median of the pairs' ratios moves much less than either figure
    pairs = max(1, n // BLOCK)
    run_ms: list[float] = []
    a2a_ms: list[float] = []
    for _ in range(rounds * pairs):
        run_ms.append(go("run", BLOCK))
        a2a_ms.append(go("a2a", BLOCK))
    over = statistics.median(a / r for a, r in zip(a2a_ms, run_ms, strict=True))
    run_med, a2a_med = statistics.median(run_ms), statistics.median(a2a_ms)
    print(
        f"cpu: run {run_med:.2f} ms, message/send {a2a_med:.2f} ms per request (medians of {len(run_ms)} blocks); "
        f"message/send / run, median of pairs: {over:.2f}x ({1 / over:.0%})",
        flush=True,
    )
    return {
        "run_ms": round(run_med, 3),
        "a2a_ms": round(a2a_med, 3),
        "run_ms_least": round(min(run_ms), 3),
        "a2a_ms_least": round(min(a2a_ms), 3),
        "a2a_over_run": round(over, 3),
        "ratio": round(1 / over, 3),
        "blocks": len(run_ms),
        "block": BLOCK,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.a2a_scenario")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--clients", default="4,8")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--cpu", type=int, default=0, help="also CPU time per request in process, N requests a round")
    parser.add_argument("--cpu-only", action="store_true", help="only the in-process CPU comparison (--cpu N)")
    args = parser.parse_args()
    if args.cpu_only:
        print(json.dumps(cpu_per_request(args.cpu or 300), indent=2))
        return
    work = Path(tempfile.mkdtemp(prefix="bench-a2a-"))
    svc = Service(work, name="a2a", a2a_enabled="true")
    try:
        svc.wait()
        svc.setup()
        status, folder = svc.api.call(
            "POST", "/api/v1/projects/", {"name": "agents", "auth_settings": {"auth_type": "apikey"}}, svc.bearer
        )
        assert status == 201, folder
        agent = svc.create_flow(
            "bench-agent", chat_echo(svc.catalog), folder_id=folder["id"], flow_type="agent", a2a_enabled=True
        )
        a2a_body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {
                    "message": {"role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text": "hello"}]}
                },
            }
        ).encode()
        status, answer = svc.api.call("POST", f"/api/v1/a2a/{agent}/jsonrpc", json.loads(a2a_body), svc.key)
        assert status == 200 and answer["result"]["artifacts"][0]["parts"][0]["text"] == "hello", answer
        targets = {
            "run": (svc.url(f"/api/v1/run/{agent}"), svc.body),
            "a2a": (svc.url(f"/api/v1/a2a/{agent}/jsonrpc"), a2a_body),
        }
        headers = {**svc.key, "Content-Type": "application/json"}
        results: dict[str, Any] = {}
        for n in (int(c) for c in args.clients.split(",")):
            best: dict[str, dict[str, Any]] = {}
            for _round in range(2):
                for label, (url, body) in targets.items():
                    load(url, n, 1.0, body=body, headers=headers, tool="python", workdir=work)  # warm-up
                    figures = load(url, n, args.duration, body=body, headers=headers, tool="python", workdir=work)
                    print(f"{label:<4} c={n:<3} {figures['rps']:>8} req/s  p50 {figures['p50_ms']:.2f} ms", flush=True)
                    if label not in best or figures["rps"] > best[label]["rps"]:
                        best[label] = figures
            ratio = best["a2a"]["rps"] / best["run"]["rps"] if best["run"]["rps"] else 0.0
            results[str(n)] = {**best, "ratio": round(ratio, 3)}
            print(f"c={n}: message/send is {ratio:.0%} of the simplified run", flush=True)
        if args.cpu:
            results["cpu_in_process"] = cpu_per_request(args.cpu)
        results["load_average"] = [round(x, 2) for x in os.getloadavg()]
        if not args.no_write:
            (HERE / "a2a_results.json").write_text(json.dumps(results, indent=2) + "\n")
    finally:
        svc.stop()


if __name__ == "__main__":
    main()
