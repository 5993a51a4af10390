"""The RQ job backend against a real Redis and real ``service worker`` processes.

Two workers run for the whole module, started from this very file (see the
bottom): a SimpleWorker on one queue and a forking worker on another; a third
queue has no worker, so jobs stay queued there. Every key lives under the
module's own queue names (``SERVICE_TEST_REDIS_URL``, default db 11) and is
deleted afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis

from core import hookimpl
from core.jobs import JobState, UnknownJob
from core.records import Job
from core.settings import Settings
from tests.jobkit import drain, fail, redis_or_skip, sleepy, stop_processes, wait_state

REDIS_URL = os.environ.get("SERVICE_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")
HERE = Path(__file__).resolve()


# --- jobs (the workers load them from this file too) ------------------------------------
def stubborn(ctx, seconds=3.0):
    """Reports its process id, then ignores cancel."""
    ctx.emit("pid", {"pid": os.getpid()})
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.02)
    ctx.emit("after_sleep")
    return "stubborn"


def context_probe(ctx):
    from flask import current_app
    from sqlalchemy import text

    from core import db

    return {"app": current_app.name, "db": db.session().execute(text("SELECT 41 + 1")).scalar(), "owner": ctx.owner}


TEST_JOBS = [Job(f"test.{f.__name__}", f) for f in (fail, sleepy, stubborn, context_probe)]


class JobTestsPlugin:
    @hookimpl
    def register_jobs(self):
        return TEST_JOBS


# --- fixtures ------------------------------------------------------------------------------
class Env:
    def __init__(self, tmp: Path) -> None:
        tag = uuid.uuid4().hex[:8]
        self.simple, self.fork, self.idle = f"t{tag}-simple", f"t{tag}-fork", f"t{tag}-idle"
        self.config_dir = tmp
        self.redis = redis_or_skip(REDIS_URL)
        self.procs: list[subprocess.Popen] = []
        self.app = None

    def environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
        env.update(
            SERVICE_CONFIG_DIR=str(self.config_dir),
            SERVICE_REDIS_URL=REDIS_URL,
            SERVICE_JOB_BACKEND="rq",
            SERVICE_PLUGINS="",
            SERVICE_ENV_FILE=os.devnull,
            SERVICE_LOG_LEVEL="warning",
            PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parents[2]), env.get("PYTHONPATH")])),
        )
        return env

    def start_worker(self, queue: str, mode: str) -> None:
        with open(self.config_dir / f"worker-{mode}.log", "w") as log:  # the child keeps its own copy
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, str(HERE), "worker", queue, mode],
                    env=self.environ(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )

    def queue(self, name: str, **config):
        from core.jobs.rq_backend import RQQueue

        settings = Settings.load(
            {"config_dir": self.config_dir, "redis_url": REDIS_URL, "job_backend": "rq", **config}, environ={}
        )
        return RQQueue(self.app, settings, self.app.extensions["service"].job_registry, queue_name=name)

    def cleanup(self) -> None:
        stop_processes(self.procs)
        raw = redis.Redis.from_url(REDIS_URL)
        tag = self.simple[:9]
        mine = list(raw.scan_iter(match=f"*{tag}*", count=1000))
        job_ids = {k.rsplit(b":", 1)[1] for k in mine if b":job:" in k or b":events:" in k}
        doomed = mine + [k for job_id in job_ids for k in raw.scan_iter(match=b"rq:*" + job_id + b"*", count=1000)]
        if doomed:
            raw.delete(*doomed)
        for name in (self.simple, self.fork, self.idle):
            raw.srem("rq:queues", f"rq:queue:{name}")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from core.app import create_app

    e = Env(tmp_path_factory.mktemp("rqjobs"))
    e.start_worker(e.simple, "simple")
    e.start_worker(e.fork, "fork")
    e.app = create_app(
        config={"config_dir": e.config_dir, "redis_url": REDIS_URL, "job_backend": "rq"},
        plugins=[("jobtests", JobTestsPlugin())],
    )
    try:
        from tests.jobkit import wait_rq_workers

        conn = redis.Redis.from_url(REDIS_URL)
        logs = lambda: "".join(p.read_text()[-1500:] for p in e.config_dir.glob("worker-*.log"))  # noqa: E731
        wait_rq_workers(conn, [e.simple, e.fork], e.procs, logs)  # SERVICE_TEST_START_SECONDS: a loaded machine
        yield e
    finally:
        e.cleanup()


@pytest.fixture(params=["simple", "fork"])
def worked(request, env):
    """A queue served by a SimpleWorker, then by a forking worker."""
    return env.queue(env.simple if request.param == "simple" else env.fork)


# --- tests -----------------------------------------------------------------------------------
def test_app_builds_an_rq_queue(env):
    from core.jobs.rq_backend import RQQueue

    assert isinstance(env.app.extensions["service"].jobs, RQQueue)


def test_run_to_completion_with_ordered_events(worked):
    job_id = worked.enqueue("core.countdown", owner="alice", kwargs={"n": 4, "delay": 0.01}, meta={"flow": "f1"})
    events = drain(worked, job_id)
    assert [e.name for e in events] == ["tick"] * 4 + ["done", "finished"]
    assert [e.data for e in events[:4]] == [{"i": i} for i in range(4)]
    info = worked.info(job_id)
    assert info.state is JobState.FINISHED and info.result == {"count": 4} and info.error is None
    assert info.owner == "alice" and info.meta == {"flow": "f1"} and info.name == "core.countdown"
    assert info.created_at <= info.started_at <= info.ended_at


def test_job_runs_in_worker_app_context_with_db(worked):
    info = wait_state(worked, worked.enqueue("test.context_probe", owner="carol"))
    assert info.state is JobState.FINISHED, info.error
    assert info.result == {"app": "service", "db": 42, "owner": "carol"}


def test_second_queue_object_reads_by_cursor(env):
    q = env.queue(env.simple)
    job_id = q.enqueue("core.countdown", owner="alice", kwargs={"n": 3, "delay": 0})
    wait_state(q, job_id)
    other = env.queue(env.simple)  # e.g. another web process
    first = other.read_events(job_id, limit=2)
    assert [e.name for e in first] == ["tick", "tick"]
    rest = other.read_events(job_id, first[-1].id)
    assert [e.name for e in rest] == ["tick", "done", "finished"]
    assert other.read_events(job_id, rest[-1].id) == []
    assert other.read_events(job_id, rest[-1].id, block_seconds=2) == []  # ended: no waiting
    with pytest.raises(ValueError):
        other.read_events(job_id, "nonsense")


def test_blocking_read_wakes_on_new_event(env):
    q = env.queue(env.simple)
    job_id = q.enqueue("core.countdown", owner="alice", kwargs={"n": 2, "delay": 0.5})
    first = q.read_events(job_id, block_seconds=5)
    assert [e.name for e in first] == ["tick"]
    start = time.monotonic()
    second = q.read_events(job_id, first[-1].id, block_seconds=5)
    waited = time.monotonic() - start
    assert [e.data for e in second] == [{"i": 1}]
    assert 0.2 < waited < 2.0, waited


def test_owner_scoping(env):
    q = env.queue(env.simple)
    job_id = q.enqueue("core.countdown", owner="alice", kwargs={"n": 1, "delay": 0})
    assert q.info_for(job_id, "alice").id == job_id
    assert q.info_for(job_id, "bob") is None
    assert q.info(str(uuid.uuid4())) is None and q.read_events(str(uuid.uuid4())) == []


def test_cooperative_cancel_while_running(worked):
    stats_before = worked.metrics()
    job_id = worked.enqueue("test.sleepy", owner="alice")
    wait_state(worked, job_id, states={JobState.RUNNING})
    start = time.monotonic()
    assert worked.cancel(job_id) is True
    info = wait_state(worked, job_id)
    assert time.monotonic() - start < 1.0
    assert info.state is JobState.CANCELLED and info.error is None
    assert worked.read_events(job_id)[-1].name == "cancelled"
    assert worked.cancel(job_id) is False
    after = worked.metrics()
    assert after["cancel_marker_hit"] == stats_before["cancel_marker_hit"] + 1
    assert after["stop_command_sent"] == stats_before["stop_command_sent"]  # it stopped by itself


def test_cancel_queued_job(env):
    q = env.queue(env.idle)  # no worker listens here
    job_id = q.enqueue("core.countdown", owner="alice", kwargs={"n": 1})
    assert q.info(job_id).state is JobState.QUEUED
    assert q.metrics()["queue_length"] == 1 and q.active_jobs() == 1
    assert q.cancel(job_id) is True
    info = q.info(job_id)
    assert info.state is JobState.CANCELLED and info.started_at is None
    assert [e.name for e in q.read_events(job_id)] == ["cancelled"]
    assert q.metrics()["queue_length"] == 0 and q.active_jobs() == 0


def test_stop_command_kills_a_job_ignoring_cancel_on_forking_worker(env):
    q = env.queue(env.fork)
    q.cancel_grace_seconds = 0.3
    sent_before = q.metrics()["stop_command_sent"]
    job_id = q.enqueue("test.stubborn", owner="alice", kwargs={"seconds": 5})
    pid = q.read_events(job_id, block_seconds=5)[0].data["pid"]
    start = time.monotonic()
    assert q.cancel(job_id) is True
    info = wait_state(q, job_id, timeout=3)
    assert info.state is JobState.CANCELLED
    assert time.monotonic() - start < 1.5
    end = time.monotonic() + 2
    while time.monotonic() < end:  # the work horse is really gone
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        pytest.fail("the work horse survived the stop command")
    assert q.metrics()["stop_command_sent"] == sent_before + 1
    assert [e.name for e in q.read_events(job_id)] == ["pid", "cancelled"]
    # the worker itself carries on
    assert wait_state(q, q.enqueue("core.countdown", owner="alice", kwargs={"n": 1})).state is JobState.FINISHED


def test_failure_records_message_without_traceback(worked):
    info = wait_state(worked, worked.enqueue("test.fail", owner="alice", kwargs={"message": "boom 42"}))
    assert info.state is JobState.FAILED and info.error == "boom 42"
    events = worked.read_events(info.id)
    assert [e.name for e in events] == ["about_to_fail", "error"] and events[-1].data == {"error": "boom 42"}
    stored = worked.r.hgetall(worked.store.job_key(info.id))
    assert "Traceback" not in json.dumps(stored)


def test_time_limit(env):
    q = env.queue(env.simple, job_time_limit_seconds=1)
    start = time.monotonic()
    info = wait_state(q, q.enqueue("test.sleepy", owner="alice", kwargs={"seconds": 10}))
    assert 0.9 < time.monotonic() - start < 3
    assert info.state is JobState.FAILED and "time limit of 1 s" in info.error


def test_events_expire_after_ttl(env):
    q = env.queue(env.simple, job_event_ttl_seconds=1)
    job_id = q.enqueue("core.countdown", owner="alice", kwargs={"n": 1, "delay": 0})
    wait_state(q, job_id)
    assert 0 < q.r.pttl(q.store.events_key(job_id)) <= 1000
    assert 0 < q.r.pttl(q.store.job_key(job_id)) <= 1000
    time.sleep(1.1)
    assert q.info(job_id) is None and q.read_events(job_id) == []


def test_unknown_job_name_and_missing_redis_url(env):
    from core.errors import StartupError
    from core.jobs.rq_backend import RQQueue

    q = env.queue(env.idle)
    with pytest.raises(UnknownJob):
        q.enqueue("no.such.job", owner="alice")
    assert q.metrics()["queue_length"] == 0
    with pytest.raises(StartupError, match="SERVICE_REDIS_URL"):
        RQQueue(env.app, Settings.load({"job_backend": "rq"}, environ={}), {})


def test_worker_watchdog_marks_a_killed_work_horse_failed(env):
    q = env.queue(env.fork)
    job_id = q.enqueue("test.stubborn", owner="alice", kwargs={"seconds": 10})
    pid = q.read_events(job_id, block_seconds=5)[0].data["pid"]
    os.kill(pid, signal.SIGKILL)
    info = wait_state(q, job_id, timeout=5)
    assert info.state is JobState.FAILED and "stopped unexpectedly" in info.error
    assert q.read_events(job_id)[-1].name == "error"


def test_lazy_watchdog_on_read(env):
    from rq.job import Job as RQJob

    q = env.queue(env.idle)
    # a job a worker took and then died with (no heartbeat, RQ job gone)
    running = q.enqueue("core.countdown", owner="alice")
    q.r.hset(q.store.job_key(running), mapping={"state": "running", "started_at": time.time() - 5})
    q.rq_conn.delete(RQJob.key_for(running))
    # a queued job whose RQ job vanished long ago
    lost = q.enqueue("core.countdown", owner="alice")
    q.r.hset(q.store.job_key(lost), "created_at", time.time() - 60)
    q.rq_conn.delete(RQJob.key_for(lost))
    q.rq_queue.remove(lost)
    q.rq_queue.remove(running)
    events = q.read_events(running)
    assert [e.name for e in events] == ["error"]
    assert q.info(running).state is JobState.FAILED and "stopped unexpectedly" in q.info(running).error
    assert q.info(lost).state is JobState.FAILED and "lost" in q.info(lost).error
    assert q.active_jobs() == 0 and q.metrics()["watchdog_ended"] >= 2


def test_rq_reap_ends_lost_jobs(env):
    """The liveness API: ``reap`` ends a job whose worker died though nobody reads it (rate-limited)."""
    from rq.job import Job as RQJob

    q = env.queue(env.idle)
    q._next_reap = 0.0
    running = q.enqueue("core.countdown", owner="alice")
    q.r.hset(q.store.job_key(running), mapping={"state": "running", "started_at": time.time() - 5})
    q.rq_conn.delete(RQJob.key_for(running))
    q.rq_queue.remove(running)
    assert q.emits_here(running)  # Redis: any process may append to any job
    assert q.reap() == 1
    assert q.reap() == 0  # at most once per reap_interval
    info = q.r.hgetall(q.store.job_key(running))
    assert info["state"] == "failed" and "stopped unexpectedly" in info["error"]


def test_rq_cancel_requested_is_in_the_job_info(env):
    q = env.queue(env.idle)
    job_id = q.enqueue("core.countdown", owner="alice")
    assert q.info(job_id).cancel_requested is False
    q.r.hset(q.store.job_key(job_id), "state", "running")  # taken by a worker (that has not looked yet)
    assert q.cancel(job_id)
    info = q.info(job_id)
    assert info.cancel_requested and info.state in (JobState.RUNNING, JobState.CANCELLED, JobState.FAILED)


def test_metrics(env):
    q = env.queue(env.fork)
    # a job of its own: under xdist the tests before it in this module may have run on the other process
    info = wait_state(q, q.enqueue("core.countdown", owner="alice", kwargs={"n": 1, "delay": 0}))
    assert info.state is JobState.FINISHED, info.error
    m = q.metrics()
    assert m["backend"] == "redis" and m["job_backend"] == "rq" and m["workers"] == 1
    for key in ("queue_length", "active_jobs", "started", "finished", "cancel_published", "cancel_marker_hit"):
        assert isinstance(m[key], int)
    assert m["started"] >= 1 and m["finished"] >= 1


# --- issue 20: liveness from heartbeats, orphaned work horses ------------------------------------
def _start_dedicated_worker(env, mode: str) -> tuple[str, subprocess.Popen]:
    from rq import Queue, Worker

    queue = f"{env.simple[:9]}-{uuid.uuid4().hex[:6]}"
    env.start_worker(queue, mode)
    proc = env.procs[-1]
    conn = redis.Redis.from_url(REDIS_URL)
    end = time.monotonic() + 30
    while Worker.count(connection=conn, queue=Queue(queue, connection=conn)) < 1:
        assert proc.poll() is None and time.monotonic() < end, "worker did not start"
        time.sleep(0.05)
    return queue, proc


def test_a_sigkilled_worker_leaves_the_metrics_within_two_heartbeats(env):
    from core.jobs.rq_backend import HEARTBEAT_INTERVAL

    queue, proc = _start_dedicated_worker(env, "simple")
    q = env.queue(queue)
    end = time.monotonic() + HEARTBEAT_INTERVAL + 2
    while q.metrics()["workers"] < 1:
        assert time.monotonic() < end, q.metrics()
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = time.monotonic()
    while q.metrics()["workers"] > 0:
        assert time.monotonic() - killed < 2 * HEARTBEAT_INTERVAL + 1, q.metrics()
        time.sleep(0.2)
    assert q.metrics()["workers_registered"] >= 1  # RQ itself still lists it (until its own 420 s TTL)


def test_an_orphaned_work_horse_finishes_its_job_consistently(env):
    from rq.job import Job as RQJob

    queue, proc = _start_dedicated_worker(env, "fork")
    q = env.queue(queue)
    job_id = q.enqueue("test.stubborn", owner="alice", kwargs={"seconds": 3})
    horse = q.read_events(job_id, block_seconds=5)[0].data["pid"]
    proc.send_signal(signal.SIGKILL)  # the main process dies; its work horse carries on
    proc.wait()
    # what RQ's registry clean-up does to a job of a dead worker: marks the RQ job failed
    q.rq_conn.hset(RQJob.key_for(job_id), "status", "failed")
    assert q.info(job_id).state is JobState.RUNNING  # the horse still beats: not failed under its feet
    info = wait_state(q, job_id, timeout=10)
    assert info.state is JobState.FINISHED and info.result == "stubborn", info
    assert [e.name for e in q.read_events(job_id)] == ["pid", "after_sleep", "finished"]
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            os.kill(horse, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)


# --- the worker entry point -------------------------------------------------------------------
if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    from core.app import create_app
    from core.jobs.worker import run_worker

    _queue, _mode = sys.argv[2], sys.argv[3]
    _app = create_app(plugins=[("jobtests", JobTestsPlugin())])  # settings from SERVICE_* variables
    with _app.app_context():
        run_worker(_app, queue=_queue, simple=_mode == "simple", name=f"{_queue}-{os.getpid()}")


def _round_trips(action) -> int:
    """Requests this thread sends to Redis while ``action`` runs (a pipeline is one: one write).

    Other threads of the process (heartbeats, the reaper) are not counted.
    """
    import threading

    from redis.connection import AbstractConnection

    sent = 0
    real = AbstractConnection.send_packed_command
    me = threading.get_ident()

    def counting(self, command, check_health=True):
        nonlocal sent
        sent += threading.get_ident() == me
        return real(self, command, check_health)

    AbstractConnection.send_packed_command = counting  # type: ignore[method-assign]
    try:
        action()
    finally:
        AbstractConnection.send_packed_command = real  # type: ignore[method-assign]
    return sent


def test_enqueue_is_one_round_trip_and_a_chosen_id_two(env):
    """The job record, the active set, the counter and RQ's job and queue push go in one MULTI/EXEC."""
    q = env.queue(env.idle)  # no worker listens here
    q.r.ping(), q.rq_conn.ping()  # both clients connected (a new connection's handshake is not the enqueue's)
    queued, active = q.metrics()["queue_length"], q.active_jobs()  # other tests of the module share this queue
    ids: list[str] = []
    # a queue's first enqueue also asks the server's version (RQ, once per connection); then one per job
    assert _round_trips(lambda: ids.append(q.enqueue("core.countdown", owner="alice", kwargs={"n": 1}))) <= 2
    assert _round_trips(lambda: ids.append(q.enqueue("core.countdown", owner="alice", kwargs={"n": 1}))) == 1
    info = q.info(ids[0])
    assert info.state is JobState.QUEUED and info.owner == "alice"
    assert q.metrics()["queue_length"] == queued + 2 and q.active_jobs() == active + 2
    chosen = str(uuid.uuid4())
    assert _round_trips(lambda: q.enqueue("core.countdown", owner="alice", kwargs={"n": 1}, job_id=chosen)) == 2
    with pytest.raises(ValueError, match="already exists"):
        q.enqueue("core.countdown", owner="alice", kwargs={"n": 1}, job_id=chosen)
    assert q.metrics()["queue_length"] == queued + 3
    for job_id in (*ids, chosen):
        assert q.cancel(job_id) is True


def test_a_simple_worker_job_costs_few_round_trips_and_leaves_no_rq_keys(env):
    """A burst SimpleWorker in this process: its round trips per job (the service's own: the generations, the
    start script, two events, the end; RQ's: the dequeue, the job's hash, one transaction before the job and one
    after, the idle state) and what RQ leaves of a finished job (nothing: ``result_ttl=0``). RQ's own success
    path read the job's dependents, status and executions (25 round trips a job before)."""
    import signal as signals

    from core.jobs.worker import run_worker

    name = f"{env.simple[:9]}-burst"  # cleaned up with the module's queues
    q = env.queue(name)
    raw = redis.Redis.from_url(REDIS_URL)

    def burst(jobs: int) -> tuple[int, list[str]]:
        ids = [q.enqueue("core.countdown", owner="alice", kwargs={"n": 1, "delay": 0}) for _ in range(jobs)]
        handlers = {s: signals.getsignal(s) for s in (signals.SIGINT, signals.SIGTERM)}
        try:
            with env.app.app_context():
                sent = _round_trips(lambda: run_worker(env.app, queue=name, burst=True, simple=True))
        finally:
            for s, handler in handlers.items():
                signals.signal(s, handler)
        return sent, ids

    burst(1)  # the first job's one-off work (scripts loaded, connections made)
    few, few_ids = burst(2)
    many, many_ids = burst(8)
    for job_id in few_ids + many_ids:
        info = q.info(job_id)
        assert info.state is JobState.FINISHED and info.result == {"count": 1}, info
        assert not list(raw.scan_iter(match=f"rq:*{job_id}*", count=1000)), job_id  # job, executions, results
    assert raw.zcard(f"rq:wip:{name}") == 0 and raw.llen(f"rq:queue:{name}:intermediate") == 0
    per_job = (many - few) / 6
    assert per_job <= 9, per_job
