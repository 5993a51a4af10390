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
from core.jobs import JobCancelled, JobState, UnknownJob
from core.jobs.backends import make_queue
from core.jobs.inprocess import InProcessQueue
from core.jobs.inprocess_store import Store
from core.records import Job
from core.settings import Settings
from tests.jobkit import drain, wait_or_kill, wait_state


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


def stamped(ctx, n=5, delay=0.05):
    """Emits ``n`` events carrying the wall time they were written at."""
    for _ in range(n):
        time.sleep(delay)
        ctx.emit("t", {"t": time.time()})


TEST_JOBS = [Job(f"test.{f.__name__}", f) for f in (fail, sleepy, stubborn, context_probe, not_json, stamped)]


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
    return InProcessQueue(japp, settings, state(japp).job_registry, store=store or Store())


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


# --- several processes, one config directory ----------------------------------------------------
# A peer is a separate Python process with its own app and InProcessQueue over the shared config
# directory (as gunicorn workers are), driven by JSON commands on stdin.
PEER = textwrap.dedent("""
    import json, os, sys, time
    from core.app import create_app, state
    from tests.core.test_jobs import JobTestsPlugin
    config_dir, name = sys.argv[1], sys.argv[2]
    app = create_app(config={"config_dir": config_dir, "database_url": f"sqlite:///{config_dir}/{name}.db",
                             "rate_limit_storage_uri": "memory://", "log_level": "error"},
                     plugins=[("jobtests", JobTestsPlugin())])
    q = state(app).jobs
    print(json.dumps({"pid": os.getpid()}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        op, args = cmd.pop("op"), cmd
        try:
            if op == "enqueue":
                out = q.enqueue(args["name"], owner=args.get("owner", "alice"), kwargs=args.get("kwargs"),
                                meta=args.get("meta"))
            elif op == "info":
                i = q.info(args["job"])
                out = None if i is None else {**i.__dict__, "state": i.state.value}
            elif op == "read":
                start = time.monotonic()
                events = q.read_events(args["job"], args.get("after"), block_seconds=args.get("block", 0.0),
                                       limit=args.get("limit", 1000))
                out = {"events": [[e.id, e.name, e.data] for e in events], "waited": time.monotonic() - start,
                       "at": time.time()}
            elif op == "cancel":
                out = q.cancel(args["job"])
            elif op == "emit":
                out = q.emit(args["job"], args["name"], args.get("data"))
            elif op == "active":
                out = q.active_jobs()
            elif op == "set":
                setattr(q, args["attr"], args["value"])
                out = True
            else:
                raise ValueError(op)
            print(json.dumps({"ok": out}), flush=True)
        except Exception as exc:
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
""")


class Peer:
    def __init__(self, config_dir, name: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        env["SERVICE_ENV_FILE"] = os.devnull
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PEER, str(config_dir), name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=root,
        )
        first = self.proc.stdout.readline()
        assert first, f"peer {name} did not start"
        self.pid = json.loads(first)["pid"]

    def send(self, op: str, **args):
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()

    def result(self):
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise AssertionError(reply["error"])
        return reply["ok"]

    def __call__(self, op: str, **args):
        self.send(op, **args)
        return self.result()

    def wait_terminal(self, job_id, timeout=5.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            info = self("info", job=job_id)
            if info is not None and info["state"] in ("finished", "failed", "cancelled"):
                return info
            time.sleep(0.01)
        raise AssertionError(f"job {job_id} did not end: {self('info', job=job_id)}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            wait_or_kill(self.proc, 10)


@pytest.fixture(scope="module")
def peers(tmp_path_factory):
    config_dir = tmp_path_factory.mktemp("shared-config")
    a, b = Peer(config_dir, "a"), Peer(config_dir, "b")
    assert a.pid != b.pid
    yield a, b
    a.close()
    b.close()


def test_other_process_sees_info_and_events_by_cursor(peers):
    a, b = peers
    job_id = a("enqueue", name="core.countdown", owner="alice", kwargs={"n": 3, "delay": 0}, meta={"flow": "f1"})
    info = b.wait_terminal(job_id)
    assert info["owner"] == "alice" and info["name"] == "core.countdown" and info["meta"] == {"flow": "f1"}
    assert info["state"] == "finished" and info["result"] == {"count": 3} and info["error"] is None
    assert info["created_at"] <= info["started_at"] <= info["ended_at"]
    own = a("read", job=job_id)["events"]
    first = b("read", job=job_id, limit=2)["events"]
    rest = b("read", job=job_id, after=first[-1][0])["events"]
    assert first + rest == own  # same ids, names and data in both processes
    assert [e[1] for e in own] == ["tick", "tick", "tick", "done", "finished"]
    tail = b("read", job=job_id, after=rest[-1][0])
    assert tail["events"] == [] and tail["waited"] < 0.1
    # a cursor from the other process continues where the owner's left off, and vice versa
    assert a("read", job=job_id, after=first[0][0])["events"] == own[1:]
    with pytest.raises(AssertionError, match="invalid event cursor"):
        b("read", job=job_id, after="not-a-cursor")
    with pytest.raises(AssertionError, match="invalid event cursor"):
        b("read", job=job_id, after=str(int(own[0][0]) - 1))  # not the end of an event
    assert b("info", job="no-such-job") is None and b("read", job="no-such-job")["events"] == []
    assert b("info", job="../../etc/passwd") is None
    assert b("emit", job=job_id, name="late") == ""  # ended (and only the owner appends)


def test_blocking_read_in_another_process_wakes_on_new_event(peers):
    a, b = peers
    job_id = a("enqueue", name="core.countdown", kwargs={"n": 2, "delay": 0.4})
    first = b("read", job=job_id, block=2)["events"]
    assert first and first[0][1] == "tick"
    second = b("read", job=job_id, after=first[-1][0], block=3)
    assert [e[2] for e in second["events"]] == [{"i": 1}]
    assert 0.2 < second["waited"] < 1.0, second
    assert b("emit", job=job_id, name="intruder") == ""  # only the running process appends
    rest = b("read", job=job_id, after=second["events"][-1][0], block=3)
    assert [e[1] for e in rest["events"]][-1] in ("done", "finished")
    # a blocking read of an ended job past its end returns at once
    end = a("read", job=job_id)["events"][-1][0]
    b.wait_terminal(job_id)
    done = b("read", job=job_id, after=end, block=3)
    assert done["events"] == [] and done["waited"] < 0.1


def test_blocking_read_wakes_promptly_across_processes(peers):
    """A blocked reader of another process sees an event within a few ms (it polls every <= 10 ms)."""
    a, b = peers
    job_id = a("enqueue", name="test.stamped", kwargs={"n": 8, "delay": 0.05})
    cursor, lags = None, []
    while len(lags) < 8:
        got = b("read", job=job_id, after=cursor, block=3)
        assert got["events"], lags
        for _, name, data in got["events"]:
            if name == "t":
                lags.append(got["at"] - data["t"])
        cursor = got["events"][-1][0]
    lags.sort()
    assert lags[len(lags) // 2] < 0.03, lags  # median (10 ms poll + a loaded machine's scheduling)
    assert b.wait_terminal(job_id)["state"] == "finished"


def test_cancel_from_another_process(peers):
    a, b = peers
    job_id = a("enqueue", name="test.sleepy", kwargs={"seconds": 10})
    end = time.monotonic() + 3
    while b("info", job=job_id)["state"] != "running" and time.monotonic() < end:
        time.sleep(0.01)
    assert b("active") >= 1
    start = time.monotonic()
    assert b("cancel", job=job_id) is True
    info = b.wait_terminal(job_id)
    assert time.monotonic() - start < 0.5  # sleepy checks every 10 ms
    assert info["state"] == "cancelled" and info["error"] is None
    names = [e[1] for e in b("read", job=job_id)["events"]]
    assert names == ["cancelled"]
    assert b("cancel", job=job_id) is False and a("cancel", job=job_id) is False


def test_dead_owner_process_ends_its_jobs_for_readers(tmp_path):
    owner, reader, other = Peer(tmp_path, "owner"), Peer(tmp_path, "reader"), Peer(tmp_path, "other")
    try:
        job_id = owner("enqueue", name="core.countdown", kwargs={"n": 100, "delay": 0.05})
        waiting = owner("enqueue", name="test.sleepy", kwargs={"seconds": 30})
        first = reader("read", job=job_id, block=2)["events"]
        assert first and reader("info", job=job_id)["state"] == "running"
        reader.send("read", job=waiting, block=10)  # blocked while its process dies
        os.kill(owner.pid, 9)
        owner.proc.wait(5)
        woke = reader.result()
        assert woke["waited"] < 2.0  # liveness is re-checked every 0.5 s
        assert [e[1] for e in woke["events"]] == ["error"]
        # two processes notice at once: exactly one end event is appended
        other.send("info", job=job_id)
        info = reader("info", job=job_id)
        other_info = other.result()
        assert info["state"] == other_info["state"] == "failed"
        assert info["error"] == "The worker running this job stopped unexpectedly"
        events = reader("read", job=job_id)["events"]
        assert [e[1] for e in events].count("error") == 1 and events[-1][1] == "error"
        assert events[-1][2] == {"error": info["error"]}
        assert reader("active") == 0 and other("active") == 0
        assert reader("cancel", job=job_id) is False
    finally:
        for peer in (owner, reader, other):
            peer.close()


def test_jobs_expire_in_every_process(peers, tmp_path):
    a, b = peers
    a("set", attr="event_ttl", value=0.5)
    try:
        job_id = a("enqueue", name="core.countdown", kwargs={"n": 1, "delay": 0})
        b.wait_terminal(job_id)
        assert b("read", job=job_id)["events"]
        time.sleep(0.7)
        assert b("info", job=job_id) is None and b("read", job=job_id)["events"] == []
        assert a("info", job=job_id) is None
    finally:
        a("set", attr="event_ttl", value=3600)


# --- the same paths in one process: a queue with its own store is "another process" --------------
def test_remote_paths_in_process(japp, queue):
    other = make(japp)  # its own store: sees queue's jobs only through the files
    job_id = queue.enqueue("test.sleepy", owner="alice", kwargs={"seconds": 10})
    assert other.info_for(job_id, "alice").id == job_id and other.info_for(job_id, "bob") is None
    assert not other.runs_here(job_id) and queue.runs_here(job_id)
    assert other.emit(job_id, "x") == ""
    assert other.cancel(job_id) is True
    info = wait_state(other, job_id)
    assert info.state is JobState.CANCELLED
    assert queue.metrics()["cancel_marker_hit"] >= 1
    with pytest.raises(ValueError):
        queue.enqueue("core.countdown", owner="alice", job_id=job_id)  # the id is taken
    with pytest.raises(ValueError):
        queue.enqueue("core.countdown", owner="alice", job_id="../escape")


def test_job_of_another_host_is_ended_by_a_reader(japp, queue):
    job_id = queue.enqueue("test.sleepy", owner="alice", kwargs={"seconds": 10})
    files = queue.files
    end = time.monotonic() + 5
    while queue.info(job_id).state is not JobState.RUNNING and time.monotonic() < end:
        time.sleep(0.005)  # its thread rewrites the record when it starts
    record = files.read_info(job_id)
    # pretend it was started by a process of another machine (or of this one before a reboot)
    with queue.store.lock:
        local = queue.store.jobs.pop(job_id)
    with local.lock:
        local.info.state = JobState.FAILED  # the real thread stops at its next check and writes nothing
    files.write_info(job_id, {**record, "host": "elsewhere/boot"})
    other = make(japp)
    info = other.info(job_id)
    assert info.state is JobState.FAILED and info.error == "The worker running this job stopped unexpectedly"
    assert [e.name for e in other.read_events(job_id)] == ["error"]
    assert other.active_jobs() == 0
    assert other.metrics()["orphans_ended"] == 1


def test_many_events_are_read_from_the_file_beyond_memory(japp, monkeypatch):
    from core.jobs import inprocess

    monkeypatch.setattr(inprocess, "MAX_EVENTS", 5)
    q = make(japp)

    def chatty(ctx):
        for i in range(12):
            ctx.emit("n", i)

    q.registry = {**q.registry, "test.chatty": Job("test.chatty", chatty)}
    job_id = q.enqueue("test.chatty", owner="alice")
    wait_state(q, job_id)
    assert [e.data for e in q.read_events(job_id)][:12] == list(range(12))
    assert [e.data for e in make(japp).read_events(job_id)][:12] == list(range(12))
