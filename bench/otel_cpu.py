# ruff: noqa: S603, S607  (starts its own children, valgrind and callgrind_control: fixed argv, no shell)
"""``python -m bench.otel_cpu [--runs N] [--rounds R] [--profile FILE] [--code DIR]``: the export's CPU per run.

Wall-clock throughput on this shared 2-core VM moves by 10-50% from minute to minute; the CPU a run costs the
serving process moves much less. This builds the app (every installed plugin, SQLite, a temporary config
directory) in a child process, runs the simple run (Chat Input -> Chat Output, ``POST /api/v1/run/<id>``)
through the WSGI test client, and reads the process's CPU time (every thread: the batch span processor's
export, the group commit's writer) per run: with OTLP export to ``bench/otlp_sink.py`` (its own process,
decoding every batch) and without an endpoint, alternated ``--rounds`` times. The spans of the measured runs
are exported (``force_flush``) inside the measure, so their encoding is counted.

``--profile FILE``: one more child with export on, the measured runs under cProfile (pstats written to FILE).
``--code DIR``: another checkout's code (a ``git archive`` copy) measured the same way, alternated with this one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, clean_env, code_path, free_port, start, stop, wait_http


def child(runs: int, profile: str) -> None:
    """In the measured process: the app, the flow, ``runs`` measured runs; prints one JSON line."""
    os.environ["SERVICE_ENV_FILE"] = os.devnull
    from bench.common import in_process_run
    from core.app import create_app

    app = create_app(config={"config_dir": tempfile.mkdtemp(prefix="otel-cpu-"), "log_level": "warning"})

    from flask.testing import FlaskClient

    class Closing(FlaskClient):  # reads and closes every answer, as a WSGI server does (the server span ends)
        def open(self, *args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("buffered", True)
            return super().open(*args, **kwargs)

    app.test_client_class = Closing
    client = app.test_client()
    url, body, key = in_process_run(client)
    from service_observability import otel

    if os.environ.get("BENCH_SPANS_NOT_EXPORTED"):  # a variant: spans made and batched, never encoded
        from opentelemetry.sdk.trace.export import SpanExportResult

        for processor in otel.tracer_provider()._active_span_processor._span_processors:
            processor._batch_processor._exporter.export = lambda spans: SpanExportResult.SUCCESS
    for _ in range(int(os.environ.get("BENCH_WARMUP", "300"))):
        client.post(url, data=body, headers=key, content_type="application/json")
    otel.flush()
    from core import batches

    flush_writers = getattr(batches, "flush_all", None)
    if flush_writers is not None:
        flush_writers()
    counting = bool(os.environ.get("BENCH_CALLGRIND"))
    if counting:  # under callgrind (``--count``): instructions from here to the end of the measure
        import subprocess as sp

        sp.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True, check=True)
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(runs):
        response = client.post(url, data=body, headers=key, content_type="application/json")
        assert response.status_code == 200
    otel.flush()
    if flush_writers is not None:
        flush_writers()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if counting:
        sp.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True, check=True)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    print(json.dumps({"cpu_ms": cpu / runs * 1000, "wall_ms": wall / runs * 1000}), flush=True)


def measure(code: Path, runs: int, env: dict[str, str], profile: str = "", count: bool = False) -> dict[str, float]:
    env = {**env, "PYTHONPATH": code_path(code)}
    wrap: list[str] = []
    out_dir = Path(tempfile.mkdtemp(prefix="otel-cg-"))
    if count:
        # the periodic work (the metric reader, the batch processor's timer) at a rate set by the wall clock,
        # which valgrind and the machine's load stretch: off, so batches are exported when 512 spans are
        # queued and at the measure's end, as at a real rate (hundreds of runs a second)
        env = {"OTEL_METRIC_EXPORT_INTERVAL": "3600000", "OTEL_BSP_SCHEDULE_DELAY": "3600000", **env}
        env["BENCH_CALLGRIND"] = "1"
        wrap = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out_dir}/cg.%p"]
    out = subprocess.run(
        [*wrap, sys.executable, "-m", "bench.otel_cpu", "--child", "--runs", str(runs), "--profile", profile],
        env=env,
        cwd=code,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if count:
        total = 0
        for name in out_dir.glob("cg.*"):
            with open(name, errors="replace") as handle:
                total += next((int(line.split()[1]) for line in handle if line.startswith("totals:")), 0)
        got["m_instructions"] = total / runs / 1e6
    shutil.rmtree(out_dir, ignore_errors=True)
    return got


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", default="")
    parser.add_argument("--code", type=Path, action="append", default=[])
    parser.add_argument("--child", action="store_true")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        choices=["no-metrics", "no-traces", "not-exported", "sampled-out", "exemplars", "big-batches"],
        help="more children: export on without metrics, without traces, spans not encoded, sampled out",
    )
    parser.add_argument("--count", action="store_true", help="instructions (callgrind) instead of CPU time")
    parser.add_argument("--only-on", action="store_true", help="measure export on only")
    args = parser.parse_args()
    if args.child:
        child(args.runs, args.profile)
        return
    sink_port = free_port()
    work = Path(tempfile.mkdtemp(prefix="otel-cpu-"))
    sink = start([sys.executable, "-m", "bench.otlp_sink", str(sink_port)], clean_env(), work / "sink.log")
    try:
        wait_http(sink_port, "/count")
        off = clean_env()
        on = clean_env(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{sink_port}", OTEL_SERVICE_NAME="bench")
        codes = [ROOT, *args.code]
        figures: dict[str, list[float]] = {}
        variants = [("off", off), ("on", on)]
        for name in args.variant:
            if name == "no-metrics":
                variants.append((name, {**on, "OTEL_METRICS_EXPORTER": "none"}))
            elif name == "no-traces":
                variants.append((name, {**on, "OTEL_TRACES_EXPORTER": "none"}))
            elif name == "not-exported":
                variants.append((name, {**on, "BENCH_SPANS_NOT_EXPORTED": "1"}))
            elif name == "sampled-out":
                variants.append((name, {**on, "OTEL_TRACES_SAMPLER": "always_off"}))
            elif name == "exemplars":
                variants.append((name, {**on, "OTEL_METRICS_EXEMPLAR_FILTER": "trace_based"}))
            elif name == "big-batches":
                variants.append((name, {**on, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "2048"}))
        unit = "M instructions" if args.count else "ms CPU"
        for _ in range(args.rounds):
            for code in codes:
                for label, env in variants:
                    if (label == "off" and args.only_on) or (code != ROOT and label not in ("off", "on")):
                        continue  # another checkout: export off and on only
                    name = f"{code.name}:{label}"
                    got = measure(code, args.runs, env, count=args.count)
                    figure = got["m_instructions"] if args.count else got["cpu_ms"]
                    figures.setdefault(name, []).append(round(figure, 3))
                    print(f"{name:<24} {figure:.3f} {unit} per run (wall {got['wall_ms']:.3f} ms)", flush=True)
        if args.profile:
            measure(ROOT, args.runs, on, args.profile)
    finally:
        stop(sink)
    for name, values in figures.items():
        print(f"{name:<24} median {statistics.median(values):.3f} {unit}  {values}")
    for code in codes:
        o, n = figures.get(f"{code.name}:off"), figures.get(f"{code.name}:on")
        if o and n:
            print(f"{code.name}: export adds {statistics.median(n) / statistics.median(o) - 1:+.1%} per run")


if __name__ == "__main__":
    main()
