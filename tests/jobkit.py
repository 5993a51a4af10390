"""Test helpers shared by the job-queue, build and scale-out tests: jobs to run, waiting on jobs, stopping processes."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from core.jobs import END_EVENTS
from tests.serverkit import START_SECONDS


# --- jobs the queue tests register (RQ workers import them from here too) ---------------------
def fail(ctx: Any, message: str = "boom 42") -> None:
    ctx.emit("about_to_fail")
    raise ValueError(message)


def sleepy(ctx: Any, seconds: float = 10.0) -> str:
    """Loops until cancelled (or ``seconds`` pass), checking cancel every 10 ms."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ctx.check_cancelled()
        time.sleep(0.01)
    return "slept"


def wait_state(q: Any, job_id: str, timeout: float = 10.0, states: Iterable[Any] | None = None) -> Any:
    """Poll ``q.info(job_id)`` until the job reaches one of ``states`` (default: any end state)."""
    wanted = set(states) if states else None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        info = q.info(job_id)
        if info is not None and (info.state in wanted if wanted else info.state.terminal):
            return info
        time.sleep(0.01)
    raise AssertionError(f"job {job_id} did not reach {wanted or 'an end'}: {q.info(job_id)}")


def drain(q: Any, job_id: str, timeout: float = 10.0, block_seconds: float = 0.5) -> list[Any]:
    """Every event until the end event, by cursor with blocking reads."""
    events: list[Any] = []
    cursor = None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        batch = q.read_events(job_id, cursor, block_seconds=block_seconds)
        events += batch
        if batch:
            cursor = batch[-1].id
            if batch[-1].name in END_EVENTS.values():
                return events
    raise AssertionError(f"no end event: {events}")


def stop_processes(procs: Iterable[subprocess.Popen[Any]], timeout: float = 10.0) -> None:
    """SIGTERM every process still running, wait, and SIGKILL those that do not stop."""
    procs = list(procs)
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        wait_or_kill(proc, timeout)


def wait_or_kill(proc: subprocess.Popen[Any], timeout: float) -> None:
    """Wait ``timeout`` seconds for ``proc`` to end, then SIGKILL it."""
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def redis_or_skip(url: str, *, decode: bool = True) -> Any:
    """A client of the Redis at ``url``, or skip the test when none answers."""
    import pytest
    import redis

    client = redis.Redis.from_url(url, decode_responses=decode)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {url}: {exc}")
    return client


def describe_processes(procs: Iterable[subprocess.Popen[Any]]) -> str:
    """``pid 12 running, pid 13 exited with 1``: what a failed start's message says of its processes."""
    return ", ".join(
        f"pid {p.pid} " + ("running" if p.poll() is None else f"exited with {p.returncode}") for p in procs
    )


def wait_rq_workers(
    conn: Any,
    queues: Iterable[str],
    procs: Iterable[subprocess.Popen[Any]],
    describe: Callable[[], str],
    count: int = 1,
    timeout: float | None = None,
) -> None:
    """Poll until ``count`` RQ workers listen on each queue (ready: registered and listening).

    Fails at once when a process ends first, or after ``timeout`` (default :data:`START_SECONDS`); the
    message names the queue still waiting, the workers it has, each process's state, then ``describe()``
    (the processes' logs).
    """
    import pytest
    from rq import Queue, Worker

    procs = list(procs)
    bound = START_SECONDS if timeout is None else timeout
    started = time.monotonic()
    for name in queues:
        while (listening := Worker.count(connection=conn, queue=Queue(name, connection=conn))) < count:
            ended = any(p.poll() is not None for p in procs)
            if ended or time.monotonic() - started > bound:
                why = "a worker process ended" if ended else f"not ready after {bound:g} s"
                pytest.fail(
                    f"RQ workers did not start ({why}): queue {name} has {listening} of {count} worker(s); "
                    f"{describe_processes(procs)}\n{describe() or '(no output)'}"
                )
            time.sleep(0.05)


def forget_queues(raw: Any, queues: Iterable[str], *, dedicated_db: bool = False) -> None:
    """Delete every key of ``queues`` (ours and RQ's, jobs included) from the bytes client ``raw``.

    With ``dedicated_db``, RQ's own bookkeeping keys go too once no queue is left.
    """
    doomed: list[bytes] = []
    job_ids: set[bytes] = set()
    for queue in queues:
        for key in raw.scan_iter(match=f"*{queue}*", count=1000):
            doomed.append(key)
            if b":job:" in key or b":events:" in key:
                job_ids.add(key.rsplit(b":", 1)[1])
        raw.srem("rq:queues", f"rq:queue:{queue}")
    for job_id in job_ids:
        doomed.extend(raw.scan_iter(match=b"rq:*" + job_id + b"*", count=1000))
    if doomed:
        raw.delete(*doomed)
    if dedicated_db and not raw.scard("rq:queues"):
        raw.delete("rq:clean_groups", "rq:queues")


@contextlib.contextmanager
def rq_worker_process(raw: Any, queue: str, args: list[str], env: dict[str, str], log: Path) -> Iterator[Any]:
    """A worker process on ``queue`` (output in ``log``), listening when entered; stopped and its queue's
    keys deleted on exit (``raw``: a bytes client of a Redis db dedicated to these tests)."""
    with open(log, "w") as out:
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_rq_workers(raw, [queue], [proc], lambda: log.read_text()[-3000:])
        yield proc
    finally:
        stop_processes([proc])
        forget_queues(raw, [queue], dedicated_db=True)


@contextlib.contextmanager
def rq_app(
    config: dict[str, Any],
    queue: str,
    worker_env: dict[str, str],
    worker_script: Path,
    raw: Any,
    database_url: str | None,
    plugins: Any = None,
) -> Iterator[tuple[Any, Any]]:
    """A test app whose jobs go to RQ queue ``queue``, served by ``worker_script worker <queue>`` (a real
    worker process sharing the database): yields the app and its queue; on exit the worker stops, the
    queue's keys go and the database is emptied (PostgreSQL) or disposed (the module's SQLite file)."""
    import sys

    from core import db
    from core.app import create_app, state
    from core.jobs.rq_backend import RQQueue

    if database_url:
        config = {**config, "database_url": database_url}
        worker_env = {**worker_env, "SERVICE_DATABASE_URL": database_url}
    app = create_app(config=config, plugins=plugins)
    app.testing = True
    svc = state(app)
    svc.jobs = RQQueue(app, svc.settings, svc.job_registry, queue_name=queue)
    args = [sys.executable, str(worker_script), "worker", queue]
    try:
        with rq_worker_process(raw, queue, args, worker_env, Path(config["config_dir"]) / "worker.log"):
            yield app, svc.jobs
    finally:
        svc.jobs.close()
        if database_url:
            db.truncate_all(svc.engine)
        else:
            db.dispose_engine(svc.settings)
