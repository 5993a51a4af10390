"""Every process takes a reload and a plugin switch: a two-worker ``service run`` and an RQ worker.

The fixture bundle lives in a temporary site directory with a dist-info (on ``PYTHONPATH`` of
the children), so nothing is installed into the venv. The component answers
``<input>|<tag>|pid=<pid>``, so each answer says which process ran it with which code.

Redis: ``SERVICE_TEST_SCALEOUT_REDIS_URL`` (default db 15); only this test's keys are removed
(the run's queue keys, the shared generations). Database: ``SERVICE_TEST_DATABASE_URL``
(a ``<name>_extscale`` database), else an SQLite file shared by the three processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import requests

from tests.extensions.extkit import component, flow_of, write_bundle
from tests.jobkit import stop_processes
from tests.serverkit import free_port, shared_database_url, wait_healthy

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("SERVICE_TEST_SCALEOUT_REDIS_URL", "redis://127.0.0.1:6379/15")
#: the lock tests/build/test_scale_out.py takes too: both serve the default queue on db 15, so the other test's
#: RQ worker (without this bundle) could take this test's job while both run (each xdist worker one of them)
LOCK_URL = os.environ.get("SERVICE_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")
DIST = "svc-ext-scale"
PACKAGE = "svc_ext_scale"
WORKER = f"extw-{os.getpid()}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    r = redis.Redis.from_url(REDIS_URL)
    try:
        r.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    lock = redis.Redis.from_url(LOCK_URL).lock("service-test:scaleout", timeout=300, blocking_timeout=300)
    if not lock.acquire():
        pytest.fail("another scale-out test kept the lock for 5 minutes")
    try:
        yield from _cluster(r, tmp_path_factory)
    finally:
        lock.release()


def _cluster(r, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("extscale")
    database_url = shared_database_url(tmp, "extscale")
    site = tmp / "site"
    write_bundle(site, DIST, "scale", PACKAGE, [component("ExtWho", "v1")])
    for key in r.scan_iter("service:shared:default:core:*"):
        r.delete(key)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(
        SERVICE_ENV_FILE=os.devnull,
        SERVICE_CONFIG_DIR=str(tmp),
        SERVICE_DATABASE_URL=database_url,
        SERVICE_JOB_BACKEND="rq",
        SERVICE_REDIS_URL=REDIS_URL,
        SERVICE_SECRET_KEY="extensions-scale-out-secret-0123456",
        SERVICE_PLUGINS="accounts,flows,run,extensions,variables,standard,scale",
        SERVICE_ENABLE_EXTENSION_RELOAD="true",
        SERVICE_WORKERS="2",
        SERVICE_LOG_LEVEL="warning",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), str(REPO), env.get("PYTHONPATH")])),
    )
    port = free_port()
    procs: list[subprocess.Popen] = []

    def spawn(name: str, args: list[str]) -> subprocess.Popen:
        with open(tmp / f"{name}.log", "w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "core.cli", *args], env=env, stdout=log, stderr=subprocess.STDOUT
            )
        procs.append(proc)
        return proc

    def logs() -> str:
        return "".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(tmp.glob("*.log")))

    try:
        web = spawn("web", ["run", "--port", str(port)])
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, web, lambda: f"server did not start:\n{logs()}")
        spawn("worker", ["worker", "--name", WORKER])
        from rq import Worker

        end = time.monotonic() + 30
        while not any(w.name == WORKER for w in Worker.all(connection=r)):
            if time.monotonic() > end:
                pytest.fail(f"worker did not start:\n{logs()}")
            time.sleep(0.05)
        yield {"base": base, "site": site, "logs": logs}
    finally:
        stop_processes(procs, timeout=15)
        for key in r.scan_iter("service:shared:default:core:*"):
            r.delete(key)


def run_once(base: str, headers: dict, flow_id: str, session: requests.Session | None = None) -> str:
    s = session or requests.Session()
    response = s.post(
        f"{base}/api/v1/run/{flow_id}", json={"input_value": "x"}, headers={**headers, "Connection": "close"}
    )
    assert response.status_code == 200, response.text
    return response.json()["outputs"][0]["outputs"][0]["results"]["message"]["text"]


def web_answers(base: str, headers: dict, flow_id: str, tag: str, timeout: float = 20.0) -> set[str]:
    """Run on fresh connections until two different worker pids answered with ``tag``."""
    pids: set[str] = set()
    end = time.monotonic() + timeout
    while len(pids) < 2:
        assert time.monotonic() < end, f"only {pids} answered {tag}"
        text = run_once(base, headers, flow_id)
        if f"|{tag}|" in text:
            pids.add(text.rsplit("pid=", 1)[1])
    return pids


def job_answer(base: str, headers: dict, flow_id: str) -> str:
    started = requests.post(f"{base}/api/v1/webhook/{flow_id}", data="{}", headers=headers, timeout=30)
    assert started.status_code == 202, started.text
    job_id = started.json()["job_id"]
    end = time.monotonic() + 30
    while time.monotonic() < end:
        body = requests.get(f"{base}/api/v1/webhook/jobs/{job_id}", headers=headers, timeout=30).json()
        if body["status"] in ("finished", "failed"):
            assert body["status"] == "finished", body
            return json.dumps(body["result"])
        time.sleep(0.05)
    raise AssertionError("webhook job did not finish")


def test_every_worker_and_the_rq_worker_take_a_reload_and_a_plugin_switch(cluster):
    base = cluster["base"]
    token = requests.get(f"{base}/api/v1/auto_login", timeout=10).json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    key = requests.post(f"{base}/api/v1/api_key/", json={"name": "t"}, headers=bearer, timeout=10).json()["api_key"]
    api_key = {"x-api-key": key}
    sys.path.insert(0, str(cluster["site"]))
    try:
        from service_bundle_standard.bundle import all_components
        from svc_ext_scale.bundle import register_components

        from core.engine import Registry

        registry = Registry.from_classes([*all_components(), *register_components()])
    finally:
        sys.path.remove(str(cluster["site"]))
        for name in [k for k in sys.modules if k.startswith(PACKAGE)]:
            del sys.modules[name]
    created = requests.post(
        f"{base}/api/v1/flows/", json={"name": "who", "data": flow_of("ExtWho", registry)}, headers=bearer, timeout=10
    )
    assert created.status_code == 201, created.text
    flow_id = created.json()["id"]

    web_pids = web_answers(base, api_key, flow_id, "v1")
    assert "|v1|" in job_answer(base, api_key, flow_id)

    # a new version is installed (as pip would) and reloaded through one worker
    write_bundle(cluster["site"], DIST, "scale", PACKAGE, [component("ExtWho", "v2")])
    started = time.monotonic()
    response = requests.post(f"{base}/api/v1/extensions/{DIST}/bundles/scale/reload", headers=bearer, timeout=30)
    assert response.status_code == 200, response.text + cluster["logs"]()
    assert web_answers(base, api_key, flow_id, "v2") == web_pids  # both workers, without a restart
    job = job_answer(base, api_key, flow_id)
    assert "|v2|" in job, job
    assert time.monotonic() - started < 10
    events = requests.get(f"{base}/api/v1/extensions/events", headers=bearer, timeout=10).json()
    assert events["settled"] is True
    assert [e["type"] for e in events["events"]][-2:] == ["bundle_reload_started", "bundle_reload_succeeded"]

    # a plugin switched off disappears from both workers' routes and OpenAPI documents, then comes back
    def per_worker(path: str) -> dict[str, int]:
        seen: dict[str, int] = {}
        end = time.monotonic() + 20
        while len(seen) < 2 and time.monotonic() < end:
            with requests.Session() as s:  # one keep-alive connection: one worker answers both
                pid = run_once(base, api_key, flow_id, s).rsplit("pid=", 1)[1]
                if path == "openapi":
                    doc = s.get(f"{base}/openapi.json", timeout=10).json()
                    seen[pid] = 200 if "/api/v1/variables/" in doc["paths"] else 404
                else:
                    seen[pid] = s.get(f"{base}{path}", headers=bearer, timeout=10).status_code
        assert len(seen) == 2, seen
        return seen

    assert set(per_worker("/api/v1/variables/").values()) == {200}
    switched = requests.post(f"{base}/api/v1/extensions/plugins/variables/disable", headers=bearer, timeout=30)
    assert switched.status_code == 200, switched.text
    time.sleep(0.5)
    assert set(per_worker("/api/v1/variables/").values()) == {404}
    assert set(per_worker("openapi").values()) == {404}
    assert requests.post(f"{base}/api/v1/extensions/plugins/variables/enable", headers=bearer, timeout=30).ok
    time.sleep(0.5)
    assert set(per_worker("/api/v1/variables/").values()) == {200}
    assert set(per_worker("openapi").values()) == {200}
    listing = requests.get(f"{base}/api/v1/extensions/plugins", headers=bearer, timeout=10).json()
    assert listing["generation"] == listing["process_generation"] == 2
