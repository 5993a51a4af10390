"""A webhook run on a real RQ worker process continues the trace of the request that queued it.

The worker is started from this file (see the bottom) on a queue of its own, exporting to the same local
OTLP/HTTP receiver as the web app; the request carries a W3C ``traceparent``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis

from tests.observability.conftest import ClosingClient
from tests.observability.otlp_receiver import Receiver

HERE = Path(__file__).resolve()
REDIS_URL = os.environ.get("SERVICE_TEST_RUN_REDIS_URL", "redis://127.0.0.1:6379/13")
INBOUND_TRACE = "0af7651916cd43dd8448eb211c80319c"
INBOUND_SPAN = "b7ad6b7169203331"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rq_env(tmp_path_factory, service_database_url):
    from service_observability import otel

    from core import db
    from core.app import create_app, state
    from core.jobs.rq_backend import RQQueue

    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    receiver = Receiver()
    saved = {k: os.environ.get(k) for k in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_BSP_SCHEDULE_DELAY")}
    os.environ.update(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_BSP_SCHEDULE_DELAY="50")
    queue = f"obstest-{uuid.uuid4().hex[:10]}"
    config_dir = tmp_path_factory.mktemp("obsrq")
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
    app.test_client_class = ClosingClient
    svc = state(app)
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(
        SERVICE_CONFIG_DIR=str(config_dir),
        SERVICE_REDIS_URL=REDIS_URL,
        SERVICE_JOB_BACKEND="rq",
        SERVICE_ENV_FILE=os.devnull,
        SERVICE_LOG_LEVEL="warning",
        OTEL_SERVICE_NAME="rq-worker",
        PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parents[2]), env.get("PYTHONPATH")])),
    )
    if service_database_url:
        env["SERVICE_DATABASE_URL"] = service_database_url
    log_path = config_dir / "worker.log"
    with open(log_path, "w") as log:
        worker = subprocess.Popen(
            [sys.executable, str(HERE), "worker", queue], env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        from rq import Queue, Worker

        end = time.monotonic() + 90  # a loaded machine starts a worker slowly
        while Worker.count(connection=client, queue=Queue(queue, connection=client)) < 1:
            if worker.poll() is not None or time.monotonic() > end:
                pytest.fail(f"worker did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.05)
        yield app, receiver
    finally:
        worker.terminate()
        try:
            worker.wait(10)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        mine = list(client.scan_iter(match=f"*{queue}*", count=1000))
        job_ids = {k.rsplit(b":", 1)[1] for k in mine if b":job:" in k or b":events:" in k}
        doomed = mine + [k for job_id in job_ids for k in client.scan_iter(match=b"rq:*" + job_id + b"*", count=1000)]
        if doomed:
            client.delete(*doomed)
        client.srem("rq:queues", f"rq:queue:{queue}")
        if not client.scard("rq:queues"):
            client.delete("rq:clean_groups", "rq:queues")
        svc.jobs.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        otel.configure()
        receiver.close()
        if service_database_url:
            db.truncate_all(svc.engine)
        else:
            db.dispose_engine(svc.settings)


def test_the_worker_run_span_is_a_child_of_the_queueing_request(rq_env):
    from service_observability import otel

    from tests.conftest import make_user, superuser
    from tests.run.runkit import reference, upload

    app, receiver = rq_env
    client = app.test_client()
    owner = make_user(client, superuser(client), username=f"rq{uuid.uuid4().hex[:6]}")
    flow = upload(client, owner, reference("webhook-parser-chat.json"))
    headers = {**owner.key, "traceparent": f"00-{INBOUND_TRACE}-{INBOUND_SPAN}-01"}
    started = client.post(f"/api/v1/webhook/{flow['id']}", data='{"name": "Ada"}', headers=headers)
    assert started.status_code == 202
    otel.flush()
    [server] = receiver.wait_for("POST /api/v1/webhook/<flow_id_or_name>")
    [run] = receiver.wait_for("flow.execute", timeout=60, flow_id=flow["id"])
    assert server["trace_id"] == INBOUND_TRACE and server["parent_id"] == INBOUND_SPAN
    assert run["service"] == "rq-worker"  # exported by the worker process
    assert run["trace_id"] == INBOUND_TRACE and run["parent_id"] == server["span_id"]
    assert run["attributes"]["protocol"] == "webhook" and run["attributes"]["status"] == "ok"
    components = [s for s in receiver.spans if s["parent_id"] == run["span_id"]]
    assert components and all(s["trace_id"] == INBOUND_TRACE for s in components)


# --- the worker entry point -------------------------------------------------------------------
if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    from core.app import create_app
    from core.jobs.worker import run_worker

    _queue = sys.argv[2]
    _app = create_app()  # every installed plugin; settings from SERVICE_* variables
    with _app.app_context():
        run_worker(_app, queue=_queue, simple=True, name=f"{_queue}-{os.getpid()}")
