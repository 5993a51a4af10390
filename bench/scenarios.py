"""The scenarios of issue 7, each bounded in count and time, loopback only.

Every function takes a :class:`Bench` (work dir, load tool, durations, scale-out resources) and
returns a JSON-able dict. ``bench.runner`` runs them in order and writes the results.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.catalog_scenario import catalog  # noqa: F401 - the runner looks scenarios up here
from bench.common import (
    ROOT,
    Client,
    Service,
    clean_env,
    fanout,
    free_port,
    linear,
    load,
    rss_kib,
    start,
    stop,
    wait_http,
)

REFERENCE = Path("/work/shared/reference/flows")


@dataclass
class Bench:
    work: Path
    tool: str = "wrk"
    duration: float = 5.0
    warmup: float = 1.0
    clients: tuple[int, ...] = (1, 16, 64)
    memory_runs: int = 10_000
    scale_out: dict[str, str] = field(default_factory=dict)  # database_url, redis_url when --scale-out
    shared: dict[str, Any] = field(default_factory=dict)  # the running SQLite service, response size


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def summary(ms: list[float]) -> dict[str, float]:
    return {
        "n": len(ms),
        "p50_ms": round(pct(ms, 50), 2),
        "p90_ms": round(pct(ms, 90), 2),
        "p99_ms": round(pct(ms, 99), 2),
        "min_ms": round(min(ms), 2) if ms else 0.0,
        "max_ms": round(max(ms), 2) if ms else 0.0,
    }


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def reference_flow(name: str) -> dict[str, Any]:
    path = REFERENCE / name
    if not path.exists():
        path = ROOT / "tests" / "flows" / "fixtures" / name
    return json.loads(path.read_text())


def steps(b: Bench, url: str, *, body: bytes, headers: dict[str, str], label: str) -> dict[str, Any]:
    out = {}
    for n in b.clients:
        load(url, n, b.warmup, body=body, headers=headers, tool=b.tool, workdir=b.work)
        figures = load(url, n, b.duration, body=body, headers=headers, tool=b.tool, workdir=b.work)
        figures["loadavg"] = round(os.getloadavg()[0], 2)
        out[str(n)] = figures
        print(
            f"{label:<8} c={n:<3} {figures['rps']:>8} req/s  p50 {figures['p50_ms']:.2f} ms  "
            f"p99 {figures['p99_ms']:.2f} ms  errors {figures['errors']}",
            flush=True,
        )
    return out


# --- start-up ---------------------------------------------------------------------------------------------
def startup(b: Bench) -> dict[str, Any]:
    """Cold start (empty config dir: migrations, superuser) and warm restart; RSS of idle workers."""
    cold = Service(b.work, name="startup")
    cold_s = cold.wait()
    cold.stop()
    warm_runs = []
    rss = pss = []
    for _ in range(3):
        warm = Service(b.work, name="startup")
        warm_runs.append(warm.wait())
        time.sleep(2.0)  # idle
        workers = warm.workers()
        rss = [rss_kib(p) for p in workers]
        pss = [pss_kib(p) for p in workers]
        master = rss_kib(warm.proc.pid)
        warm.stop()
    result = {
        "cold_s": round(cold_s, 3),
        "warm_s": round(statistics.median(warm_runs), 3),
        "warm_runs_s": [round(x, 3) for x in warm_runs],
        "idle_rss_kib_per_worker": rss,
        "idle_pss_kib_per_worker": pss,
        "master_rss_kib": master,
    }
    print(
        f"startup  cold {cold_s:.2f} s, warm {result['warm_s']:.2f} s; idle RSS per worker "
        f"{[r // 1024 for r in rss]} MiB (PSS {[p // 1024 for p in pss]} MiB)",
        flush=True,
    )
    return result


# --- ceiling and run ---------------------------------------------------------------------------------------
def run_service(b: Bench) -> Service:
    """The SQLite, in-process service shared by run, flows, memory and data scale."""
    svc = b.shared.get("service")
    if svc is None:
        svc = Service(b.work, name="service")
        svc.wait()
        svc.setup()
        _, raw = svc.api.call("POST", f"/api/v1/run/{svc.echo}", json.loads(svc.body), svc.key)
        b.shared["response_bytes"] = len(json.dumps(raw, separators=(",", ":")))
        b.shared["service"] = svc
    return svc


def ceiling(b: Bench) -> dict[str, Any]:
    """A bare Flask endpoint under ``service run``'s gunicorn options, answering as many bytes as a run."""
    run_service(b)
    size = b.shared["response_bytes"]
    port = free_port()
    proc = start(
        [sys.executable, "-m", "bench.ceiling", str(port), "2", str(size)], clean_env(), b.work / "ceiling.log"
    )
    try:
        wait_http(port, "/ping")
        body = json.dumps({"input_value": "hello", "input_type": "chat", "output_type": "chat"}).encode()
        figures = steps(b, f"http://127.0.0.1:{port}/ping", body=body, headers={}, label="ceiling")
    finally:
        stop(proc)
    return {"response_bytes": size, "steps": figures}


def run(b: Bench) -> dict[str, Any]:
    svc = run_service(b)
    url = svc.url(f"/api/v1/run/{svc.echo}")
    return {"steps": steps(b, url, body=svc.body, headers=svc.key, label="run")}


# --- v2 workflows ------------------------------------------------------------------------------------------
def workflows(b: Bench, rounds: int = 2, frames: int = 300) -> dict[str, Any]:
    """``POST /api/v2/workflows`` sync against the simplified run, alternated in the same run (c=16), and
    the time to the first AG-UI frame of a stream (one client, sequential; from sending to its first line).
    """
    svc = run_service(b)
    v1 = svc.url(f"/api/v1/run/{svc.echo}")
    v2 = svc.url("/api/v2/workflows")
    v2_body = json.dumps({"flow_id": svc.echo, "input_value": "hello"}).encode()
    headers = {**svc.key, "Content-Type": "application/json"}
    runs_rps: list[float] = []
    v2_rps: list[float] = []
    for _ in range(rounds):  # alternate so both see the same machine state
        for url, body, into, label in ((v1, svc.body, runs_rps, "run"), (v2, v2_body, v2_rps, "v2 sync")):
            load(url, 16, b.warmup, body=body, headers=headers, tool=b.tool, workdir=b.work)
            figures = load(url, 16, b.duration, body=body, headers=headers, tool=b.tool, workdir=b.work)
            into.append(float(figures["rps"]))
            print(f"{label:<8} c=16 {figures['rps']:>8} req/s  p50 {figures['p50_ms']:.2f} ms", flush=True)
    first = first_agui_frame(svc, frames)
    ratio = statistics.median(v2_rps) / statistics.median(runs_rps) if runs_rps else 0.0
    print(
        f"v2 sync / run {ratio:.2f}; first AG-UI frame p50 {first['p50_ms']} ms "
        f"(GET /health p50 {first['health_p50_ms']} ms, ratio {first['ratio_to_health']}); "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return {
        "run_rps": runs_rps,
        "v2_sync_rps": v2_rps,
        "v2_fraction_of_run": round(ratio, 3),
        "first_agui_frame": first,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def first_agui_frame(svc: Service, n: int) -> dict[str, Any]:
    """Time from sending a v2 AG-UI stream request to its first frame (``RUN_STARTED``), one client.

    Alternated with ``GET /health`` on the same connection, the floor of one request through the same
    server at the same moment: ``ratio_to_health`` is the portable figure on a loaded machine.
    """
    body = json.dumps({"flow_id": svc.echo, "input_value": "hello", "mode": "stream", "stream_protocol": "agui"})
    headers = {**svc.key, "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    ms: list[float] = []
    floor: list[float] = []
    for i in range(n + 20):
        t0 = time.perf_counter()
        conn.request("GET", "/health")
        health = conn.getresponse()
        health.read()
        health_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        conn.request("POST", "/api/v2/workflows", body=body, headers=headers)
        resp = conn.getresponse()
        line = resp.readline()
        elapsed = (time.perf_counter() - t0) * 1000
        assert resp.status == 200 and b"RUN_STARTED" in line, (resp.status, line)
        rest = resp.read()
        assert b"RUN_FINISHED" in rest, rest[-200:]
        if i >= 20:  # warm-up
            ms.append(elapsed)
            floor.append(health_ms)
    conn.close()
    out: dict[str, Any] = dict(summary(ms))
    out["health_p50_ms"] = summary(floor)["p50_ms"]
    out["ratio_to_health"] = round(out["p50_ms"] / out["health_p50_ms"], 2) if out["health_p50_ms"] else 0.0
    return out


# --- bigger flows -------------------------------------------------------------------------------------------
def flows(b: Bench) -> dict[str, Any]:
    """Linear and fan-out flows of 10, 100 and 1,000 components over HTTP, one client."""
    svc = run_service(b)
    out: dict[str, Any] = {}
    for shape, make in (("linear", linear), ("fanout", fanout)):
        for n in (10, 100, 1000):
            fid = svc.create_flow(f"bench-{shape}-{n}", make(n))
            runs = 15 if n == 1000 else 40
            times = []
            for i in range(runs + 3):
                t = time.perf_counter()
                status, answer = svc.api.call("POST", f"/api/v1/run/{fid}", {"input_value": "x"}, svc.key)
                if i >= 3:
                    times.append((time.perf_counter() - t) * 1000)
                assert status == 200, answer
            assert answer["outputs"][0]["outputs"][0]["results"]["message"]["text"] == "x", answer
            s = summary(times)
            s["per_component_us"] = round(s["p50_ms"] / n * 1000, 1)
            out[f"{shape}_{n}"] = s
            print(f"flows    {shape:<7} {n:>5}: p50 {s['p50_ms']:.2f} ms  p99 {s['p99_ms']:.2f} ms", flush=True)
    out["engine_linear_1000"] = engine_linear(1000)
    return out


def engine_linear(n: int, repeats: int = 5) -> dict[str, float]:
    from service_bundle_standard.bundle import all_components

    from core.engine import Graph, Registry, RunContext, run_flow

    reg = Registry.from_classes(all_components())
    data = linear(n)
    plain, build = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        Graph.build(data, reg)
        build.append(time.perf_counter() - t)
        t = time.perf_counter()
        result = run_flow(data, reg, RunContext(flow_id="f"), input_value="x")
        plain.append(time.perf_counter() - t)
        assert result.ok and result.answer() == "x"
    return {
        "build_ms": round(min(build) * 1000, 2),
        "run_ms": round(min(plain) * 1000, 2),
        "per_vertex_us": round(min(plain) / n * 1e6, 2),
    }


# --- memory -------------------------------------------------------------------------------------------------
def memory(b: Bench) -> dict[str, Any]:
    svc = run_service(b)
    url = svc.url(f"/api/v1/run/{svc.echo}")
    workers = svc.workers()
    load(url, 16, 60, body=svc.body, headers=svc.key, tool="python", max_requests=1000, workdir=b.work)
    before = {pid: rss_kib(pid) for pid in workers}
    done = load(url, 16, 300, body=svc.body, headers=svc.key, tool="python", max_requests=b.memory_runs, workdir=b.work)
    time.sleep(1.5)  # the batched writers drain
    after = {pid: rss_kib(pid) for pid in workers}
    growth = (sum(after.values()) - sum(before.values())) / max(1, sum(before.values()))
    print(
        f"memory   {done['requests']} runs: {sum(before.values())} -> {sum(after.values())} KiB ({growth:+.1%})",
        flush=True,
    )
    return {
        "runs": done["requests"],
        "errors": done["errors"],
        "rps": done["rps"],
        "before_kib": before,
        "after_kib": after,
        "growth": round(growth, 4),
    }


# --- data scale ---------------------------------------------------------------------------------------------
def datascale(b: Bench, flows_n: int = 10_000, messages_n: int = 1_000_000) -> dict[str, Any]:
    """Bulk-insert 10,000 flows and 1,000,000 messages (SQL, not HTTP), then time the paginated reads; on SQLite,
    and with ``--scale-out`` on PostgreSQL too (a database of its own, dropped after)."""
    svc = run_service(b)
    sqlite_url = f"sqlite:///{svc.env['SERVICE_CONFIG_DIR']}/service.db"
    if not (Path(svc.env["SERVICE_CONFIG_DIR"]) / "service.db").exists():
        raise RuntimeError(f"no SQLite database at {sqlite_url}")
    out = datascale_on(svc, sqlite_url, flows_n, messages_n)
    if b.scale_out:
        import psycopg

        admin = "postgresql://postgres@127.0.0.1:5432/postgres"
        name = b.scale_out["database_url"].rsplit("/", 1)[1] + "_reads"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
        pg = Service(b.work, name="reads-pg", SERVICE_DATABASE_URL=url)
        try:
            pg.wait()
            pg.setup()
            out["postgresql"] = datascale_on(pg, url, flows_n, messages_n)
        finally:
            pg.stop()
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    return out


def datascale_on(svc: Service, url: str, flows_n: int, messages_n: int) -> dict[str, Any]:
    import sqlalchemy as sa

    status, me = svc.api.call("GET", "/api/v1/users/whoami", headers=svc.bearer)
    assert status == 200, me
    user_id = uuid.UUID(me["id"])
    # a project of its own: the default one also holds what earlier scenarios made (the 1,000-node flows of
    # `flows`, the newest, so the first page was theirs: 62-67 ms of their JSON, 9 ms for the bulk flows')
    status, project = svc.api.call(
        "POST", "/api/v1/projects/", {"name": f"bench-datascale-{uuid.uuid4().hex[:8]}"}, svc.bearer
    )
    assert status == 201, project
    folder_id = uuid.UUID(project["id"])
    msg_flow = uuid.UUID(svc.create_flow("bench-messages", {"nodes": [], "edges": []}))
    postgres = url.startswith("postgresql")
    t0 = time.perf_counter()
    (insert_flows_messages_pg if postgres else insert_flows_messages)(
        url, user_id, folder_id, msg_flow, flows_n, messages_n
    )
    fill_s = time.perf_counter() - t0
    where = "PostgreSQL" if postgres else "SQLite"
    print(f"data     {where}: inserted {flows_n} flows and {messages_n} messages in {fill_s:.1f} s", flush=True)
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        # PostgreSQL: the visibility map too, as autovacuum leaves it after a bulk load (index-only scans)
        conn.exec_driver_sql("VACUUM ANALYZE" if postgres else "ANALYZE")
    engine.dispose()

    api = Client(svc.port)
    pages = (flows_n + 1) // 50
    random.seed(7)
    # cursors of random pages (each from an untimed offset request): the keyset form of the random page
    cursors = []
    for _ in range(40):
        offset = random.randrange(0, messages_n - 50, 50)
        status, _body, headers = api.call_headers(
            "GET", f"/api/v1/monitor/messages?flow_id={msg_flow}&limit=50&offset={offset}", headers=svc.bearer
        )
        cursor = headers.get("x-next-cursor")
        if status != 200 or not cursor:
            break  # code without cursors
        cursors.append(cursor)
    cases = {
        "flows_first_page": lambda: f"/api/v1/flows/?get_all=false&folder_id={folder_id}&page=1&size=50",
        "flows_random_page": lambda: (
            f"/api/v1/flows/?get_all=false&folder_id={folder_id}&page={random.randint(1, pages)}&size=50"
        ),
        "flows_headers_random_page": lambda: (
            f"/api/v1/flows/?get_all=false&header_flows=true&folder_id={folder_id}"
            f"&page={random.randint(1, pages)}&size=50"
        ),
        "project_random_page": lambda: f"/api/v1/projects/{folder_id}?page={random.randint(1, pages)}&size=50",
        "messages_first_page": lambda: f"/api/v1/monitor/messages?flow_id={msg_flow}&limit=50",
        "messages_newest_page": lambda: f"/api/v1/monitor/messages?flow_id={msg_flow}&order=DESC&limit=50",
        "messages_random_page": lambda: (
            f"/api/v1/monitor/messages?flow_id={msg_flow}&limit=50&offset={random.randrange(0, messages_n, 50)}"
        ),
        "messages_session_page": lambda: (
            f"/api/v1/monitor/messages?flow_id={msg_flow}&session_id=s-{random.randrange(1000)}&limit=50"
        ),
    }
    if cursors:
        cases["messages_random_page_cursor"] = lambda: (
            f"/api/v1/monitor/messages?flow_id={msg_flow}&limit=50&cursor={random.choice(cursors)}"
        )
    out: dict[str, Any] = {"flows": flows_n, "messages": messages_n, "fill_s": round(fill_s, 1)}
    for name, path in cases.items():
        times = []
        deadline = time.monotonic() + 20
        for i in range(33):
            t = time.perf_counter()
            status, body = api.call("GET", path(), headers=svc.bearer)
            assert status == 200, (name, body)
            if i >= 3:
                times.append((time.perf_counter() - t) * 1000)
            if time.monotonic() > deadline:
                break
        out[name] = summary(times)
        print(
            f"data     {where:<10} {name:<28} p50 {out[name]['p50_ms']:.2f} ms  p99 {out[name]['p99_ms']:.2f} ms",
            flush=True,
        )
    return out


def insert_flows_messages(
    url: str, user_id: uuid.UUID, folder_id: uuid.UUID, msg_flow: uuid.UUID, flows_n: int, messages_n: int
) -> None:
    """Rows straight into SQLite with ``executemany`` (SQLAlchemy's storage formats: hex UUIDs, naive UTC)."""
    import datetime as dt
    import sqlite3

    path = url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path, timeout=30)
    conn.execute("PRAGMA busy_timeout=30000")
    base = dt.datetime(2026, 1, 1)

    def stamp(i: int) -> str:
        return (base + dt.timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S.%f")

    data = json.dumps(linear(3))
    with conn:
        conn.executemany(
            "INSERT INTO flows_flow (id, user_id, folder_id, name, description, data, is_component, locked, "
            "webhook, mcp_enabled, access_type, flow_type, a2a_enabled, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0, 0, 'PRIVATE', 'workflow', 0, ?, ?)",
            (
                (uuid.uuid4().hex, user_id.hex, folder_id.hex, f"bulk flow {i}", "bulk", data, stamp(i), stamp(i))
                for i in range(flows_n)
            ),
        )
    chunk = 100_000
    for start_at in range(0, messages_n, chunk):
        with conn:
            conn.executemany(
                "INSERT INTO monitor_message (id, user_id, flow_id, run_id, timestamp, sender, sender_name, "
                "session_id, context_id, text, category, files, edit, error, duration, properties, "
                "content_blocks, session_metadata) VALUES (?, ?, ?, NULL, ?, ?, ?, ?, '', ?, 'message', '[]', 0, 0, "
                "NULL, '{}', '[]', '{}')",
                (
                    (
                        uuid.uuid4().hex,
                        user_id.hex,
                        msg_flow.hex,
                        stamp(i),
                        "User" if i % 2 == 0 else "Machine",
                        "User" if i % 2 == 0 else "AI",
                        f"s-{i % 1000}",
                        f"message number {i}",
                    )
                    for i in range(start_at, min(messages_n, start_at + chunk))
                ),
            )
    conn.close()


def insert_flows_messages_pg(
    url: str, user_id: uuid.UUID, folder_id: uuid.UUID, msg_flow: uuid.UUID, flows_n: int, messages_n: int
) -> None:
    """The same rows into PostgreSQL with ``COPY``."""
    import datetime as dt

    import psycopg

    base = dt.datetime(2026, 1, 1)
    data = json.dumps(linear(3))
    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as conn, conn.cursor() as cur:
        with cur.copy(
            "COPY flows_flow (id, user_id, folder_id, name, description, data, is_component, locked, webhook, "
            "mcp_enabled, access_type, flow_type, a2a_enabled, created_at, updated_at) FROM STDIN"
        ) as copy:
            for i in range(flows_n):
                stamp = base + dt.timedelta(seconds=i)
                flags = (False, False, False, False)  # is_component, locked, webhook, mcp_enabled
                rest = ("PRIVATE", "workflow", False, stamp, stamp)
                copy.write_row((uuid.uuid4(), user_id, folder_id, f"bulk flow {i}", "bulk", data, *flags, *rest))
        with cur.copy(
            "COPY monitor_message (id, user_id, flow_id, timestamp, sender, sender_name, session_id, context_id, "
            "text, category, files, edit, error, properties, content_blocks, session_metadata) FROM STDIN"
        ) as copy:
            for i in range(messages_n):
                user = i % 2 == 0
                sender = ("User", "User") if user else ("Machine", "AI")
                text = (f"s-{i % 1000}", "", f"message number {i}", "message", "[]")
                rest = (False, False, "{}", "[]", "{}")  # edit, error, properties, content_blocks, session_metadata
                copy.write_row((uuid.uuid4(), user_id, msg_flow, base + dt.timedelta(seconds=i), *sender, *text, *rest))
        conn.commit()


# --- build jobs -----------------------------------------------------------------------------------------------
def one_build(port: int, flow_id: str, bearer: dict[str, str], conn: http.client.HTTPConnection | None = None) -> float:
    """Job created (POST .../flow) to ``end`` delivered (streamed GET .../events), on one keep-alive connection
    (an in-process job lives in the worker that created it)."""
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    hdrs = {"Content-Type": "application/json", **bearer}
    t = time.perf_counter()
    conn.request(
        "POST",
        f"/api/v1/build/{flow_id}/flow?event_delivery=streaming",
        body=json.dumps({"inputs": {"input_value": "hi"}}),
        headers=hdrs,
    )
    response = conn.getresponse()
    raw = response.read()
    if response.status != 200:
        raise RuntimeError(f"build start: {response.status} {raw[:200]!r}")
    job = json.loads(raw)["job_id"]
    conn.request("GET", f"/api/v1/build/{job}/events", headers=bearer)
    response = conn.getresponse()
    body = response.read().decode()
    elapsed = time.perf_counter() - t
    frames = [json.loads(x) for x in body.split("\n\n") if x.strip()]
    events = [f.get("event") if isinstance(f, dict) else None for f in frames]
    if response.status != 200 or events[-1:] != ["end"]:
        raise RuntimeError(f"build events: {response.status} {body[-300:]!r}")
    return elapsed * 1000


def build_latency(svc: Service, flow_id: str, n: int) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=60)
    for _ in range(20):
        one_build(svc.port, flow_id, svc.bearer, conn)
    times = [one_build(svc.port, flow_id, svc.bearer, conn) for _ in range(n)]
    return summary(times)


def builds_in_flight(svc: Service, flow_id: str, sizes: tuple[int, ...], budget_s: float = 60.0) -> dict[str, Any]:
    """K clients each start a build at the same moment and read its events; the largest K with no error."""
    out: dict[str, Any] = {}
    best = 0
    deadline = time.monotonic() + budget_s
    for k in sizes:
        if time.monotonic() > deadline:
            break
        errors: list[str] = []
        times: list[float] = []
        barrier = threading.Barrier(k)
        lock = threading.Lock()

        def client(barrier=barrier, lock=lock, times=times, errors=errors) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=60)
            try:
                conn.connect()
                barrier.wait(30)
                ms = one_build(svc.port, flow_id, svc.bearer, conn)
                with lock:
                    times.append(ms)
            except Exception as exc:
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
            finally:
                conn.close()

        t = time.perf_counter()
        threads = [threading.Thread(target=client) for _ in range(k)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
        total = time.perf_counter() - t
        out[str(k)] = {
            "errors": len(errors),
            "first_errors": errors[:3],
            "total_s": round(total, 2),
            "p50_ms": round(pct(times, 50), 1),
            "p99_ms": round(pct(times, 99), 1),
        }
        print(f"build    {k} in flight: errors {len(errors)}, {total:.1f} s, p99 {pct(times, 99):.0f} ms", flush=True)
        if errors:
            break
        best = k
    out["max_without_errors"] = best
    return out


def build(b: Bench) -> dict[str, Any]:
    """In process (the SQLite service) and, with --scale-out, on RQ with 2 ``service worker`` processes."""
    svc = run_service(b)
    echo = svc.create_flow("bench-build", reference_flow("chat-echo.json")["data"])
    out: dict[str, Any] = {"inprocess": {"latency": build_latency(svc, echo, 300)}}
    s = out["inprocess"]["latency"]
    print(f"build    in-process: p50 {s['p50_ms']:.2f} ms  p99 {s['p99_ms']:.2f} ms", flush=True)
    out["inprocess"]["in_flight"] = builds_in_flight(svc, echo, (100, 500, 1000))
    if b.scale_out:
        with RQStack(b, workers=2) as stack:
            fid = stack.svc.create_flow("bench-build", reference_flow("chat-echo.json")["data"])
            out["rq"] = {"workers": 2, "worker_kind": stack.kind, "latency": build_latency(stack.svc, fid, 300)}
            s = out["rq"]["latency"]
            print(f"build    RQ: p50 {s['p50_ms']:.2f} ms  p99 {s['p99_ms']:.2f} ms", flush=True)
            out["rq"]["in_flight"] = builds_in_flight(stack.svc, fid, (100, 500))
    return out


# --- RQ stack (scale-out) ---------------------------------------------------------------------------------------
class RQStack:
    """``service run`` on PostgreSQL with the rq job backend, plus N ``service worker --simple`` processes."""

    kind = "simple"

    def __init__(self, b: Bench, workers: int) -> None:
        self.b = b
        self.n = workers
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> RQStack:
        b = self.b
        settings = {
            "SERVICE_DATABASE_URL": b.scale_out["database_url"],
            "SERVICE_REDIS_URL": b.scale_out["redis_url"],
            "SERVICE_JOB_BACKEND": "rq",
            "SERVICE_RATE_LIMIT_STORAGE_URI": "memory://",
        }
        self.svc = Service(b.work, name=f"rq{self.n}", **settings)
        self.svc.wait()
        self.svc.setup()
        script = Path(sys.executable).parent / "service"
        for i in range(self.n):
            self.procs.append(
                start([str(script), "worker", "--simple"], self.svc.env, b.work / f"rq{self.n}-worker{i}.log")
            )
        self.wait_workers()
        return self

    def wait_workers(self) -> None:
        import redis

        r = redis.Redis.from_url(self.b.scale_out["redis_url"])
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if len(r.smembers("rq:workers:service")) >= self.n:
                return
            time.sleep(0.1)
        raise RuntimeError("RQ workers did not start")

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            stop(proc)
        self.svc.stop()


def webhook(b: Bench, jobs: int = 1000, budget_s: float = 60.0) -> dict[str, Any]:
    """Webhook executions completed per second on RQ with 1 and 2 workers (needs --scale-out)."""
    if not b.scale_out:
        return {"skipped": "needs --scale-out (PostgreSQL, Redis, RQ workers)"}
    import redis

    r = redis.Redis.from_url(b.scale_out["redis_url"], decode_responses=True)
    stats = "service:jobs:service:stats"
    out: dict[str, Any] = {}
    for n in (1, 2):
        with RQStack(b, workers=n) as stack:
            svc = stack.svc
            fid = svc.create_flow(f"bench-webhook-{n}", reference_flow("webhook-parser-chat.json")["data"])
            path = f"/api/v1/webhook/{fid}"
            body = json.dumps({"any": "payload", "n": 1}).encode()
            # warm-up: 20 executions
            before = _done(r, stats)
            for _ in range(20):
                status, _ = svc.api.call("POST", path, json.loads(body), svc.key)
                assert status == 202
            _wait_done(r, stats, before + 20, 60)
            before = _done(r, stats)
            failed_before = int(r.hget(stats, "failed") or 0)
            t = time.perf_counter()
            sent = load(
                svc.url(path), 8, budget_s, body=body, headers=svc.key, tool="python", max_requests=jobs, workdir=b.work
            )
            enqueued_s = time.perf_counter() - t
            finished = _wait_done(r, stats, before + sent["ok"], budget_s)
            total = time.perf_counter() - t
            done = finished - before
            failed = int(r.hget(stats, "failed") or 0) - failed_before
            out[f"workers_{n}"] = {
                "sent": sent["requests"],
                "accepted": sent["ok"],
                "completed": done,
                "failed": failed,
                "enqueue_s": round(enqueued_s, 2),
                "total_s": round(total, 2),
                "per_second": round(done / total, 1),
                "enqueue_p99_ms": sent["p99_ms"],
            }
            print(
                f"webhook  {n} worker(s): {done} completed ({failed} failed) in {total:.1f} s = "
                f"{done / total:.0f}/s (enqueue {enqueued_s:.1f} s)",
                flush=True,
            )
    return out


def _done(r: Any, stats: str) -> int:
    values = r.hmget(stats, "finished", "failed", "cancelled")
    return sum(int(v or 0) for v in values)


def _wait_done(r: Any, stats: str, target: int, budget_s: float) -> int:
    end = time.monotonic() + budget_s
    while time.monotonic() < end:
        done = _done(r, stats)
        if done >= target:
            return done
        time.sleep(0.005)
    return _done(r, stats)


from bench.models import agent, responses  # noqa: E402, F401  (scenarios of the models bundle and responses plugin)
from bench.otel_export import otel  # noqa: E402, F401  (issue 30: OTLP export and tracing-off cost)
