"""``python -m bench.version_save [--saves N] [--database-url URL]``: what a version adds to a flow save.

Issue 31's target: saving a version adds under 5 ms p50 to a flow save. Three apps are built in this one
process, on their own databases: the versions plugin switched off (``disabled_plugins``), on with
autosaves coalescing (the default: one author's saves within a minute replace the newest automatic
version, an UPDATE), and on with every save a new version (an INSERT, and past 50 versions a DELETE).
Each takes ``--saves`` ``PATCH /api/v1/flows/{id}`` with ``If-Match`` through the WSGI test client, each
save changing one field of a flow built from catalog nodes as the editor saves them; the three are
interleaved save by save, so the machine's load falls on all of them alike.

Timed per save: the CPU time of the request's thread (``time.thread_time``: on a busy shared machine
the steadier figure) and wall time. The audit writer is a thread of its own: its CPU is the process's
CPU minus the request thread's, reported apart, which shows the audit write is off the request's path.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any

MODES = {
    "versions off": {"disabled_plugins": ["versions"]},
    "versions on, autosaves coalesce": {},
    "versions on, a new version per save": {"flow_version_coalesce_seconds": 0},
}


def _app(database_url: str | None, extra: dict[str, Any]) -> Any:
    from core.app import create_app

    config: dict[str, Any] = {"config_dir": tempfile.mkdtemp(prefix="service-vsave-"), "log_level": "warning"}
    if database_url:
        config["database_url"] = database_url
    config.update(extra)
    return create_app(config=config)


class Saver:
    """One app, its signed-in client and a flow it saves over and over."""

    def __init__(self, app: Any, data: dict[str, Any]) -> None:
        self.client = app.test_client()
        token = self.client.get("/api/v1/auto_login").get_json()["access_token"]
        self.bearer = {"Authorization": f"Bearer {token}"}
        created = self.client.post("/api/v1/flows/", json={"name": "bench", "data": data}, headers=self.bearer)
        assert created.status_code == 201, created.get_json()
        self.flow = created.get_json()
        self.token = self.flow["version_token"]
        self.data = data
        self.cpu: list[float] = []
        self.wall: list[float] = []
        self.process: list[float] = []

    def save(self, i: int) -> None:
        self.data["nodes"][0]["data"]["node"]["template"]["input_value"]["value"] = f"text {i}"
        headers = {**self.bearer, "If-Match": self.token}
        w0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        response = self.client.patch(f"/api/v1/flows/{self.flow['id']}", json={"data": self.data}, headers=headers)
        c1, w1, p1 = time.thread_time(), time.perf_counter(), time.process_time()
        assert response.status_code == 200, response.get_json()
        self.token = response.get_json()["version_token"]
        self.cpu.append((c1 - c0) * 1000)
        self.wall.append((w1 - w0) * 1000)
        self.process.append((p1 - p0) * 1000)


def _flow(catalog: dict[str, Any]) -> dict[str, Any]:
    from bench.common import catalog_node, chat_echo

    data = chat_echo(catalog)
    keys = ["Prompt Template", "ParserComponent", "TextInput", "CalculatorComponent"]
    available = {k for cat, nodes in catalog.items() if isinstance(nodes, dict) for k in nodes}
    for j, key in enumerate(k for k in keys if k in available):
        node = catalog_node(catalog, key, f"{key}-{j:05d}")
        node["position"] = {"x": 300 * j, "y": 400}
        data["nodes"].append(node)
    return data


def p50(values: list[float]) -> float:
    return statistics.median(values)


def main(saves: int = 300, database_url: str | None = None) -> dict[str, dict[str, float]]:
    import json

    for key in [k for k in os.environ if k.startswith("SERVICE_")]:
        del os.environ[key]
    os.environ["SERVICE_ENV_FILE"] = os.devnull
    apps = {name: _app(database_url, extra) for name, extra in MODES.items()}
    first = next(iter(apps.values())).test_client()
    token = first.get("/api/v1/auto_login").get_json()["access_token"]
    catalog = first.get("/api/v1/all", headers={"Authorization": f"Bearer {token}"}).get_json()
    data = _flow(catalog)
    savers = {name: Saver(app, json.loads(json.dumps(data))) for name, app in apps.items()}
    for i in range(20):  # warm-up: statement caches, first version
        for saver in savers.values():
            saver.save(i)
    for saver in savers.values():
        saver.cpu.clear(), saver.wall.clear(), saver.process.clear()
    for i in range(saves):
        for saver in savers.values():
            saver.save(1000 + i)
    off = savers["versions off"]
    out: dict[str, dict[str, float]] = {}
    size = len(json.dumps(data))
    print(f"flow JSON {size / 1000:.1f} kB, {len(data['nodes'])} nodes; {saves} saves each, interleaved")
    print(f"{'':38} {'thread CPU p50':>15} {'added':>8} {'wall p50':>10} {'added':>8} {'other threads':>14}")
    for name, saver in savers.items():
        other = p50([p - c for p, c in zip(saver.process, saver.cpu, strict=True)])
        row = {
            "cpu_p50_ms": p50(saver.cpu),
            "cpu_added_ms": p50(saver.cpu) - p50(off.cpu),
            "wall_p50_ms": p50(saver.wall),
            "wall_added_ms": p50(saver.wall) - p50(off.wall),
            "other_threads_cpu_p50_ms": other,
        }
        out[name] = row
        print(
            f"{name:38} {row['cpu_p50_ms']:13.2f}ms {row['cpu_added_ms']:+7.2f} {row['wall_p50_ms']:8.2f}ms "
            f"{row['wall_added_ms']:+7.2f} {other:12.2f}ms"
        )
    out["audit"] = audit_path(apps["versions on, autosaves coalesce"])
    return out


def audit_path(app: Any, n: int = 2000) -> dict[str, float]:
    """What an audit entry costs the request's thread (``core.audit.record``: ``on_audit`` appends to the
    writer's queue) against what its write costs the writer thread (one batched INSERT per wake-up)."""
    from service_versions import audit as versions_audit

    from core import appstate, audit

    with app.app_context():
        writer = versions_audit.writer(appstate.engine())
        writer.flush()
        t0 = time.perf_counter()
        for i in range(n):
            audit.record("flow:write", "flow", f"bench-{i}", name="bench", details={"fields": ["data"]})
        t1 = time.perf_counter()
        written = writer.flush()
        t2 = time.perf_counter()
    record_us = (t1 - t0) / n * 1e6
    write_us = (t2 - t1) / max(written, 1) * 1e6
    print(
        f"audit: {record_us:.1f} us per entry on the request's thread (a queue append); the writer thread's "
        f"batched INSERT {write_us:.1f} us per entry ({written} entries in {(t2 - t1) * 1000:.1f} ms, off the request)"
    )
    return {"record_us_per_entry": record_us, "writer_us_per_entry": write_us}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.version_save", description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=300)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    main(args.saves, args.database_url)
