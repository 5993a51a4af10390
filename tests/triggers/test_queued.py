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


# --- the worker entry point -------------------------------------------------------------------
if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    from core.app import create_app
    from core.jobs.worker import run_worker

    _queue = sys.argv[2]
    _app = create_app(plugins=PLUGINS)  # settings from SERVICE_*
    with _app.app_context():
        run_worker(_app, queue=_queue, simple=True, name=f"{_queue}-{os.getpid()}")
