"""Schedules: CRUD owner-scoped, cron with a time zone, next five fire times, pause, missed-run policy, and
one fire per tick with two processes ticking the same database."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import subprocess
import sys
import textwrap

import sqlalchemy as sa
from service_triggers.ticker import anything_due, tick

from core import appstate
from tests.run.runkit import chat_echo, create_flow
from tests.triggers.conftest import TRIGGERS
from tests.triggers.test_executions import executions, settle


def schedule(client, caller, **body):
    return client.post("/api/v1/schedules", json=body, headers=caller.key)


def test_a_cron_schedule_in_a_time_zone_shows_its_next_five_fire_times(client, alice, bob):
    flow = create_flow(client, alice, chat_echo())
    response = schedule(
        client, alice, flow_id=flow["id"], cron="30 9 * * 1-5", timezone="Europe/Paris", input_value="hi"
    )
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    times = [dt.datetime.fromisoformat(t).astimezone(dt.UTC) for t in created["next_fire_times"]]
    assert len(times) == 5 and times == sorted(times)
    for t in times:
        local = t.astimezone(__import__("zoneinfo").ZoneInfo("Europe/Paris"))
        assert (local.hour, local.minute) == (9, 30) and local.weekday() < 5
    assert created["next_fire_at"] == created["next_fire_times"][0]
    assert client.get("/api/v1/schedules", headers=bob.key).get_json() == []
    assert client.get(f"/api/v1/schedules/{created['id']}", headers=bob.key).status_code == 404
    assert client.delete(f"/api/v1/schedules/{created['id']}", headers=bob.key).status_code == 404
    assert [s["id"] for s in client.get("/api/v1/schedules", headers=alice.key).get_json()] == [created["id"]]
    assert schedule(client, bob, flow_id=flow["id"], interval_s=60).status_code == 404  # not bob's flow
    assert client.delete(f"/api/v1/schedules/{created['id']}", headers=alice.key).status_code == 204


def test_invalid_schedules_are_422(client, alice):
    flow = create_flow(client, alice, chat_echo())
    for body in (
        {"cron": "not a cron"},
        {"cron": "* * * * *", "timezone": "Mars/Olympus"},
        {},
        {"cron": "* * * * *", "interval_s": 5},
        {"interval_s": 0},
        {"interval_s": 5, "missed": "sometimes"},
    ):
        response = schedule(client, alice, flow_id=flow["id"], **body)
        assert response.status_code == 422, (body, response.get_json())
        assert all({"loc", "msg", "type"} <= set(d) for d in response.get_json()["detail"])


def test_an_interval_schedule_fires_once_per_tick_with_its_input_and_tweaks(app, client, alice):
    flow = create_flow(client, alice, chat_echo())
    created = schedule(client, alice, flow_id=flow["id"], interval_s=60, input_value="ping").get_json()
    due = dt.datetime.fromisoformat(created["next_fire_at"]).timestamp()
    tick(app, now=due + 1)
    tick(app, now=due + 2)  # the same tick again: nothing
    settle(app)
    [ran] = executions(client, alice)
    assert ran["trigger"] == "schedule" and ran["status"] == "ok" and ran["output"] == "ping"
    assert ran["source_id"] == created["id"]
    tick(app, now=due + 61)
    settle(app)
    assert len(executions(client, alice)) == 2


def test_an_idle_tick_is_one_read_and_a_due_schedule_is_seen(app, client, alice):
    """The tick's probe (``anything_due``): nothing due before the fire time, a due schedule at it; an idle tick
    runs no chore and answers zeros."""
    flow = create_flow(client, alice, chat_echo())
    created = schedule(client, alice, flow_id=flow["id"], interval_s=60).get_json()
    due = dt.datetime.fromisoformat(created["next_fire_at"]).timestamp()
    assert anything_due(app, due - 1) is False
    assert tick(app, now=due - 1) == {"fired": 0, "retried": 0, "reaped": 0, "restarted": 0}
    assert executions(client, alice) == []
    assert anything_due(app, due) is True
    assert tick(app, now=due)["fired"] == 1
    settle(app)
    assert anything_due(app, due + 1) is False  # fired, ended: nothing left to do until the next minute
    client.patch(f"/api/v1/schedules/{created['id']}", json={"enabled": False}, headers=alice.key)
    assert anything_due(app, due + 3600) is False  # paused


def test_missed_ticks_are_skipped_or_run_once(app, client, alice):
    flow = create_flow(client, alice, chat_echo())
    skip = schedule(client, alice, flow_id=flow["id"], interval_s=60, input_value="skip").get_json()
    once = schedule(client, alice, flow_id=flow["id"], interval_s=60, input_value="once", missed="run_once").get_json()
    due = dt.datetime.fromisoformat(skip["next_fire_at"]).timestamp()
    tick(app, now=due + 3600)  # an hour of downtime: sixty ticks missed
    settle(app)
    assert [e["output"] for e in executions(client, alice)] == ["once"]
    after = client.get(f"/api/v1/schedules/{skip['id']}", headers=alice.key).get_json()
    assert dt.datetime.fromisoformat(after["next_fire_at"]).timestamp() > due + 3600
    assert client.get(f"/api/v1/schedules/{once['id']}", headers=alice.key).get_json()["last_fired_at"] is not None


SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from core.app import create_app
    from core import appstate
    from service_triggers.ticker import anything_due, tick
    cfg = json.loads(sys.argv[1])
    app = create_app(config=cfg, plugins=cfg.pop("_plugins"))
    fired = 0
    end = time.time() + 4.5
    while time.time() < end:
        fired += tick(app)["fired"]
        time.sleep(0.05)
    assert appstate.jobs(app).join(60)
    print(json.dumps({"fired": fired}))
    """
)


def test_two_processes_fire_each_tick_exactly_once(app, client, alice):
    flow = create_flow(client, alice, chat_echo())
    created = schedule(client, alice, flow_id=flow["id"], interval_s=1, input_value="beat").get_json()
    settings = appstate.settings(app)
    cfg = {
        "config_dir": str(settings.resolved_config_dir),
        "database_url": settings.resolved_database_url,
        "rate_limit_storage_uri": "memory://",
        "triggers_tick_s": 0,
        "_plugins": [p for p in TRIGGERS],
    }
    env = {**os.environ}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, json.dumps(cfg)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err.decode()[-3000:]
        assert b"IntegrityError" not in err and b"tick failed" not in err
    fired = sum(json.loads(out.decode().strip().splitlines()[-1])["fired"] for out, _ in outs)
    found = executions(client, alice, flow_id=flow["id"], limit=100)
    assert fired == len(found) >= 3
    assert all(e["status"] == "ok" and e["output"] == "beat" and e["source_id"] == created["id"] for e in found)
    with appstate.engine(app).connect() as conn:
        keys = [k for (k,) in conn.execute(sa.text("SELECT dedupe_key FROM triggers_execution"))]
    ticks = sorted(float(k.rsplit(":", 1)[1]) for k in keys)
    assert len(set(ticks)) == len(ticks) == fired  # one run per one-second tick
    assert all(b - a == 1.0 for a, b in itertools.pairwise(ticks))  # and no tick left out
