"""Webhook runs on the RQ backend: a real ``service worker`` process runs ``run.webhook``.

The worker is started from this file (see the bottom) on a queue name unique to the
run, in Redis db 13 by default (``SERVICE_TEST_RUN_REDIS_URL``); every key of that
queue is deleted afterwards. Web app and worker share the database (the SQLite
file in the module's config directory, or the PostgreSQL test database).
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
from tests.run.runkit import answer, reference, upload  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rq_env(tmp_path_factory, service_database_url):
    from core import db
    from core.app import create_app, state
    from core.jobs.rq_backend import RQQueue

    client = redis_or_skip(REDIS_URL, decode=False)
    queue = f"runtest-{uuid.uuid4().hex[:10]}"
    config_dir = tmp_path_factory.mktemp("runrq")
    config = {
        "config_dir": config_dir,
        "redis_url": REDIS_URL,
        "job_backend": "rq",
        "rate_limit_storage_uri": "memory://",
    }
    if service_database_url:
        config["database_url"] = service_database_url
    app = create_app(config=config)
    app.testing = True
    svc = state(app)
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(
        SERVICE_CONFIG_DIR=str(config_dir),
        SERVICE_REDIS_URL=REDIS_URL,
        SERVICE_JOB_BACKEND="rq",
        SERVICE_ENV_FILE=os.devnull,
        SERVICE_LOG_LEVEL="warning",
        PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parents[2]), env.get("PYTHONPATH")])),
    )
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


def _wait(client, caller, status_url, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        status = client.get(status_url, headers=caller.key).get_json()
        if status["status"] in ("finished", "failed", "cancelled"):
            return status
        time.sleep(0.05)
    raise AssertionError(f"webhook job did not end: {status}")


def test_webhook_completes_on_a_real_rq_worker(rq_env):
    from tests.conftest import make_user, superuser

    app, jobs = rq_env
    client = app.test_client()
    admin = superuser(client)
    owner = make_user(client, admin, username=f"rq{uuid.uuid4().hex[:6]}")
    other = make_user(client, admin, username=f"rq{uuid.uuid4().hex[:6]}")
    flow = upload(client, owner, reference("webhook-parser-chat.json"))
    started = client.post(f"/api/v1/webhook/{flow['id']}", data="not json at all", headers=owner.key)
    assert started.status_code == 202
    payload = started.get_json()
    assert payload["status"] == "in progress"
    status = _wait(client, owner, payload["status_url"])
    assert status["status"] == "finished", status
    assert answer(status["result"]) == '```json\n{\n  "payload": "not json at all"\n}\n```'
    info = jobs.info(payload["job_id"])
    assert info.owner == owner.id and info.name == "run.webhook"
    names = [e.name for e in jobs.read_events(payload["job_id"])]
    assert "run.add_message" in names and names[-1] == "finished"
    assert client.get(payload["status_url"], headers=other.key).status_code == 404
    # a JSON body, several in a row
    ids = [
        client.post(f"/api/v1/webhook/{flow['id']}", json={"n": i}, headers=owner.key).get_json()["status_url"]
        for i in range(3)
    ]
    for i, url in enumerate(ids):
        done = _wait(client, owner, url)
        assert answer(done["result"]) == f'```json\n{{\n  "n": {i}\n}}\n```'


# --- the worker entry point -------------------------------------------------------------------
if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    from core.app import create_app
    from core.jobs.worker import run_worker

    _queue = sys.argv[2]
    _app = create_app()  # every installed plugin; settings from SERVICE_* variables
    with _app.app_context():
        run_worker(_app, queue=_queue, simple=True, name=f"{_queue}-{os.getpid()}")
