"""``python -m bench otel``: what observability costs the simple run (issue 30's performance targets).

* **Export on** (target: at least 90% of the throughput): two ``service run`` (2 gevent workers each, SQLite,
  in-process jobs, every installed plugin), one exporting spans over OTLP/HTTP to a local receiver
  (``bench/otlp_sink.py``, its own process, which decodes every batch with the real protobuf messages) and
  one without an endpoint. The simple run (Chat Input -> Chat Output, ``POST /api/v1/run/<id>``) at c=16,
  the two alternated for ``rounds`` rounds so both see the same machine; the figure is the ratio of the
  medians. The receiver's count of ``flow.execute`` spans shows the export really happened.
* **Tracing off** (target: within 1%): ``bench.served_instructions`` (callgrind, one worker, ``runs`` runs)
  with the observability plugin switched off (``SERVICE_DISABLED_PLUGINS=observability``) and with it loaded
  and tracing off (no endpoint, ``SERVICE_NATIVE_TRACING=false``; native traces, on by default, are a feature
  with a cost of their own, docs/observability.md): instruction counts, independent of the machine's load.

Throughput on this shared 2-core VM moves by 10-30% from minute to minute, so one ratio is noisy; the
instruction counts are not. Beside each throughput figure: the service's CPU per request (master and workers,
``/proc``), and the receiver's apart; ``cpu_fraction`` (CPU per request off / on) is what the throughput ratio
tends to on a machine the service saturates.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

from bench.common import ROOT, Client, Service, clean_env, code_path, free_port, load, start, stop, wait_http


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds these processes have used so far (``/proc/<pid>/stat``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / tick


def _counts(port: int) -> dict[str, int]:
    _, counts = Client(port).call("GET", "/count")
    return dict(counts)


def otel(b: Any, rounds: int = 2, runs: int = 400, instructions: bool = True) -> dict[str, Any]:
    sink_port = free_port()
    sink = start(
        [sys.executable, "-m", "bench.otlp_sink", str(sink_port)],
        {**clean_env(), "PYTHONPATH": code_path(ROOT)},
        b.work / "otlp-sink.log",
    )
    off = on = None
    try:
        wait_http(sink_port, "/count")
        # this checkout's plugins and bundles on the path: a git worktree runs its own code too
        off = Service(b.work, name="otel-off", code=ROOT)
        on = Service(
            b.work,
            name="otel-on",
            code=ROOT,
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{sink_port}",
            OTEL_SERVICE_NAME="service-bench",
        )
        for svc in (off, on):
            svc.wait()
            svc.setup()
        rps: dict[str, list[float]] = {"off": [], "on": []}
        # the service's CPU per request (master and workers; the sink's apart): the load-independent side
        cpu_ms: dict[str, list[float]] = {"off": [], "on": [], "sink": []}
        exported = 0
        for _ in range(rounds):  # alternated, so both see the same machine state
            for label, svc in (("off", off), ("on", on)):
                url = svc.url(f"/api/v1/run/{svc.echo}")
                headers = {**svc.key, "Content-Type": "application/json"}
                load(url, 16, b.warmup, body=svc.body, headers=headers, tool=b.tool, workdir=b.work)
                before = _counts(sink_port)["flow_execute"]
                pids = [svc.proc.pid, *svc.workers()]
                cpu, sink_cpu = cpu_seconds(pids), cpu_seconds([sink.pid])
                figures = load(url, 16, b.duration, body=svc.body, headers=headers, tool=b.tool, workdir=b.work)
                if label == "on":
                    time.sleep(1.0)  # the batch span processor exports every 5 s or 512 spans
                    exported += _counts(sink_port)["flow_execute"] - before
                requests = max(1, int(figures["requests"]))
                cpu_ms[label].append(round((cpu_seconds(pids) - cpu) / requests * 1000, 3))
                if label == "on":
                    cpu_ms["sink"].append(round((cpu_seconds([sink.pid]) - sink_cpu) / requests * 1000, 3))
                rps[label].append(float(figures["rps"]))
                print(
                    f"otel {label:<3} c=16 {figures['rps']:>8} req/s  p50 {figures['p50_ms']:.2f} ms  "
                    f"service CPU {cpu_ms[label][-1]:.3f} ms per request",
                    flush=True,
                )
        counts = _counts(sink_port)
    finally:
        for svc in (off, on):
            if svc is not None:
                svc.stop()
        stop(sink)
    ratio = statistics.median(rps["on"]) / statistics.median(rps["off"]) if rps["off"] else 0.0
    result: dict[str, Any] = {
        "run_rps_without_export": rps["off"],
        "run_rps_with_export": rps["on"],
        "export_fraction": round(ratio, 3),
        "service_cpu_ms_per_request": cpu_ms,
        "cpu_fraction": round(statistics.median(cpu_ms["off"]) / statistics.median(cpu_ms["on"]), 3)
        if cpu_ms["on"] and cpu_ms["off"]
        else None,
        "runs_exported_while_measured": exported,
        "receiver": counts,
        "spans_per_run": round(counts["spans"] / counts["flow_execute"], 1) if counts["flow_execute"] else None,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    print(
        f"otel export on / off (c=16) {ratio:.3f}; receiver {counts}; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    if instructions:
        result["instructions"] = tracing_off_instructions(runs)
    return result


def tracing_off_instructions(runs: int = 400) -> dict[str, Any]:
    """Instructions per served run without the plugin, and with it loaded and tracing off (no endpoint, native
    traces off: ``SERVICE_NATIVE_TRACING=false``), by callgrind."""
    from bench import served_instructions

    without = served_instructions.count(ROOT, runs, settings={"DISABLED_PLUGINS": "observability"})
    plugin_on = served_instructions.count(ROOT, runs, settings={"NATIVE_TRACING": "false"})
    difference = (plugin_on - without) / without
    print(
        f"otel tracing off: {without:.2f} M instructions per run without the plugin, {plugin_on:.2f} M with it "
        f"(no endpoint, native traces off): {difference:+.2%}",
        flush=True,
    )
    return {
        "runs": runs,
        "without_plugin_m": round(without, 3),
        "plugin_no_endpoint_m": round(plugin_on, 3),
        "difference": round(difference, 4),
    }


if __name__ == "__main__":  # python -m bench.otel_export: the throughput part only, printed
    import tempfile
    from pathlib import Path

    from bench.common import pick_tool

    class _B:
        work = Path(tempfile.mkdtemp(prefix="otel-bench-"))
        tool = pick_tool("auto")
        warmup = 1.0
        duration = 5.0

    print(json.dumps(otel(_B(), instructions="--instructions" in sys.argv), indent=2))
