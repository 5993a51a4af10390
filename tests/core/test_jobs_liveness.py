"""The job queue's liveness API (``reap``, ``emits_here``) and its ``cancel_requested`` flag, in-process backend.

The RQ side is in tests/core/test_jobs_rq.py (``test_rq_reap_ends_lost_jobs``).
"""

from __future__ import annotations

import time

import pytest

from core import hookimpl
from core.app import state
from core.jobs import JobState
from core.jobs.inprocess import InProcessQueue
from core.jobs.inprocess_store import Store
from core.records import Job
from core.settings import Settings
from tests.jobkit import wait_state


def sleepy(ctx, seconds=10.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ctx.check_cancelled()
        time.sleep(0.01)


def deaf(ctx, seconds=2.0):
    """Ignores cancellation: ends on its own (finished) a while after being asked to stop."""
    time.sleep(seconds)
    return "done anyway"


class Jobs:
    @hookimpl
    def register_jobs(self):
        return [Job("live.sleepy", sleepy), Job("live.deaf", deaf)]


@pytest.fixture
def japp(make_app):
    return make_app(plugins=[("livejobs", Jobs())])


@pytest.fixture
def queue(japp):
    q = state(japp).jobs
    assert isinstance(q, InProcessQueue)
    yield q
    q.join(5)


def other_process(japp) -> InProcessQueue:
    """A queue with its own store: it sees the app's jobs through the files only, as another process would."""
    settings = Settings.load({"config_dir": state(japp).settings.config_dir}, environ={})
    return InProcessQueue(japp, settings, state(japp).job_registry, store=Store())


def _running(queue, job_id):
    return wait_state(queue, job_id, states=[JobState.RUNNING])


def test_reap_ends_the_jobs_of_a_dead_process_without_a_reader(japp, queue):
    job_id = queue.enqueue("live.sleepy", owner="alice")
    _running(queue, job_id)
    record = queue.files.read_info(job_id)
    with queue.store.lock:  # the process running it is gone (another machine, or before a reboot)
        local = queue.store.jobs.pop(job_id)
    with local.lock:
        local.info.state = JobState.FAILED
    queue.files.write_info(job_id, {**record, "host": "elsewhere/boot"})
    other = other_process(japp)
    assert not other.emits_here(job_id)
    assert other.reap() == 1
    assert other.reap() == 0  # once
    info = other.info(job_id)
    assert info.state is JobState.FAILED and info.error == "The worker running this job stopped unexpectedly"


def test_reap_ends_a_local_job_that_ignores_its_hard_time_limit(japp, queue):
    queue.time_limit = 0.05
    queue.hard_grace_seconds = 0.05
    job_id = queue.enqueue("live.deaf", owner="alice", kwargs={"seconds": 1.0})
    _running(queue, job_id)
    assert queue.emits_here(job_id)
    time.sleep(0.2)
    assert queue.reap() == 1
    assert queue.info(job_id).state is JobState.FAILED


def test_cancel_requested_is_seen_by_every_process_before_the_job_stops(japp, queue):
    job_id = queue.enqueue("live.deaf", owner="alice", kwargs={"seconds": 0.5})
    _running(queue, job_id)
    assert queue.info(job_id).cancel_requested is False
    assert queue.cancel(job_id)
    here, there = queue.info(job_id), other_process(japp).info(job_id)
    assert here.state is JobState.RUNNING and here.cancel_requested
    assert there.state is JobState.RUNNING and there.cancel_requested
    ended = wait_state(queue, job_id)
    assert ended.cancel_requested and other_process(japp).info(job_id).cancel_requested
