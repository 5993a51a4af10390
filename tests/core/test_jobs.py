"""The in-process job backend, for real: threads, events, cancel, limits, expiry."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from flask import current_app

from core import hookimpl
from core.app import state
from core.jobs import END_EVENTS, JobCancelled, JobState, UnknownJob, make_queue
from core.jobs.inprocess import InProcessQueue, _Store
from core.records import Job
from core.settings import Settings


# --- jobs used by these tests ----------------------------------------------------------
def fail(ctx, message="boom 42"):
    ctx.emit("about_to_fail")
    raise ValueError(message)


def sleepy(ctx, seconds=10.0):
    """Loops until cancelled (or ``seconds`` pass), checking cancel every 10 ms."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ctx.check_cancelled()
        time.sleep(0.01)
    return "slept"


def stubborn(ctx, seconds=3.0):
    """Ignores cancel entirely."""
    ctx.emit("started")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.02)
    ctx.emit("after_sleep")
    return "stubborn"


def context_probe(ctx):
    from sqlalchemy import text

    from core import db

    value = db.session().execute(text("SELECT 41 + 1")).scalar()
    return {"app": current_app.name, "db": value, "same_app": current_app._get_current_object() is ctx.app}


def not_json(ctx):
    return {"when": object()}


TEST_JOBS = [Job(f"test.{f.__name__}", f) for f in (fail, sleepy, stubborn, context_probe, not_json)]


class JobTestsPlugin:
    @hookimpl
    def register_jobs(self):
        return TEST_JOBS


@pytest.fixture
def japp(make_app):
    return make_app(plugins=[("jobtests", JobTestsPlugin())])


@pytest.fixture
def queue(japp):
    q = state(japp).jobs
    assert isinstance(q, InProcessQueue)
    yield q
    q.join(5)


def make(japp, store=None, **config) -> InProcessQueue:
    settings = Settings.load({"config_dir": state(japp).settings.config_dir, **config}, environ={})
    return InProcessQueue(japp, settings, state(japp).job_registry, store=store or _Store())


def wait_state(q, job_id, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        info = q.info(job_id)
        if info is not None and info.state.terminal:
            return info
        time.sleep(0.01)
    raise AssertionError(f"job {job_id} did not end: {q.info(job_id)}")


def drain(q, job_id, timeout=5.0):
    """Every event until the end event, by cursor with blocking reads."""
    events, cursor, end = [], None, time.monotonic() + timeout
    while time.monotonic() < end:
        batch = q.read_events(job_id, cursor, block_seconds=0.5)
        events += batch
        if batch:
            cursor = batch[-1].id
            if batch[-1].name in END_EVENTS.values():
                return events
    raise AssertionError(f"no end event: {events}")


# --- tests -----------------------------------------------------------------------------
def test_builtin_countdown_runs_to_completion_with_ordered_events(queue):
    assert "core.countdown" in queue.registry
    job_id = queue.enqueue("core.countdown", owner="alice", kwargs={"n": 4, "delay": 0.01}, meta={"flow": "f1"})
    events = drain(queue, job_id)
    assert [e.name for e in events] == ["tick"] * 4 + ["done", "finished"]
    assert [e.data for e in events[:4]] == [{"i": i} for i in range(4)]
    ids = [int(e.id) for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    info = queue.info(job_id)
    assert info.state is JobState.FINISHED and info.result == {"count": 4} and info.error is None
    assert info.owner == "alice" and info.name == "core.countdown" and info.meta == {"flow": "f1"}
    assert info.created_at <= info.started_at <= info.ended_at
    assert queue.active_jobs() == 0


def test_second_queue_object_reads_by_cursor(japp, queue):
    job_id = queue.enqueue("core.countdown", owner="alice", kwargs={"n": 3, "delay": 0})
    wait_state(queue, job_id)
    other = make_queue(japp, state(japp).settings, state(japp).job_registry)  # same process store
    first = other.read_events(job_id, limit=2)
    assert [e.name for e in first] == ["tick", "tick"]
    rest = other.read_events(job_id, first[-1].id)
    assert [e.name for e in rest] == ["tick", "done", "finished"]
    assert other.read_events(job_id, rest[-1].id) == []
    assert other.info(job_id).state is JobState.FINISHED
    with pytest.raises(ValueError):
        other.read_events(job_id, "not-a-cursor")


def test_blocking_read_wakes_on_new_event(queue):
    job_id = queue.enqueue("core.countdown", owner="alice", kwargs={"n": 2, "delay": 0.4})
    first = queue.read_events(job_id, block_seconds=2)
    assert first and first[0].name == "tick"
    start = time.monotonic()
    second = queue.read_events(job_id, first[-1].id, block_seconds=3)
    waited = time.monotonic() - start
    assert [e.data for e in second] == [{"i": 1}]
    assert 0.2 < waited < 1.5, waited
    # a non-blocking read returns at once
    start = time.monotonic()
    assert queue.read_events(job_id, second[-1].id) == []
    assert time.monotonic() - start < 0.1


def test_owner_scoping(queue):
    job_id = queue.enqueue("core.countdown", owner="alice", kwargs={"n": 1, "delay": 0})
    assert queue.info_for(job_id, "alice").id == job_id
    assert queue.info_for(job_id, "bob") is None
    assert queue.info_for("no-such-job", "alice") is None
    assert queue.info("no-such-job") is None and queue.read_events("no-such-job") == []


def test_cancel_running_job_is_cooperative(queue):
    job_id = queue.enqueue("test.sleepy", owner="alice")
    end = time.monotonic() + 2
    while queue.info(job_id).state is not JobState.RUNNING and time.monotonic() < end:
        time.sleep(0.005)
    assert queue.active_jobs() >= 1
    start = time.monotonic()
    assert queue.cancel(job_id) is True
    info = wait_state(queue, job_id)
    assert time.monotonic() - start < 0.5
    assert info.state is JobState.CANCELLED and info.error is None
    assert queue.read_events(job_id)[-1].name == "cancelled"
    assert queue.cancel(job_id) is False  # already ended
    assert queue.metrics()["cancelled"] >= 1


def test_cancel_queued_job(japp, monkeypatch):
    q = make(japp)
    gate = threading.Event()
    real_run = InProcessQueue._run

    def gated(self, record):
        gate.wait(5)
        real_run(self, record)

    monkeypatch.setattr(InProcessQueue, "_run", gated)
    job_id = q.enqueue("core.countdown", owner="alice", kwargs={"n": 2, "delay": 0})
    assert q.info(job_id).state is JobState.QUEUED and q.metrics()["queued"] == 1
    assert q.cancel(job_id) is True
    gate.set()
    assert q.join(5)
    info = q.info(job_id)
    assert info.state is JobState.CANCELLED and info.started_at is None
    assert [e.name for e in q.read_events(job_id)] == ["cancelled"]  # it never ran


def test_failure_records_message_without_traceback(queue, caplog):
    caplog.set_level(logging.ERROR, logger="core.jobs.inprocess")
    job_id = queue.enqueue("test.fail", owner="alice", kwargs={"message": "boom 42"})
    info = wait_state(queue, job_id)
    assert info.state is JobState.FAILED
    assert info.error == "boom 42"
    events = queue.read_events(job_id)
    assert [e.name for e in events] == ["about_to_fail", "error"]
    assert events[-1].data == {"error": "boom 42"}
    assert "Traceback" not in json.dumps([e.data for e in events])
    assert any(r.exc_info and "boom 42" in str(r.exc_info[1]) for r in caplog.records)  # logged, with traceback


def test_job_runs_in_app_context_with_db_session(queue):
    job_id = queue.enqueue("test.context_probe", owner="alice")
    info = wait_state(queue, job_id)
    assert info.state is JobState.FINISHED, info.error
    assert info.result == {"app": "service", "db": 42, "same_app": True}


def test_json_only_kwargs_and_results(queue):
    with pytest.raises(TypeError):
        queue.enqueue("core.countdown", owner="alice", kwargs={"n": object()})
    info = wait_state(queue, queue.enqueue("test.not_json", owner="alice"))
    assert info.state is JobState.FAILED and "JSON" in info.error


def test_unknown_job_name(queue):
    with pytest.raises(UnknownJob):
        queue.enqueue("no.such.job", owner="alice")
    assert queue.active_jobs() == 0


def test_time_limit_is_cooperative_then_failed(japp):
    q = make(japp, job_time_limit_seconds=1)
    start = time.monotonic()
    job_id = q.enqueue("test.sleepy", owner="alice", kwargs={"seconds": 10})
    info = wait_state(q, job_id, timeout=5)
    assert 0.9 < time.monotonic() - start < 2.5
    assert info.state is JobState.FAILED and "time limit of 1 s" in info.error
    assert q.read_events(job_id)[-1].name == "error"


def test_time_limit_hard_grace_for_a_job_that_ignores_it(japp):
    q = make(japp, job_time_limit_seconds=1)
    q.hard_grace_seconds = 0.2
    q.sweep_interval = 0.05
    job_id = q.enqueue("test.stubborn", owner="alice", kwargs={"seconds": 2.5})
    info = wait_state(q, job_id, timeout=4)
    assert info.state is JobState.FAILED and "time limit" in info.error
    assert time.time() - info.started_at < 2.0  # marked before the job itself returned
    q.join(5)
    names = [e.name for e in q.read_events(job_id)]
    assert names == ["started", "error"]  # its late event was dropped
    assert q.info(job_id).state is JobState.FAILED


def test_events_expire_after_ttl(japp):
    q = make(japp, job_event_ttl_seconds=1)
    q.sweep_interval = 0.0
    job_id = q.enqueue("core.countdown", owner="alice", kwargs={"n": 1, "delay": 0})
    wait_state(q, job_id)
    assert q.read_events(job_id)
    time.sleep(1.1)
    assert q.info(job_id) is None
    assert q.read_events(job_id) == []
    assert q.metrics()["expired"] == 1 and q.metrics()["stored_jobs"] == 0


def test_context_cancelled_and_check_cancelled(japp):
    q = make(japp)
    seen = {}

    def probe(ctx):
        seen["before"] = ctx.cancelled()
        q.cancel(ctx.job_id)
        seen["after"] = ctx.cancelled()
        with pytest.raises(JobCancelled):
            ctx.check_cancelled()
        return "done anyway"

    q.registry = {**q.registry, "test.probe": Job("test.probe", probe)}
    info = wait_state(q, q.enqueue("test.probe", owner="alice"))
    assert seen == {"before": False, "after": True}
    assert info.state is JobState.CANCELLED  # it saw the cancel, so it did not "finish"


def test_runs_under_gevent_monkey_patching(tmp_path):
    script = textwrap.dedent(f"""
        from gevent import monkey; monkey.patch_all()
        import time
        from core.app import create_app, state
        from pathlib import Path
        app = create_app(config={{"config_dir": Path({str(tmp_path)!r})}}, plugins=[])
        q = state(app).jobs
        ids = [q.enqueue("core.countdown", owner="u", kwargs={{"n": 3, "delay": 0.05}}) for _ in range(20)]
        start = time.monotonic()
        for job_id in ids:
            cursor, names = None, []
            while "finished" not in names:
                batch = q.read_events(job_id, cursor, block_seconds=2)
                assert batch, names
                names += [e.name for e in batch]
                cursor = batch[-1].id
        print(round(time.monotonic() - start, 2), q.metrics()["finished"])
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH")]))
    env["SERVICE_ENV_FILE"] = os.devnull
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    elapsed, finished = out.stdout.split()
    assert int(finished) == 20
    assert float(elapsed) < 1.0  # 20 jobs of ~0.15 s ran concurrently as greenlets
