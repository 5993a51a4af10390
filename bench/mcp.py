"""``python -m bench.mcp``: MCP ``tools/call`` (Streamable HTTP, stateless) against the simplified run, and
``tools/list`` latency for a project with 200 tool flows. Issue 13's figures; results in ``bench/mcp.json``.
Also the CPU per request of both in one process (``in_process``), which other load on the machine
does not distort: the throughput ratio a machine of our own would see is about the inverse CPU ratio.

One ``service run`` (2 gevent workers, SQLite, in-process jobs). The Chat Input -> Chat Output flow is
enabled as a tool of a project whose ``auth_type`` is ``apikey``; the two loads alternate (three rounds,
16 connections, the same duration), so both see the same machine at the same moment. The MCP requests
accept ``application/json`` only, so each reply is one JSON body (a client accepting SSE gets the same
reply framed as one ``event: message``).
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

from bench.common import HERE, Client, Service, chat_echo, load, machine, pick_tool


def rpc(api: Client, path: str, key: dict[str, str], method: str, params: dict[str, Any]) -> tuple[int, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return api.call("POST", path, body, {**key, "Accept": "application/json"})


def in_process(requests_n: int = 400, rounds: int = 3) -> dict[str, Any]:
    """CPU per request (``time.process_time``) in one process through the Flask test client: what the two
    surfaces cost, unaffected by other load on the machine (the HTTP figures above are not)."""
    from core.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(config={"config_dir": Path(tmp), "rate_limit_enabled": False})
        client = app.test_client()
        token = client.get("/api/v1/auto_login").get_json()["access_token"]
        bearer = {"Authorization": f"Bearer {token}"}
        key = {"x-api-key": client.post("/api/v1/api_key/", json={"name": "b"}, headers=bearer).get_json()["api_key"]}
        client.delete_cookie("access_token_svc")
        client.delete_cookie("refresh_token_svc")
        catalog = client.get("/api/v1/all", headers=bearer).get_json()
        pid = client.post("/api/v1/projects/", json={"name": "p"}, headers=bearer).get_json()["id"]
        flow = client.post(
            "/api/v1/flows/", json={"name": "echo", "data": chat_echo(catalog), "folder_id": pid}, headers=bearer
        )
        fid = flow.get_json()["id"]
        client.patch(
            f"/api/v1/mcp/project/{pid}",
            json={"settings": [{"id": fid, "mcp_enabled": True, "action_name": "echo"}]},
            headers=bearer,
        )
        run_body = {"input_value": "hello", "input_type": "chat", "output_type": "chat"}
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"input_value": "hello"}},
        }
        path = f"/api/v1/mcp/project/{pid}/streamable"
        mcp_headers = {**key, "Accept": "application/json"}

        def one_run() -> None:
            assert client.post(f"/api/v1/run/{fid}", json=run_body, headers=key).status_code == 200

        def one_call() -> None:
            reply = client.post(path, json=call, headers=mcp_headers).get_json()
            assert reply["result"]["isError"] is False

        costs: dict[str, list[float]] = {"run": [], "mcp": []}
        for _ in range(50):
            one_run()
            one_call()
        for _ in range(rounds):  # interleaved request by request, so drift of the machine hits both alike
            spent = {"run": 0.0, "mcp": 0.0}
            for _ in range(requests_n):
                for name, fn in (("run", one_run), ("mcp", one_call)):
                    started = time.process_time()
                    fn()
                    spent[name] += time.process_time() - started
            for name in spent:
                costs[name].append(spent[name] * 1000 / requests_n)
        run_ms, mcp_ms = statistics.median(costs["run"]), statistics.median(costs["mcp"])
        return {
            "run_cpu_ms": round(run_ms, 3),
            "mcp_cpu_ms": round(mcp_ms, 3),
            "ratio": round(run_ms / mcp_ms, 3),
            "rounds": costs,
        }


def main(duration: float = 5.0, rounds: int = 3, connections: int = 16, tool: str = "auto") -> dict[str, Any]:
    tool = pick_tool(tool)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        svc = Service(work, workers=2, name="mcp")
        svc.wait()
        svc.setup()
        api = svc.api
        _, project = api.call("POST", "/api/v1/projects/", {"name": "bench-mcp"}, svc.bearer)
        pid = project["id"]
        api.call("PATCH", f"/api/v1/flows/{svc.echo}", {"folder_id": pid}, svc.bearer)
        settings = {"settings": [{"id": svc.echo, "mcp_enabled": True, "action_name": "echo"}]}
        status, _ = api.call(
            "PATCH", f"/api/v1/mcp/project/{pid}", {**settings, "auth_settings": {"auth_type": "apikey"}}, svc.bearer
        )
        assert status == 200
        path = f"/api/v1/mcp/project/{pid}/streamable"
        status, reply = rpc(api, path, svc.key, "tools/call", {"name": "echo", "arguments": {"input_value": "hello"}})
        assert status == 200 and reply["result"]["content"][0]["text"] == "hello", reply

        call = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"input_value": "hello"}},
            }
        ).encode()
        mcp_headers = {**svc.key, "Content-Type": "application/json", "Accept": "application/json"}
        run_headers = {**svc.key, "Content-Type": "application/json"}
        figures: dict[str, list[dict[str, Any]]] = {"run": [], "mcp": []}
        load(
            svc.url(f"/api/v1/run/{svc.echo}"),
            connections,
            2,
            body=svc.body,
            headers=run_headers,
            tool=tool,
            workdir=work,
        )
        load(svc.url(path), connections, 2, body=call, headers=mcp_headers, tool=tool, workdir=work)
        for _ in range(rounds):
            figures["run"].append(
                load(
                    svc.url(f"/api/v1/run/{svc.echo}"),
                    connections,
                    duration,
                    body=svc.body,
                    headers=run_headers,
                    tool=tool,
                    workdir=work,
                )
            )
            figures["mcp"].append(
                load(svc.url(path), connections, duration, body=call, headers=mcp_headers, tool=tool, workdir=work)
            )
            print(
                f"run {figures['run'][-1]['rps']} req/s   mcp tools/call {figures['mcp'][-1]['rps']} req/s", flush=True
            )
        run_rps = statistics.median(f["rps"] for f in figures["run"])
        mcp_rps = statistics.median(f["rps"] for f in figures["mcp"])

        # tools/list for a project with 200 tool flows
        data = chat_echo(svc.catalog)
        ids = [svc.create_flow(f"tool-{i:03d}", data, folder_id=pid) for i in range(199)]
        enable = {"settings": [{"id": i, "mcp_enabled": True} for i in ids]}
        assert api.call("PATCH", f"/api/v1/mcp/project/{pid}", enable, svc.bearer)[0] == 200
        status, listed = rpc(api, path, svc.key, "tools/list", {})
        assert status == 200 and len(listed["result"]["tools"]) == 200, len(listed["result"]["tools"])
        latencies = []
        for _ in range(100):
            started = time.perf_counter()
            status, _ = rpc(api, path, svc.key, "tools/list", {})
            latencies.append((time.perf_counter() - started) * 1000)
            assert status == 200
        latencies.sort()
        svc.stop()
    cpu = in_process()
    print(f"in process: run {cpu['run_cpu_ms']} ms CPU, mcp tools/call {cpu['mcp_cpu_ms']} ms CPU", flush=True)
    ratios = [m["rps"] / r["rps"] for r, m in zip(figures["run"], figures["mcp"], strict=True) if r["rps"]]
    result = {
        "machine": machine(),
        # the machine is shared: 1/5/15-minute load averages when the run started and ended
        "load_average": {"start": [round(x, 2) for x in load_before], "end": [round(x, 2) for x in os.getloadavg()]},
        "in_process": cpu,
        "ratio_per_round": [round(x, 3) for x in ratios],
        "tool": tool,
        "connections": connections,
        "duration_s": duration,
        "rounds": figures,
        "run_rps_median": run_rps,
        "mcp_tools_call_rps_median": mcp_rps,
        "ratio_of_medians": round(mcp_rps / run_rps, 3) if run_rps else None,
        "tools_list_200": {
            "p50_ms": round(latencies[49], 2),
            "p90_ms": round(latencies[89], 2),
            "p99_ms": round(latencies[98], 2),
            "bytes": len(json.dumps(listed)),
        },
    }
    (HERE / "mcp.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k not in ("rounds", "machine")}, indent=2))
    return result


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:2]))
