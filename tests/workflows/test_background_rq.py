"""Background v2 runs on the RQ backend: a real ``service worker`` process runs ``workflows.run``.

Web app and worker share the database and Redis (``SERVICE_TEST_RUN_REDIS_URL``); the web app
only enqueues, polls and reads events, as a second web process would.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()
REDIS_URL = os.environ.get("SERVICE_TEST_RUN_REDIS_URL", "redis://127.0.0.1:6379/13")

from tests.jobkit import redis_or_skip, rq_worker_process  # noqa: E402

pytestmark = pytest.mark.slow

URL = "/api/v2/workflows"


@pytest.fixture(scope="module")
def rq_env(tmp_path_factory, service_database_url):
    from core import db
    from core.app import create_app, state
    from core.jobs.rq_backend import RQQueue

    client = redis_or_skip(REDIS_URL, decode=False)
    queue = f"wftest-{uuid.uuid4().hex[:10]}"
    config_dir = tmp_path_factory.mktemp("wfrq")
    config = {
        "config_dir": config_dir,
        "redis_url": REDIS_URL,
        "job_backend": "rq",
        "rate_limit_storage_uri": "memory://",
        "rate_limit_enabled": False,  # logins of both tests count in Redis otherwise
    }
    if service_database_url:
        config["database_url"] = service_database_url
    from tests.workflows.wfkit import plugins

    app = create_app(config=config, plugins=plugins())  # the web app knows the test components too
    app.testing = True
    svc = state(app)
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue)
    from tests.build.buildkit import child_env

    # the worker loads every installed plugin plus the test bundle (SlowPass, AskApproval)
    env = child_env(config_dir, SERVICE_REDIS_URL=REDIS_URL, SERVICE_JOB_BACKEND="rq")
    if service_database_url:
        env["SERVICE_DATABASE_URL"] = service_database_url
    worker = rq_worker_process(
        client, queue, [sys.executable, str(HERE), "worker", queue], env, config_dir / "worker.log"
    )
    try:
        with worker:
            yield app, svc.jobs
    finally:
        svc.jobs.close()
        if service_database_url:
            db.truncate_all(svc.engine)
        else:
            db.dispose_engine(svc.settings)


def _wait(client, caller, job_id, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        body = client.get(f"{URL}?job_id={job_id}", headers=caller.key).get_json()
        if body["status"] not in ("queued", "in_progress"):
            return body
        time.sleep(0.05)
    raise AssertionError(f"job did not end: {body}")


def test_background_runs_on_a_real_rq_worker(rq_env):
    from tests.conftest import make_user, superuser
    from tests.workflows.wfkit import agui_events, chain, service_frames, types

    app, jobs = rq_env
    client = app.test_client()
    admin = superuser(client)
    owner = make_user(client, admin, username=f"rq{uuid.uuid4().hex[:6]}")
    other = make_user(client, admin, username=f"rq{uuid.uuid4().hex[:6]}")
    created = client.post("/api/v1/flows/", json={"name": "echo", "data": chain()}, headers=owner.bearer)
    flow_id = created.get_json()["id"]
    body = {"flow_id": flow_id, "mode": "background", "input_value": "on rq", "idempotency_key": "k1"}
    started = client.post(URL, json=body, headers=owner.key).get_json()
    assert started["status"] == "queued"
    job_id = started["job_id"]
    assert client.post(URL, json=body, headers=owner.key).get_json()["job_id"] == job_id  # idempotent
    done = _wait(client, owner, job_id)
    assert done["status"] == "completed" and done["output"]["text"] == "on rq", done
    info = jobs.info(job_id)
    assert info.owner == owner.id and info.name == "workflows.run"
    assert client.get(f"{URL}?job_id={job_id}", headers=other.key).status_code == 404
    frames = service_frames(client.get(f"{URL}/{job_id}/events", headers=owner.key).get_data())
    assert [f["event"] for f in frames][-2:] == ["output", "end"]
    cut = frames[2]["id"]
    rest = service_frames(client.get(f"{URL}/{job_id}/events", headers={**owner.key, "Last-Event-ID": cut}).get_data())
    assert rest == frames[3:]
    events = agui_events(client.get(f"{URL}/{job_id}/events?stream_protocol=agui", headers=owner.key).get_data())
    assert types(events)[0] == "RUN_STARTED" and types(events)[-1] == "RUN_FINISHED"


def test_stop_and_resume_on_a_real_rq_worker(rq_env):
    from tests.conftest import make_user, superuser
    from tests.workflows.wfkit import chain, slow_flow

    app, _jobs = rq_env
    client = app.test_client()
    admin = superuser(client)
    owner = make_user(client, admin, username=f"rq{uuid.uuid4().hex[:6]}")
    created = client.post("/api/v1/flows/", json={"name": "slow", "data": slow_flow(10.0)}, headers=owner.bearer)
    flow_id = created.get_json()["id"]
    job_id = client.post(URL, json={"flow_id": flow_id, "mode": "background"}, headers=owner.key).get_json()["job_id"]
    end = time.monotonic() + 20
    while client.get(f"{URL}?job_id={job_id}", headers=owner.key).get_json()["status"] != "in_progress":
        assert time.monotonic() < end
        time.sleep(0.05)
    stopped = client.post(f"{URL}/stop", json={"job_id": job_id}, headers=owner.key)
    assert stopped.status_code == 200 and stopped.get_json()["status"] == "cancelled"
    t0 = time.monotonic()
    assert _wait(client, owner, job_id)["status"] == "cancelled"
    assert time.monotonic() - t0 < 5  # stopped between checks, not after the 10 s
    # a paused run is resumed by the worker too
    approval = chain(("AskApproval", "AskApproval-CCCCC", {}))
    created = client.post("/api/v1/flows/", json={"name": "ask", "data": approval}, headers=owner.bearer)
    flow_id = created.get_json()["id"]
    body = {"flow_id": flow_id, "mode": "background", "input_value": "deploy"}
    job_id = client.post(URL, json=body, headers=owner.key).get_json()["job_id"]
    paused = _wait(client, owner, job_id)
    assert paused["status"] == "suspended"
    request_id = paused["human_request"]["request_id"]
    answer = {"request_id": request_id, "decision": "ok"}
    resumed = client.post(f"{URL}/{job_id}/resume", json=answer, headers=owner.key).get_json()["job_id"]
    done = _wait(client, owner, resumed)
    assert done["status"] == "completed" and done["output"]["text"].startswith("deploy:ok|pid=")
    assert done["output"]["text"] != f"deploy:ok|pid={os.getpid()}"  # ran on the worker


# --- the worker entry point -------------------------------------------------------------------
if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    from core.app import create_app
    from core.jobs.worker import run_worker

    _queue = sys.argv[2]
    _app = create_app()  # every installed plugin; settings from SERVICE_* variables
    with _app.app_context():
        run_worker(_app, queue=_queue, simple=True, name=f"{_queue}-{os.getpid()}")
