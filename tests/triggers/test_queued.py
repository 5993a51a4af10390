"""A run on the job queue is listed ``queued`` until a worker starts it, then ends as one execution (issue 32):
the flow webhook's runs and v2 background runs, on the RQ backend (a queue no worker listens to until the test
starts one: a real worker process sharing the database)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from service_triggers.models import Execution
from service_triggers.recorder import pending_queued

from core import appstate
from tests.jobkit import redis_or_skip, stop_processes
from tests.run.runkit import chat_echo, create_flow
from tests.triggers.conftest import TRIGGERS, rq_worker_env
from tests.triggers.test_executions import executions

HERE = Path(__file__).resolve()
REDIS_URL = os.environ.get("SERVICE_TEST_RUN_REDIS_URL", "redis://127.0.0.1:6379/13")
PLUGINS = [*TRIGGERS, "workflows"]

pytestmark = pytest.mark.slow


@pytest.fixture
def app(make_app, recorder):
    redis_or_skip(REDIS_URL)
    return make_app(plugins=[*PLUGINS, ("recorder", recorder)], triggers_tick_s=0, redis_url=REDIS_URL)


def test_webhook_and_background_runs_are_queued_until_a_worker_starts_them(app, client, alice):
    from core.jobs.rq_backend import RQQueue

    conn = redis_or_skip(REDIS_URL, decode=False)
    queue = f"trgq-{uuid.uuid4().hex[:10]}"
    svc = appstate.state(app)
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue)
    flow = create_flow(client, alice, chat_echo())
    hooked = client.post(f"/api/v1/webhook/{flow['id']}", data="from a webhook", headers=alice.key)
    assert hooked.status_code == 202, hooked.get_json()
    background = client.post(
        "/api/v2/workflows",
        json={"flow_id": flow["id"], "mode": "background", "input_value": "in the background"},
        headers=alice.key,
    )
    assert background.status_code == 200, background.get_json()
    waiting = executions(client, alice, flow_id=flow["id"])
    assert sorted((e["trigger"], e["status"], e["input"], e["ended_at"]) for e in waiting) == [
        ("webhook", "queued", "from a webhook", None),
        ("workflows", "queued", "in the background", None),
    ]
    assert {e["job_id"] for e in waiting} == {hooked.get_json()["job_id"], background.get_json()["job_id"]}
    assert executions(client, alice, status="running") == []
    assert executions(client, alice, status="queued", trigger="webhook")[0]["flow_name"] == flow["name"]
    # listed from this process's memory at first; written off the requests, in a batch, an instant later
    engine = appstate.engine(app)
    deadline = time.monotonic() + 30
    while pending_queued(engine):
        assert time.monotonic() < deadline, pending_queued(engine)
        time.sleep(0.02)
    with engine.connect() as db:
        rows = db.execute(sa.select(Execution.id, Execution.status).where(Execution.flow_id == flow["id"])).all()
    assert sorted(rows) == sorted((e["id"], "queued") for e in waiting)

    env = rq_worker_env(app, REDIS_URL)
    worker = subprocess.Popen([sys.executable, str(HERE), "worker", queue], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            ended = executions(client, alice)
            if all(e["status"] not in ("queued", "running") for e in ended):
                break
            assert time.monotonic() < deadline and worker.poll() is None, [e["status"] for e in ended]
            time.sleep(0.2)
    finally:
        stop_processes([worker])
        svc.jobs.close()
        for key in conn.scan_iter(f"*{queue}*"):
            conn.delete(key)
    # the same executions (one each), ended by their runs
    assert {e["id"] for e in ended} == {e["id"] for e in waiting}
    assert sorted((e["trigger"], e["status"], e["output"]) for e in ended) == [
        ("webhook", "ok", None),
        ("workflows", "ok", "in the background"),
    ]


def test_a_queued_execution_not_written_yet_reads_by_id_for_its_owner_only(app, client, alice, bob):
    """Before its batch is written, a queued execution is read from this process's memory: by id for its owner
    (as stored rows are), 404 for anyone else; a flush then writes it at once (no wait for the interval)."""
    from service_triggers import recorder

    from core import batches
    from core.jobs.rq_backend import RQQueue

    conn = redis_or_skip(REDIS_URL, decode=False)
    queue = f"trgq-{uuid.uuid4().hex[:10]}"
    svc = appstate.state(app)
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue)
    engine = appstate.engine(app)
    # a writer that would gather for an hour: the row stays in memory until flushed
    slow = batches.BatchWriter(engine, recorder._write_queued, name="queued-executions", interval=3600, retry=True)
    batches._writers[("queued-executions", id(engine))] = slow
    try:
        flow = create_flow(client, alice, chat_echo())
        hooked = client.post(f"/api/v1/webhook/{flow['id']}", data="not written yet", headers=alice.key)
        assert hooked.status_code == 202, hooked.get_json()
        assert len(pending_queued(engine)) == 1
        (listed,) = executions(client, alice, flow_id=flow["id"])
        one = client.get(f"/api/v1/executions/{listed['id']}", headers=alice.key)
        assert one.status_code == 200, one.get_json()
        assert (one.get_json()["status"], one.get_json()["input"]) == ("queued", "not written yet")
        assert client.get(f"/api/v1/executions/{listed['id']}", headers=bob.key).status_code == 404
        started = time.monotonic()
        assert slow.flush(timeout=10)
        assert time.monotonic() - started < 5  # written at once, not after the writer's interval
        with engine.connect() as db:
            stored = db.execute(sa.select(Execution.status).where(Execution.id == listed["id"])).scalar_one()
        assert stored == "queued" and pending_queued(engine) == []
    finally:
        batches._writers.pop(("queued-executions", id(engine)), None)
        svc.jobs.close()
        for key in conn.scan_iter(f"*{queue}*"):
            conn.delete(key)


# --- the worker entry point -------------------------------------------------------------------
if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    from core.app import create_app
    from core.jobs.worker import run_worker

    _queue = sys.argv[2]
    _app = create_app(plugins=PLUGINS)  # settings from SERVICE_*
    with _app.app_context():
        run_worker(_app, queue=_queue, simple=True, name=f"{_queue}-{os.getpid()}")
