"""The ``catalog`` scenario: ``GET /api/v1/all`` with the full catalog, and what the extra bundles cost at start-up.

* ``all_gzip``: one keep-alive client, sequential ``GET /api/v1/all`` with ``Accept-Encoding: gzip`` (the
  cached gzip body of the registry snapshot), p50/p99 and bytes; ``all_plain`` the same without gzip.
* ``all_gzip_in_process``: the same through the Flask test client in the bench process (the server's cost alone).
* ``startup``: warm start (``/health`` answering) of ``service run`` with every bundle and with the catalog's
  bundles disabled (``SERVICE_DISABLED_PLUGINS``: ``data``, ``tools``, ``models``, ``sandbox``), 5 each,
  alternated: median and min. The ceiling of the issue is +100 ms.
* ``bundle_import_ms``: importing each bundle's entry module in a fresh interpreter after ``core.engine`` (median
  of 5); ``llm_operations`` is the LLM-operation modules alone, imported after the rest of the models bundle.
"""

from __future__ import annotations

import http.client
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from bench.common import Service


def _get_all(port: int, headers: dict[str, str], n: int) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    times: list[float] = []
    size = 0
    keys = 0
    for i in range(n + 20):
        t = time.perf_counter()
        conn.request("GET", "/api/v1/all", headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        elapsed = (time.perf_counter() - t) * 1000
        assert resp.status == 200, resp.status
        if i >= 20:  # warm-up requests fill the cache
            times.append(elapsed)
        size = len(body)
        if i == 0 and resp.getheader("Content-Encoding") != "gzip":
            import json

            keys = sum(len(v) for k, v in json.loads(body).items() if k != "component_display_names")
    conn.close()
    times.sort()
    return {
        "requests": n,
        "p50_ms": round(statistics.median(times), 3),
        "p99_ms": round(times[int(len(times) * 0.99) - 1], 3),
        "bytes": size,
        **({"components": keys} if keys else {}),
    }


def _in_process(n: int = 1000) -> dict[str, Any]:
    """``GET /api/v1/all`` (gzip) through the Flask test client: the server's own cost, no network or gunicorn."""
    import tempfile

    from core.app import create_app

    app = create_app(config={"config_dir": tempfile.mkdtemp(), "rate_limit_storage_uri": "memory://"})
    client = app.test_client()
    token = client.get("/api/v1/auto_login").get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}", "Accept-Encoding": "gzip"}
    for _ in range(50):
        client.get("/api/v1/all", headers=headers)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        client.get("/api/v1/all", headers=headers)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return {"requests": n, "p50_ms": round(statistics.median(times), 3), "min_ms": round(times[0], 3)}


#: the bundles the catalog issue fills (disabled for the "without" start-up)
CATALOG_BUNDLES = "data,tools,models,sandbox"


def _import_ms(module: str, repeats: int = 5, after: str = "core.engine") -> dict[str, float]:
    """Median wall-clock and CPU milliseconds of importing ``module`` in a fresh interpreter, after ``after``.

    CPU time (``process_time``) is the steadier figure on a loaded machine: waiting for a core is not counted.
    """
    code = (
        f"import time, {after}; w = time.perf_counter(); c = time.process_time(); import {module}; "
        "print((time.perf_counter() - w) * 1000, (time.process_time() - c) * 1000)"
    )
    wall, cpu = [], []
    for _ in range(repeats):
        cmd = [sys.executable, "-c", code]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)  # noqa: S603 - our own module names
        w, c = (float(x) for x in done.stdout.split())
        wall.append(w)
        cpu.append(c)
    return {"wall": round(statistics.median(wall), 1), "cpu": round(statistics.median(cpu), 1)}


def catalog(b: Any) -> dict[str, Any]:
    from bench.scenarios import run_service

    svc = run_service(b)
    _, token = svc.api.call("GET", "/api/v1/auto_login")
    auth = {"Authorization": f"Bearer {token['access_token']}"}
    plain = _get_all(svc.port, auth, 300)
    packed = _get_all(svc.port, {**auth, "Accept-Encoding": "gzip"}, 1000)
    inproc = _in_process()
    print(
        f"catalog  GET /api/v1/all gzip p50 {packed['p50_ms']:.2f} ms p99 {packed['p99_ms']:.2f} ms "
        f"({packed['bytes']} B); plain p50 {plain['p50_ms']:.2f} ms ({plain['bytes']} B, "
        f"{plain.get('components')} components); in process p50 {inproc['p50_ms']:.2f} ms (min {inproc['min_ms']:.2f})",
        flush=True,
    )
    full: list[float] = []
    without: list[float] = []
    for i in range(5):  # alternated, and the order flipped each round, so load drifts hit both alike
        pairs = [(full, {}), (without, {"disabled_plugins": CATALOG_BUNDLES})]
        for bucket, settings in pairs if i % 2 == 0 else pairs[::-1]:
            one = Service(b.work, name="catalog-startup", **settings)
            bucket.append(one.wait())
            one.stop()
    startup = {
        "all_bundles_s": round(statistics.median(full), 3),
        "without_catalog_s": round(statistics.median(without), 3),
        "all_bundles_min_s": round(min(full), 3),
        "without_catalog_min_s": round(min(without), 3),
        "runs_all_s": [round(x, 3) for x in full],
        "runs_without_s": [round(x, 3) for x in without],
    }
    startup["difference_ms"] = round((startup["all_bundles_s"] - startup["without_catalog_s"]) * 1000, 1)
    startup["difference_min_ms"] = round((startup["all_bundles_min_s"] - startup["without_catalog_min_s"]) * 1000, 1)
    imports: dict[str, dict[str, float]] = {
        m: _import_ms(m)
        for m in (
            "service_bundle_standard.bundle",
            "service_bundle_data.bundle",
            "service_bundle_tools.bundle",
            "service_bundle_models.bundle",
            "service_bundle_sandbox.bundle",
        )
    }
    imports["llm_operations"] = _import_ms(
        "service_bundle_models.llm_ops, service_bundle_models.transform, service_bundle_models.guardrails",
        after="core.engine, service_bundle_models.models, service_bundle_models.agent",
    )
    print(
        f"catalog  start-up all bundles {startup['all_bundles_s']:.3f} s, without {CATALOG_BUNDLES} "
        f"{startup['without_catalog_s']:.3f} s (median {startup['difference_ms']:+.0f} ms, min "
        f"{startup['difference_min_ms']:+.0f} ms); bundle imports {imports} ms; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return {
        "all_gzip": packed,
        "all_plain": plain,
        "all_gzip_in_process": inproc,
        "startup": startup,
        "startup_ceiling_ms": 100,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "bundle_import_ms": imports,
    }
