"""A2A ``message/send`` against the simplified run, same flow, same server, same run of the bench.

``python -m bench.a2a_scenario [--duration 5] [--clients 4,8]``: one ``service run`` (2 gevent workers,
SQLite, in-process jobs, ``SERVICE_A2A_ENABLED=true``), the Chat Input -> Chat Output flow published as an
agent in an ``apikey`` project; each step alternates ``POST /api/v1/run/{id}`` and ``message/send`` on
``/api/v1/a2a/{id}/jsonrpc`` (owner key on both), twice, and reports each one's best throughput and the
ratio. Target: A2A >= 80% of the simplified run (issue 14). Results go to ``bench/a2a_results.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.common import Service, chat_echo, load

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.a2a_scenario")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--clients", default="4,8")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
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
        if not args.no_write:
            (HERE / "a2a_results.json").write_text(json.dumps(results, indent=2) + "\n")
    finally:
        svc.stop()


if __name__ == "__main__":
    main()
