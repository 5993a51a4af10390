# ruff: noqa: S607  (git and psql-free set-up: fixed argv, no shell)
"""``python -m bench``: every scenario of issue 7 against a real ``service run``; writes the results.

Order: start-up; the shared SQLite service (run, ceiling measured right after it under the same
conditions, bigger flows, build jobs, data scale, memory); then, with ``--scale-out``, the RQ stacks
(PostgreSQL + Redis + ``service worker`` processes) for builds on RQ and webhooks. Every step is bounded
in count and time; all traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import scenarios
from bench.common import HERE, ROOT, machine, pick_tool

ALL = (
    "startup",
    "run",
    "ceiling",
    "workflows",
    "flows",
    "build",
    "datascale",
    "memory",
    "webhook",
    "catalog",
    "agent",
    "responses",
    "otel",
)
#: overridable so two checkouts on one machine do not share (and drop) each other's bench database
BENCH_DB = os.environ.get("SERVICE_BENCH_DB", "service_bench")
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
REDIS_DB = int(os.environ.get("SERVICE_BENCH_REDIS_DB", "9"))

TARGETS: list[tuple[str, str, Any]] = [
    # (name, how it is read from the results, target)
    ("start-up < 2 s", "startup.warm_s", ("<", 2.0)),
    ("idle RSS < 100 MB per worker", "startup.idle_rss_mib_max", ("<", 100.0)),
    ("run c=16 >= 1,000 req/s", "run.steps.16.rps", (">=", 1000.0)),
    ("run c=16 >= 20% of the ceiling", "fraction.16", (">=", 0.20)),
    ("run c=16 p99 < 50 ms", "run.steps.16.p99_ms", ("<", 50.0)),
    ("1,000-component flow < 150 ms", "flows.linear_1000.p50_ms", ("<", 150.0)),
    ("build p50 < 15 ms in process", "build.inprocess.latency.p50_ms", ("<", 15.0)),
    ("build p50 < 40 ms on RQ", "build.rq.latency.p50_ms", ("<", 40.0)),
    ("500 builds in flight, no error", "build.inprocess.in_flight.max_without_errors", (">=", 500)),
    (">= 300 webhooks/s on RQ, 2 workers", "webhook.workers_2.per_second", (">=", 300.0)),
    ("v2 sync >= 90% of the run (c=16, same run)", "workflows.v2_fraction_of_run", (">=", 0.90)),
    ("first AG-UI frame p50 < 5 ms", "workflows.first_agui_frame.p50_ms", ("<", 5.0)),
    ("paginated reads p50 < 20 ms", "datascale.worst_p50_ms", ("<", 20.0)),
    ("memory growth < 10% over 10,000 runs", "memory.growth", ("<", 0.10)),
    ("GET /api/v1/all p50 < 5 ms (full catalog, gzip)", "catalog.all_gzip.p50_ms", ("<", 5.0)),
    ("start-up growth of the catalog bundles < 100 ms (min)", "catalog.startup.difference_min_ms", ("<", 100.0)),
    ("run c=16 with OTLP export >= 90% of without", "otel.export_fraction", (">=", 0.90)),
    ("tracing off: instructions within 1% of no plugin", "otel.instructions.difference", ("<", 0.01)),
]


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


# --- scale-out resources ---------------------------------------------------------------------------------------
@contextlib.contextmanager
def scale_out_resources():
    """A fresh ``service_bench`` PostgreSQL database and a Redis db of our own (emptied of our keys after)."""
    import psycopg
    import redis

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {BENCH_DB}")
    r = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
    if r.dbsize():
        raise SystemExit(f"Redis db {REDIS_DB} is not empty: it is reserved for the bench, clear it first")
    try:
        yield {
            "database_url": f"postgresql+psycopg://postgres@127.0.0.1:5432/{BENCH_DB}",
            "redis_url": f"redis://127.0.0.1:6379/{REDIS_DB}",
        }
    finally:
        for pattern in ("service:*", "rq:*"):  # only what the service and RQ wrote in our db
            keys = list(r.scan_iter(match=pattern, count=1000))
            for i in range(0, len(keys), 500):
                r.delete(*keys[i : i + 500])
        with (
            contextlib.suppress(Exception),
            psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn,
        ):
            conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")


# --- the run --------------------------------------------------------------------------------------------------
def main(
    only: tuple[str, ...] = ALL,
    *,
    scale_out: bool = False,
    tool: str = "auto",
    duration: float = 5.0,
    warmup: float = 1.0,
    memory_runs: int = 10_000,
    write: bool = True,
) -> dict[str, Any]:
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="service-bench-"))
    b = scenarios.Bench(work=work, tool=pick_tool(tool), duration=duration, warmup=warmup, memory_runs=memory_runs)
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
        "tool": b.tool,
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "plugins": installed_plugins(),
        "scale_out": scale_out,
        "settings": {
            "server": "service run (gunicorn, gevent, 2 workers)",
            "database": "SQLite",
            "jobs": "in-process",
            "duration_s": duration,
            "warmup_s": warmup,
        },
    }
    print(f"bench: {b.tool}, work dir {work}, scenarios {', '.join(only)}", flush=True)
    order = [name for name in ALL if name in only]
    stack = scale_out_resources() if scale_out else contextlib.nullcontext({})
    try:
        with stack as resources:
            b.scale_out = dict(resources)
            for name in order:
                t = time.monotonic()
                try:
                    results[name] = getattr(scenarios, name)(b)
                except Exception as exc:  # one failing scenario must not lose the others' figures
                    results[name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
                    print(f"{name}: FAILED {results[name]['error']}", flush=True)
                results[name + "_seconds"] = round(time.monotonic() - t, 1)
    finally:
        svc = b.shared.get("service")
        if svc is not None:
            svc.stop()
    results["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    results["total_seconds"] = round(time.monotonic() - started, 1)
    derive(results)
    if write:
        path = HERE / "results.json"
        if set(order) != set(ALL) and path.exists():  # some scenarios: keep the others' last figures
            merged = json.loads(path.read_text())
            for k in order:
                merged[k] = results[k]
                merged.setdefault("updated", {})[k] = results["date"]
            merged["updated_loadavg"] = results["loadavg_end"]
            results = merged
            derive(results)
        path.write_text(json.dumps(results, indent=2) + "\n")
        (HERE / "RESULTS.md").write_text(report(results))
        print(f"wrote {path} and {HERE / 'RESULTS.md'}")
    print(f"bench: {results['total_seconds']} s in all", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return results


def derive(r: dict[str, Any]) -> None:
    """Figures computed from others: fraction of the ceiling, worst paginated p50, target checks."""
    run, ceil = r.get("run", {}).get("steps", {}), r.get("ceiling", {}).get("steps", {})
    r["fraction"] = {n: round(run[n]["rps"] / ceil[n]["rps"], 3) for n in run if n in ceil and ceil[n]["rps"]}
    st = r.get("startup", {})
    if st.get("idle_rss_kib_per_worker"):
        st["idle_rss_mib_max"] = round(max(st["idle_rss_kib_per_worker"]) / 1024, 1)
    ds = r.get("datascale", {})
    p50s = [v["p50_ms"] for v in ds.values() if isinstance(v, dict) and "p50_ms" in v]
    p50s += [v["p50_ms"] for v in ds.get("postgresql", {}).values() if isinstance(v, dict) and "p50_ms" in v]
    if p50s:
        ds["worst_p50_ms"] = max(p50s)
    r["targets"] = {}
    for name, where, (op, target) in TARGETS:
        value = lookup(r, where)
        met = None if value is None else (value < target if op == "<" else value >= target)
        r["targets"][name] = {"value": value, "target": f"{op} {target}", "met": met}


def lookup(r: dict[str, Any], where: str) -> Any:
    node: Any = r
    for part in where.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


# --- RESULTS.md -------------------------------------------------------------------------------------------------
def fmt(value: Any) -> str:
    if value is None:
        return "not measured"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1 else f"{value:,.1f}"
    return str(value)


def report(r: dict[str, Any]) -> str:
    m = r["machine"]
    lines = [
        "# Benchmark results",
        "",
        f"* Date: {r['date']}; commit `{r['commit']}`; `make bench` took {r.get('total_seconds', '?')} s",
        f"* Machine: {m['cpu']}, {m['cores']} cores, {m['memory']}; {m['system']}; Python {m['python']}",
        f"* Load average (1/5/15 min) at start {r['loadavg_start']}, at end {r['loadavg_end']}: other work "
        "shares these 2 cores, so compare each figure with the ceiling measured in the same run.",
        f"* Server: `service run` (gunicorn, gevent, 2 workers), SQLite, in-process jobs; plugins: "
        f"{', '.join(r['plugins'])}. Scale-out (PostgreSQL, Redis, RQ `service worker --simple`): "
        f"{'on' if r.get('scale_out') else 'off (run with --scale-out)'}.",
        f"* Load generator: `{r['tool']}` on the same machine (it shares the 2 cores), keep-alive, "
        f"{r['settings']['warmup_s']} s warm-up then {r['settings']['duration_s']} s per step.",
    ]
    if r.get("updated"):
        lines.append(
            "* Re-measured after the full run: "
            + ", ".join(f"{k} at {v}" for k, v in r["updated"].items())
            + f"; load average then {r.get('updated_loadavg')}."
        )
    lines += [
        "",
        "## Targets",
        "",
        "| target | measured | met |",
        "|---|---|---|",
    ]
    for name, t in r.get("targets", {}).items():
        met = {True: "yes", False: "**no**", None: "-"}[t["met"]]
        lines.append(f"| {name} | {fmt(t['value'])} | {met} |")
    lines += ["", "## Figures", ""]
    lines += section_run(r) + section_startup(r) + section_flows(r) + section_build(r)
    lines += section_webhook(r) + section_datascale(r) + section_memory(r) + section_catalog(r)
    notes = HERE / "NOTES.md"
    if notes.exists():
        lines += ["", notes.read_text().strip()]
    profile = HERE / "profile.txt"
    if profile.exists():
        text = profile.read_text()
        head = text.split("== by cumulative time ==")[0].strip().splitlines()
        lines += [
            "",
            "## Profile of the hot path (`python -m bench profile`, top entries by own time)",
            "",
            "```",
            *head[:40],
            "```",
        ]
    lines += [
        "",
        "Raw figures: `bench/results.json`. Reproduce: `make bench` (all, with `--scale-out`), "
        "`python -m bench <scenario>` for one, `python -m bench profile` for the profile.",
        "",
    ]
    return "\n".join(lines)


def section_run(r: dict[str, Any]) -> list[str]:
    run, ceil = r.get("run", {}).get("steps"), r.get("ceiling", {}).get("steps")
    if not run:
        return []
    out = [
        "### Run and ceiling",
        "",
        '`POST /api/v1/run/{id}` `{"input_value": "hello", ...}` with `x-api-key`, Chat Input -> Chat Output '
        "(catalog nodes), message storage on. Ceiling: a bare Flask `POST /ping` answering "
        f"{r.get('ceiling', {}).get('response_bytes', '?')} bytes (as many as the run), same gunicorn options.",
        "",
        "| clients | run req/s | p50 ms | p99 ms | errors | ceiling req/s | ceiling p50 ms | ceiling p99 ms "
        "| fraction |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, x in run.items():
        c = (ceil or {}).get(n, {})
        out.append(
            f"| {n} | {x['rps']:.0f} | {x['p50_ms']:.2f} | {x['p99_ms']:.2f} | {x['errors']} | "
            f"{c.get('rps', 0):.0f} | {c.get('p50_ms', 0):.2f} | {c.get('p99_ms', 0):.2f} | "
            f"{r['fraction'].get(n, 0):.0%} |"
        )
    return [*out, ""]


def section_startup(r: dict[str, Any]) -> list[str]:
    s = r.get("startup")
    if not s or "error" in s:
        return [f"### Start-up\n\n{s}\n"] if s else []
    return [
        "### Start-up",
        "",
        f"* `service run` to the first `200` from `/health`: cold (empty config dir: migrations, superuser) "
        f"**{s['cold_s']} s**, warm restart **{s['warm_s']} s** (runs {s['warm_runs_s']}).",
        f"* Idle workers: RSS {[k // 1024 for k in s['idle_rss_kib_per_worker']]} MiB, PSS "
        f"{[k // 1024 for k in s['idle_pss_kib_per_worker']]} MiB (pages shared with the preloading master "
        f"count once in PSS); master RSS {s['master_rss_kib'] // 1024} MiB.",
        "",
    ]


def section_flows(r: dict[str, Any]) -> list[str]:
    f = r.get("flows")
    if not f or "error" in f:
        return [f"### Bigger flows\n\n{f}\n"] if f else []
    out = [
        "### Bigger flows (one client, over HTTP)",
        "",
        "Linear: Chat Input -> n-2 Pass -> Chat Output. Fan-out: Chat Input feeding n-2 Pass side by side, "
        "the last one feeding Chat Output.",
        "",
        "| flow | components | p50 ms | p99 ms | per component µs (p50) |",
        "|---|---|---|---|---|",
    ]
    for shape in ("linear", "fanout"):
        for n in (10, 100, 1000):
            x = f.get(f"{shape}_{n}")
            if x:
                out.append(f"| {shape} | {n} | {x['p50_ms']:.2f} | {x['p99_ms']:.2f} | {x['per_component_us']} |")
    e = f.get("engine_linear_1000", {})
    if e:
        out += [
            "",
            f"In process, 1,000-node linear flow: graph build {e['build_ms']} ms, run {e['run_ms']} ms "
            f"({e['per_vertex_us']} µs per vertex).",
        ]
    return [*out, ""]


def section_build(r: dict[str, Any]) -> list[str]:
    bld = r.get("build")
    if not bld or "error" in bld:
        return [f"### Build jobs\n\n{bld}\n"] if bld else []
    out = [
        "### Build jobs",
        "",
        "Job created (`POST /api/v1/build/{id}/flow?event_delivery=streaming`) to `end` delivered (streamed "
        "`GET /api/v1/build/{job}/events`), Chat Input -> Chat Output, one client, 300 builds after 20.",
        "",
        "| backend | p50 ms | p90 ms | p99 ms | in flight without error |",
        "|---|---|---|---|---|",
    ]
    for name, label in (("inprocess", "in-process (SQLite)"), ("rq", "RQ, 2 `service worker --simple` (PostgreSQL)")):
        x = bld.get(name)
        if x:
            lat = x["latency"]
            flight = x.get("in_flight", {})
            detail = ", ".join(
                f"{k}: {v['errors']} errors in {v['total_s']} s" for k, v in flight.items() if isinstance(v, dict)
            )
            out.append(
                f"| {label} | {lat['p50_ms']:.2f} | {lat['p90_ms']:.2f} | {lat['p99_ms']:.2f} | "
                f"{flight.get('max_without_errors', '-')} ({detail}) |"
            )
    if "rq" not in bld:
        out.append("| RQ | not measured (run with `--scale-out`) | | | |")
    return [*out, ""]


def section_webhook(r: dict[str, Any]) -> list[str]:
    w = r.get("webhook")
    if not w:
        return []
    if "skipped" in w or "error" in w:
        return ["### Webhook", "", f"Not measured: {w.get('skipped') or w.get('error')}", ""]
    out = [
        "### Webhook (RQ)",
        "",
        "`POST /api/v1/webhook/{id}` (the Webhook -> Parser -> Chat Output reference flow) from 8 clients; "
        "executions counted in the job backend's Redis counters until all are done.",
        "",
        "| workers | accepted | completed | failed | executions/s | enqueue p99 ms |",
        "|---|---|---|---|---|---|",
    ]
    for n in (1, 2):
        x = w.get(f"workers_{n}")
        if x:
            out.append(
                f"| {n} | {x['accepted']} | {x['completed']} | {x['failed']} | {x['per_second']} | "
                f"{x['enqueue_p99_ms']} |"
            )
    return [*out, ""]


def section_datascale(r: dict[str, Any]) -> list[str]:
    d = r.get("datascale")
    if not d or "error" in d:
        return [f"### Data scale\n\n{d}\n"] if d else []
    out = [
        "### Data scale (SQLite; PostgreSQL with --scale-out)",
        "",
        f"{d['flows']:,} flows in one project and {d['messages']:,} messages of one flow (1,000 sessions), "
        f"inserted with SQL in {d['fill_s']} s; pages of 50, one client, 30 requests each (random pages).",
        "",
        "| read | p50 ms | p99 ms |",
        "|---|---|---|",
    ]
    pg = d.get("postgresql") if isinstance(d.get("postgresql"), dict) else {}
    if pg:
        out[-2:] = [
            "| read | SQLite p50 ms | SQLite p99 ms | PostgreSQL p50 ms | PostgreSQL p99 ms |",
            "|---|---|---|---|---|",
        ]
    for k, v in d.items():
        if isinstance(v, dict) and "p50_ms" in v:
            row = f"| {k} | {v['p50_ms']:.2f} | {v['p99_ms']:.2f} |"
            if pg:
                w = pg.get(k) or {}
                row += f" {w.get('p50_ms', float('nan')):.2f} | {w.get('p99_ms', float('nan')):.2f} |"
            out.append(row)
    return [*out, ""]


def section_memory(r: dict[str, Any]) -> list[str]:
    x = r.get("memory")
    if not x or "error" in x:
        return [f"### Memory\n\n{x}\n"] if x else []
    return [
        "### Memory",
        "",
        f"RSS of the 2 workers over {x['runs']:,} runs (after 1,000 warm-up runs, 16 clients, {x['rps']} req/s): "
        f"{sum(x['before_kib'].values()) // 1024} MiB -> {sum(x['after_kib'].values()) // 1024} MiB "
        f"(**{x['growth']:+.1%}**), errors {x['errors']}.",
        "",
    ]


def section_catalog(r: dict[str, Any]) -> list[str]:
    x = r.get("catalog")
    if not x or "error" in x:
        return [f"### Catalog\n\n{x}\n"] if x else []
    g, p, i, st = x["all_gzip"], x["all_plain"], x.get("all_gzip_in_process") or {}, x["startup"]
    return [
        "### Catalog",
        "",
        f"`GET /api/v1/all` ({p.get('components')} components, cached per registry snapshot), one keep-alive client: "
        f"gzip p50 **{g['p50_ms']} ms**, p99 {g['p99_ms']} ms ({g['bytes']:,} B); plain p50 {p['p50_ms']} ms "
        f"({p['bytes']:,} B); in process (Flask test client) p50 {i.get('p50_ms')} ms, min {i.get('min_ms')} ms.",
        f"Start-up (5 alternated): every bundle median {st['all_bundles_s']} s (min {st.get('all_bundles_min_s')} s), "
        f"catalog bundles off {st['without_catalog_s']} s (min {st.get('without_catalog_min_s')} s); bundle imports "
        f"(fresh interpreter, after `core.engine`): {x['bundle_import_ms']} ms.",
        "",
    ]
