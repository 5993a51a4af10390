"""A schedule every second on the RQ backend: two ticking processes, two real RQ workers, one run per tick.

Redis db 13 by default (``SERVICE_TEST_RUN_REDIS_URL``), on a queue name unique to the run; the workers
are started from this file (bottom) and share the database with the test app and the tickers.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
import redis
import sqlalchemy as sa

from core import appstate
from tests.jobkit import stop_processes
from tests.run.runkit import chat_echo, create_flow
from tests.triggers.conftest import TRIGGERS, rq_worker_env
from tests.triggers.test_executions import executions

HERE = Path(__file__).resolve()
REDIS_URL = os.environ.get("SERVICE_TEST_RUN_REDIS_URL", "redis://127.0.0.1:6379/13")

pytestmark = pytest.mark.slow

TICKER = textwrap.dedent(
    """
    import json, sys, time
    from core.app import create_app, state
    from core.jobs.rq_backend import RQQueue
    from service_triggers.ticker import tick
    cfg = json.loads(sys.argv[1])
    queue = cfg.pop("_queue")
    app = create_app(config=cfg, plugins=cfg.pop("_plugins"))
    svc = state(app)
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue)
    fired, end = 0, time.time() + 5
    while time.time() < end:
        fired += tick(app)["fired"]
        time.sleep(0.05)
    print(json.dumps({"fired": fired}))
    """
)


def test_two_tickers_and_two_rq_workers_run_each_tick_once(app, client, alice):
    conn = redis.Redis.from_url(REDIS_URL)
    try:
        conn.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    queue = f"trgtest-{uuid.uuid4().hex[:10]}"
    settings = appstate.settings(app)
    env = rq_worker_env(app, REDIS_URL)
    flow = create_flow(client, alice, chat_echo())
    created = client.post(
        "/api/v1/schedules", json={"flow_id": flow["id"], "interval_s": 1, "input_value": "rq"}, headers=alice.key
    ).get_json()
    workers = [
        subprocess.Popen([sys.executable, str(HERE), "worker", queue], env=env, stderr=subprocess.DEVNULL)
        for _ in range(2)
    ]
    cfg = {
        "config_dir": str(settings.resolved_config_dir),
        "database_url": settings.resolved_database_url,
        "redis_url": REDIS_URL,
        "job_backend": "rq",
        "rate_limit_storage_uri": "memory://",
        "triggers_tick_s": 0,
        "_plugins": list(TRIGGERS),
        "_queue": queue,
    }
    try:
        tickers = [
            subprocess.Popen(
                [sys.executable, "-c", TICKER, json.dumps(cfg)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
            )
            for _ in range(2)
        ]
        outs = [t.communicate(timeout=180) for t in tickers]
        for ticker, (_out, err) in zip(tickers, outs, strict=True):
            assert ticker.returncode == 0, err.decode()[-3000:]
            assert b"IntegrityError" not in err and b"tick failed" not in err
        fired = sum(json.loads(out.decode().strip().splitlines()[-1])["fired"] for out, _ in outs)
        deadline = time.monotonic() + 120
        while True:
            found = executions(client, alice, flow_id=flow["id"], limit=200)
            if all(e["status"] not in ("queued", "running") for e in found):
                break
            assert time.monotonic() < deadline, [e["status"] for e in found]
            time.sleep(0.2)
    finally:
        stop_processes(workers)
        for key in conn.scan_iter(f"*{queue}*"):
            conn.delete(key)
    assert fired == len(found) >= 3
    assert all(e["status"] == "ok" and e["output"] == "rq" and e["source_id"] == created["id"] for e in found)
    with appstate.engine(app).connect() as db:
        keys = [k for (k,) in db.execute(sa.text("SELECT dedupe_key FROM triggers_execution"))]
    ticks = sorted(float(k.rsplit(":", 1)[1]) for k in keys)
    assert len(set(ticks)) == len(ticks) == fired
    assert all(b - a == 1.0 for a, b in itertools.pairwise(ticks))


# --- the worker entry point -------------------------------------------------------------------
if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    from core.app import create_app
    from core.jobs.worker import run_worker

    _queue = sys.argv[2]
    from tests.triggers.conftest import TRIGGERS as _PLUGINS

    _app = create_app(plugins=_PLUGINS)  # settings from SERVICE_*
    with _app.app_context():
        run_worker(_app, queue=_queue, simple=True, name=f"{_queue}-{os.getpid()}")
