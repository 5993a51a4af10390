"""A process killed mid-run: its execution is failed by the next tick anywhere, and the retry policy runs it
once more (never twice)."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from service_triggers.ticker import tick

from core import appstate
from tests.build.buildkit import SlowBundle, slow_flow
from tests.run.runkit import create_flow
from tests.triggers.conftest import TRIGGERS
from tests.triggers.test_executions import executions, settle

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def app(make_app, recorder):
    return make_app(plugins=[*TRIGGERS, ("recorder", recorder), ("slowtest", SlowBundle())], triggers_tick_s=0)


SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from core.app import create_app
    from service_triggers.ticker import tick
    from tests.build.buildkit import SlowBundle
    cfg = json.loads(sys.argv[1])
    due = cfg.pop("_due")
    app = create_app(config=cfg, plugins=[*cfg.pop("_plugins"), ("slowtest", SlowBundle())])
    print(json.dumps(tick(app, now=due)), flush=True)
    time.sleep(600)
    """
)


def test_a_killed_worker_fails_its_execution_and_the_policy_retries_it_once(app, client, alice):
    flow = create_flow(client, alice, slow_flow(4), name="slow")
    policy = {"attempts": 2, "backoff_s": 0}
    assert client.put(f"/api/v1/executions/policies/{flow['id']}", json=policy, headers=alice.key).status_code == 200
    created = client.post(
        "/api/v1/schedules", json={"flow_id": flow["id"], "interval_s": 3600, "input_value": "job"}, headers=alice.key
    ).get_json()
    settings = appstate.settings(app)
    cfg = {
        "config_dir": str(settings.resolved_config_dir),
        "database_url": settings.resolved_database_url,
        "rate_limit_storage_uri": "memory://",
        "triggers_tick_s": 0,
        "_plugins": list(TRIGGERS),
        "_due": dt.datetime.fromisoformat(created["next_fire_at"]).timestamp() + 1,
    }
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests" / "build"), os.environ.get("PYTHONPATH", "")]),
    }
    worker = subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(cfg)], stdout=subprocess.PIPE, env=env)
    try:
        assert json.loads(worker.stdout.readline())["fired"] == 1  # type: ignore[union-attr]
        deadline = time.monotonic() + 60
        while not [e for e in executions(client, alice) if e["job_id"]]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        while executions(client, alice)[0]["status"] != "running":  # the run is under way in the worker
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
    [lost] = executions(client, alice)
    assert lost["status"] == "running"  # nobody ended it yet
    time.sleep(2.5)  # past the reaper's grace
    tick(app)  # fails it, schedules the retry (no backoff)
    tick(app)  # starts the retry here
    settle(app)
    tick(app)
    settle(app)
    found = {e["attempt"]: e for e in executions(client, alice)}
    assert sorted(found) == [1, 2]
    assert found[1]["status"] == "error" and found[1]["id"] == lost["id"]
    assert found[2]["status"] == "ok" and found[2]["retry_of"] == lost["id"] and found[2]["output"].startswith("job|")
    assert found[2]["output"] == f"job|pid={os.getpid()}"  # the retry ran in this process, once


def test_an_execution_committed_but_never_enqueued_is_started_once(app, client, alice):
    import sqlalchemy as sa
    from service_triggers import executions as ex
    from service_triggers.models import Execution

    flow = create_flow(client, alice, slow_flow(0), name="stranded")
    row = ex.new_row(
        user_id=alice.id,
        flow_id=flow["id"],
        flow_name="stranded",
        trigger="trigger",
        request=ex.request_for(flow["id"], alice.id, value="left"),
    )
    row["started_at"] = time.time() - 120  # its process died two minutes ago, between commit and enqueue
    with appstate.engine(app).begin() as conn:
        conn.execute(sa.insert(Execution), [row])
    tick(app)
    tick(app)
    settle(app)
    [done] = executions(client, alice)
    assert done["id"] == row["id"] and done["status"] == "ok" and done["output"].startswith("left|")


def test_a_run_in_a_request_is_listed_running_while_it_goes(app, client, alice):
    import threading

    flow = create_flow(client, alice, slow_flow(2), name="slow")
    answers: list[int] = []

    def run() -> None:
        answer = app.test_client().post(f"/api/v1/run/{flow['id']}", json={"input_value": "x"}, headers=alice.key)
        answers.append(answer.status_code)

    caller = threading.Thread(target=run)
    caller.start()
    deadline = time.monotonic() + 60
    while not (going := executions(client, alice, status="running")):
        assert time.monotonic() < deadline and caller.is_alive()
        time.sleep(0.05)
    assert [(e["flow_id"], e["trigger"], e["ended_at"]) for e in going] == [(flow["id"], "run", None)]
    caller.join(60)
    assert answers == [200]
    [ended] = executions(client, alice)
    assert ended["id"] == going[0]["id"] and ended["status"] == "ok"
    assert executions(client, alice, status="running") == []
