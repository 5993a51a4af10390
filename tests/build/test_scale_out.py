"""Scale-out proof: 2 web processes (``service run``) and 2 RQ workers (``service worker``) on PostgreSQL and Redis.

A build started through one web process is streamed and polled through the
other; cancel works through either; a worker killed with SIGKILL (with its
work horse: the machine is gone) mid-build ends the job with an ``error``
event within the watchdog period, and the next identical build succeeds on
the surviving worker. Every event is delivered once, in order.

Needs PostgreSQL (``SERVICE_TEST_DATABASE_URL``, default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``: a database
``<name>_scaleout`` is created) and Redis (``SERVICE_TEST_SCALEOUT_REDIS_URL``,
default db 15 of the test Redis, **flushed** before and after: keep it for this test).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import requests

from core.testing import _worker_database
from tests.build.buildkit import CHAT_ECHO, SLOW_FLOW_EVENTS, child_env, names, reference_flow, slow_flow
from tests.jobkit import stop_processes, wait_rq_workers
from tests.serverkit import free_port, wait_healthy

pytestmark = pytest.mark.slow

PG_URL = os.environ.get("SERVICE_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("SERVICE_TEST_SCALEOUT_REDIS_URL", "redis://127.0.0.1:6379/15")
LOCK_URL = os.environ.get("SERVICE_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")  # two runs never share db 15
LOST = "The worker running this job stopped unexpectedly"


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


class Cluster:
    def __init__(self, tmp: Path, database_url: str) -> None:
        self.tmp = tmp
        self.env = child_env(
            tmp,
            SERVICE_JOB_BACKEND="rq",
            SERVICE_REDIS_URL=REDIS_URL,
            SERVICE_DATABASE_URL=database_url,
            SERVICE_SECRET_KEY="scale-out-shared-secret-key-0123",
            SERVICE_PLUGINS="accounts,flows,build,monitor,standard,slowtest",
            SERVICE_WORKERS="1",
            SERVICE_BUILD_POLL_WAIT_SECONDS="1",
            SERVICE_BUILD_STREAM_BLOCK_SECONDS="1",
            SERVICE_LOG_LEVEL="warning",
        )
        self.web: list[tuple[str, subprocess.Popen]] = []
        self.workers: dict[str, subprocess.Popen] = {}

    def _spawn(self, name: str, args: list[str], **extra: str) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "w")  # noqa: SIM115 - the child keeps its copy
        try:
            return subprocess.Popen(
                [sys.executable, "-m", "core.cli", *args],
                env={**self.env, **extra},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        finally:
            log.close()

    def logs(self) -> str:
        return "".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in sorted(self.tmp.glob("*.log")))

    def start_web(self, name: str) -> str:
        port = free_port()
        proc = self._spawn(name, ["run", "--port", str(port)])
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, proc, lambda: f"web process {name} did not start:\n{self.logs()}")
        self.web.append((base, proc))
        return base

    def start_worker(self, name: str) -> None:
        self.workers[name] = self._spawn(name, ["worker", "--name", name])

    def wait_workers(self, count: int) -> None:
        wait_rq_workers(redis.Redis.from_url(REDIS_URL), ["service"], self.workers.values(), self.logs, count)

    def stop(self) -> None:
        stop_processes([p for _, p in self.web] + list(self.workers.values()), timeout=15)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    try:
        database_url = _worker_database(PG_URL, "scaleout")
    except Exception as exc:
        pytest.skip(f"no PostgreSQL at {PG_URL}: {exc}")
    r = redis.Redis.from_url(REDIS_URL)
    try:
        r.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    import sqlalchemy as sa

    from core import db

    lock = redis.Redis.from_url(LOCK_URL).lock("service-test:scaleout", timeout=300, blocking_timeout=300)
    if not lock.acquire():
        pytest.fail("another scale-out test kept the lock for 5 minutes")

    c = Cluster(tmp_path_factory.mktemp("scaleout"), database_url)
    try:
        engine = sa.create_engine(database_url)
        try:
            db.truncate_all(engine)  # leftovers of an earlier run
        except sa.exc.SQLAlchemyError:
            pass  # a fresh database has no tables yet
        finally:
            engine.dispose()
        r.flushdb()
        c.start_web("web-a")  # first: migrates and creates the superuser
        c.start_web("web-b")
        c.start_worker("w1")
        c.start_worker("w2")
        c.wait_workers(2)
        yield c
    finally:
        c.stop()
        r.flushdb()
        lock.release()


class Api:
    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.headers = {"Authorization": f"Bearer {token}"}

    def post(self, path: str, **kw):
        return requests.post(self.base + path, headers=self.headers, timeout=60, **kw)

    def get(self, path: str, **kw):
        return requests.get(self.base + path, headers=self.headers, timeout=60, **kw)

    def build(self, flow_id: str, value: str = "hi") -> str:
        response = self.post(f"/api/v1/build/{flow_id}/flow", json={"inputs": {"input_value": value}})
        assert response.status_code == 200, response.text
        return str(response.json()["job_id"])

    def stream(self, job_id: str) -> list[dict]:
        with self.get(f"/api/v1/build/{job_id}/events", stream=True) as response:
            assert response.status_code == 200, response.text
            assert response.headers["content-type"] == "application/x-ndjson"
            body = response.raw.read(decode_content=True).decode()
        return [json.loads(chunk) for chunk in body.split("\n\n") if chunk.strip()]

    def poll(self, job_id: str) -> list[dict]:
        response = self.get(f"/api/v1/build/{job_id}/events?event_delivery=polling")
        assert response.status_code == 200, response.text
        return [json.loads(chunk) for chunk in response.text.split("\n\n") if chunk.strip()]


@pytest.fixture(scope="module")
def apis(cluster):
    (a, _), (b, _) = cluster.web
    token = requests.get(f"{a}/api/v1/auto_login", timeout=10).json()["access_token"]
    return Api(a, token), Api(b, token)


def poll_alternating(apis: tuple[Api, Api], job_id: str, until: str = "", timeout: float = 60) -> list[dict]:
    events: list[dict] = []
    end = time.monotonic() + timeout
    i = 0
    while time.monotonic() < end:
        events += apis[i % 2].poll(job_id)
        i += 1
        if events and (events[-1]["event"] in ("end", "error") or (until and until in names(events))):
            return events
    raise AssertionError(f"no {until or 'end'}: {names(events)}")


def test_scale_out(cluster, apis):
    """One test (so one xdist worker owns the cluster): the three proofs in turn."""
    build_on_one_web_process_stream_and_poll_on_the_other(apis)
    cancel_through_either_process(apis)
    killed_worker_ends_the_job_and_the_next_build_succeeds(cluster, apis)


def build_on_one_web_process_stream_and_poll_on_the_other(apis):
    a, b = apis
    flow_id = a.post("/api/v1/flows/", json={"name": "echo", "data": reference_flow("chat-echo.json")["data"]}).json()
    flow_id = flow_id["id"]
    for i in range(3):
        job_id = a.build(flow_id, f"msg {i}")
        events = b.stream(job_id)
        assert names(events) == CHAT_ECHO
        assert [e["data"]["text"] for e in events if e["event"] == "add_message"] == [f"msg {i}"] * 2
        polled = poll_alternating((b, a), a.build(flow_id, f"poll {i}"))
        assert names(polled) == CHAT_ECHO  # each event once, in order, across two processes' polls
    # ownership holds across processes too
    assert requests.get(f"{b.base}/api/v1/build/{job_id}/events", timeout=10).status_code == 403


def cancel_through_either_process(apis):
    a, b = apis
    flow_id = b.post("/api/v1/flows/", json={"name": "slow", "data": slow_flow(30)}).json()["id"]
    for starter, canceller, reader in ((a, b, a), (b, a, b)):
        job_id = starter.build(flow_id)
        seen = poll_alternating((reader, canceller), job_id, until="end_vertex")
        response = canceller.post(f"/api/v1/build/{job_id}/cancel")
        assert response.json() == {"success": True, "message": "Flow build cancelled successfully"}
        rest = poll_alternating((reader, canceller), job_id)
        assert names(seen + rest).count("end_vertex") == 1  # the 30 s Slow Pass stopped mid-run
        assert rest[-1]["event"] == "error" and rest[-1]["data"]["text"] == "Flow build cancelled"
        assert names(seen + rest)[:4] == ["vertices_sorted", "build_start", "add_message", "end_vertex"]
        assert "end" not in names(seen + rest)


def killed_worker_ends_the_job_and_the_next_build_succeeds(cluster, apis):
    a, b = apis
    flow_id = a.post("/api/v1/flows/", json={"name": "slow-kill", "data": slow_flow(6)}).json()["id"]
    job_id = a.build(flow_id, "doomed")
    seen = poll_alternating((b, a), job_id, until="end_vertex")  # Slow Pass is running on some worker
    worker = redis.Redis.from_url(REDIS_URL, decode_responses=True).hget(f"service:jobs:service:job:{job_id}", "worker")
    assert worker in cluster.workers, worker
    proc = cluster.workers[worker]
    horses = children(proc.pid)
    killed_at = time.monotonic()
    for pid in [*horses, proc.pid]:  # the whole worker, as when its machine dies
        os.kill(pid, signal.SIGKILL)
    proc.wait(5)
    rest = b.stream(job_id)  # streams from the start; ends when the watchdog ends the job
    elapsed = time.monotonic() - killed_at
    assert rest[-1]["event"] == "error" and rest[-1]["data"]["text"] == LOST, rest[-1]
    assert elapsed < 30, elapsed  # heartbeat TTL 15 s + the reap interval
    assert names(rest)[: len(seen)] == names(seen) and "end" not in names(rest)
    # the same build again: served by the surviving worker, every event once
    survivor = next(name for name in cluster.workers if name != worker)
    job2 = b.build(flow_id, "doomed")
    events = a.stream(job2)
    assert names(events) == SLOW_FLOW_EVENTS
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    assert r.hget(f"service:jobs:service:job:{job2}", "worker") == survivor
    assert a.get("/api/v1/monitor/job_queue").json()["watchdog_ended"] >= 1
