"""The in-process job backend: jobs run in threads of the web process.

Under gunicorn's gevent workers the threads are greenlets (``threading`` is
monkey-patched); without gevent they are ordinary threads. Job records and
event streams live in memory in a store shared by every queue of the process,
so an app rebuilt behind the WSGI holder still sees the jobs the previous app
started. Nothing survives a restart and other processes see nothing: use the
``rq`` backend to share jobs between processes.

* Event ids are ``"1"``, ``"2"``, ... per job; the id is the read cursor.
* Every ended job's stream ends with one :data:`core.jobs.END_EVENTS` entry.
* A finished job's record and events expire ``job_event_ttl_seconds`` after it ends.
* ``job_time_limit_seconds`` is cooperative: once passed, ``ctx.cancelled()`` is
  true and a job that stops is marked failed with a time-limit message. A job
  that ignores it is marked failed anyway ``hard_grace_seconds`` later (its
  thread keeps running, but its further events are dropped and ``ctx.emit``
  raises :class:`JobCancelled`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.jobs import END_EVENTS, Event, JobCancelled, JobContext, JobInfo, JobQueue, JobState, UnknownJob

if TYPE_CHECKING:
    from flask import Flask

    from core.records import Job
    from core.settings import Settings

log = logging.getLogger(__name__)

MAX_EVENTS = 10_000  # per job; the oldest are dropped beyond this (as Redis' MAXLEN ~)


def to_json_value(value: Any, what: str) -> Any:
    """A deep copy of ``value`` through JSON (what the RQ backend stores); TypeError if not JSON."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be JSON-serialisable: {exc}") from None


def error_message(exc: BaseException) -> str:
    """What a failed job reports: the exception's message, never its traceback."""
    return str(exc) or type(exc).__name__


def time_limit_message(limit: float) -> str:
    return f"Job exceeded its time limit of {limit:g} s"


class _Record:
    """One job in the store; every field is guarded by the store's lock."""

    def __init__(self, info: JobInfo, func: Any, kwargs: dict[str, Any], lock: threading.Lock) -> None:
        self.info = info
        self.func = func
        self.kwargs = kwargs
        self.events: deque[Event] = deque(maxlen=MAX_EVENTS)
        self.seq = 0
        self.cond = threading.Condition(lock)
        self.cancel_requested = False
        self.time_limit = 0.0
        self.deadline: float | None = None  # monotonic
        self.expires_at: float | None = None  # monotonic
        self.timed_out = False


class _Store:
    """Job records of one process, shared by every :class:`InProcessQueue`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.jobs: dict[str, _Record] = {}
        self.counters: Counter[str] = Counter()
        self.next_sweep = 0.0


_default_store: _Store | None = None
_default_store_lock = threading.Lock()


def default_store() -> _Store:
    global _default_store
    with _default_store_lock:
        if _default_store is None:
            _default_store = _Store()
        return _default_store


class _Context(JobContext):
    def __init__(self, queue: InProcessQueue, record: _Record) -> None:
        self.job_id = record.info.id
        self.owner = record.info.owner
        self.app = queue.app
        self._queue = queue
        self._record = record
        self.cancel_seen = False

    def emit(self, name: str, data: Any = None) -> str:
        event_id = self._queue.emit(self.job_id, name, data)
        if not event_id:  # the job was ended from outside (hard time limit)
            raise JobCancelled(self.job_id)
        return event_id

    def cancelled(self) -> bool:
        record = self._record
        if not record.cancel_requested and record.deadline is not None and time.monotonic() > record.deadline:
            with self._queue.store.lock:
                record.timed_out = True
        if record.cancel_requested or record.timed_out or record.info.state.terminal:
            self.cancel_seen = True
            return True
        return False


class InProcessQueue(JobQueue):
    """Jobs in threads (greenlets under gevent), events in memory."""

    backend = "inprocess"
    #: how long past its time limit a job that ignores ``cancelled()`` keeps its RUNNING state
    hard_grace_seconds = 30.0
    sweep_interval = 1.0

    def __init__(self, app: Flask, settings: Settings, registry: Mapping[str, Job], *,
                 store: _Store | None = None) -> None:
        self.app = app
        self.settings = settings
        self.registry = registry
        self.store = store or default_store()
        self.event_ttl = float(settings.job_event_ttl_seconds)
        self.time_limit = float(settings.job_time_limit_seconds)
        self._threads: set[threading.Thread] = set()
        self._closed = False

    # --- enqueue and run -----------------------------------------------------------
    def enqueue(self, name: str, *, owner: str, kwargs: Mapping[str, Any] | None = None,
                job_id: str | None = None, meta: Mapping[str, Any] | None = None) -> str:
        job = self.registry.get(name)
        if job is None:
            raise UnknownJob(name)
        if self._closed:
            raise RuntimeError("the job queue is closed")
        args = to_json_value(dict(kwargs or {}), "job kwargs")
        job_id = job_id or str(uuid.uuid4())
        info = JobInfo(id=job_id, name=name, owner=str(owner), state=JobState.QUEUED, created_at=time.time(),
                       meta=to_json_value(dict(meta or {}), "job meta"))
        store = self.store
        self._sweep()
        with store.lock:
            if job_id in store.jobs:
                raise ValueError(f"job {job_id} already exists")
            record = _Record(info, job.func, args, store.lock)
            record.time_limit = self.time_limit
            store.jobs[job_id] = record
            store.counters["enqueued"] += 1
        thread = threading.Thread(target=self._run, args=(record,), name=f"job-{name}-{job_id[:8]}", daemon=True)
        self._threads.add(thread)
        thread.start()
        return job_id

    def _run(self, record: _Record) -> None:
        store = self.store
        info = record.info
        try:
            with store.lock:
                if info.state is not JobState.QUEUED:  # cancelled before it started
                    return
                info.state = JobState.RUNNING
                info.started_at = time.time()
                if record.time_limit:
                    record.deadline = time.monotonic() + record.time_limit
                store.counters["started"] += 1
            ctx = _Context(self, record)
            try:
                with self.app.app_context():
                    try:
                        result = to_json_value(record.func(ctx, **record.kwargs), "job result")
                    finally:
                        factory = self.app.extensions.get("service.db")
                        if factory is not None:
                            factory.remove()
            except JobCancelled:
                if record.timed_out:
                    self._end(record, JobState.FAILED, error=time_limit_message(record.time_limit))
                else:
                    self._end(record, JobState.CANCELLED)
            except Exception as exc:
                log.exception("job %s (%s) failed", info.id, info.name)
                if record.timed_out:
                    self._end(record, JobState.FAILED, error=time_limit_message(record.time_limit))
                else:
                    self._end(record, JobState.FAILED, error=error_message(exc))
            else:
                if record.timed_out and ctx.cancel_seen:
                    self._end(record, JobState.FAILED, error=time_limit_message(record.time_limit))
                elif record.cancel_requested and ctx.cancel_seen:
                    self._end(record, JobState.CANCELLED)
                else:
                    self._end(record, JobState.FINISHED, result=result)
        finally:
            self._threads.discard(threading.current_thread())

    def _end(self, record: _Record, state: JobState, *, result: Any = None, error: str | None = None) -> bool:
        """Move a job to a terminal state and append its end event (first caller wins)."""
        with self.store.lock:
            info = record.info
            if info.state.terminal:
                return False
            info.state = state
            info.ended_at = time.time()
            info.result = result
            info.error = error
            record.expires_at = time.monotonic() + self.event_ttl
            self._append(record, END_EVENTS[state], {"error": error} if state is JobState.FAILED else None)
            self.store.counters[state.value] += 1
            return True

    def _append(self, record: _Record, name: str, data: Any) -> str:
        record.seq += 1
        event = Event(id=str(record.seq), name=name, data=data)
        record.events.append(event)
        record.cond.notify_all()
        return event.id

    # --- reading -------------------------------------------------------------------
    def _get(self, job_id: str) -> _Record | None:
        """The live record (expired ones are gone); applies the hard time limit. Lock held."""
        record = self.store.jobs.get(job_id)
        if record is None:
            return None
        now = time.monotonic()
        if record.expires_at is not None and now > record.expires_at:
            del self.store.jobs[job_id]
            self.store.counters["expired"] += 1
            return None
        return record

    def _check_hard_limit(self, record: _Record | None) -> None:
        if (record is not None and record.deadline is not None and record.info.state is JobState.RUNNING
                and time.monotonic() > record.deadline + self.hard_grace_seconds):
            record.timed_out = True
            log.warning("job %s ignored its time limit; marking it failed", record.info.id)
            self._end(record, JobState.FAILED, error=time_limit_message(record.time_limit))

    def info(self, job_id: str) -> JobInfo | None:
        self._sweep()
        with self.store.lock:
            record = self._get(job_id)
        self._check_hard_limit(record)
        if record is None:
            return None
        with self.store.lock:
            i = record.info
            return JobInfo(id=i.id, name=i.name, owner=i.owner, state=i.state, created_at=i.created_at,
                           started_at=i.started_at, ended_at=i.ended_at, result=i.result, error=i.error,
                           meta=dict(i.meta))

    def emit(self, job_id: str, name: str, data: Any = None) -> str:
        """Append an event; returns "" when the job is unknown or has already ended."""
        data = to_json_value(data, "event data")
        with self.store.lock:
            record = self._get(job_id)
            if record is None or record.info.state.terminal:
                return ""
            return self._append(record, str(name), data)

    def read_events(self, job_id: str, after: str | None = None, *, block_seconds: float = 0.0,
                    limit: int = 1000) -> list[Event]:
        cursor = _parse_cursor(after)
        with self.store.lock:
            record = self._get(job_id)
        self._check_hard_limit(record)
        if record is None:
            return []
        deadline = time.monotonic() + max(0.0, block_seconds)
        with record.cond:
            while True:
                if record.seq > cursor:
                    events = [e for e in record.events if int(e.id) > cursor]
                    return events[:limit]
                remaining = deadline - time.monotonic()
                if remaining <= 0 or record.info.state.terminal:
                    return []
                record.cond.wait(remaining)

    def cancel(self, job_id: str) -> bool:
        with self.store.lock:
            record = self._get(job_id)
            if record is None or record.info.state.terminal:
                return False
            record.cancel_requested = True
            self.store.counters["cancel_requested"] += 1
            queued = record.info.state is JobState.QUEUED
        if queued:
            self._end(record, JobState.CANCELLED)
        return True

    def active_jobs(self) -> int:
        self._sweep()
        with self.store.lock:
            return sum(1 for r in self.store.jobs.values() if not r.info.state.terminal)

    def metrics(self) -> dict[str, Any]:
        self._sweep()
        with self.store.lock:
            states = Counter(r.info.state.value for r in self.store.jobs.values())
            counters = dict(self.store.counters)
        return {
            "backend": self.backend,
            "active_jobs": states["queued"] + states["running"],
            "queued": states["queued"],
            "running": states["running"],
            "stored_jobs": sum(states.values()),
            "started": counters.get("started", 0),
            "finished": counters.get("finished", 0),
            "failed": counters.get("failed", 0),
            "cancelled": counters.get("cancelled", 0),
            "cancel_requested": counters.get("cancel_requested", 0),
            "expired": counters.get("expired", 0),
        }

    def _sweep(self) -> None:
        """Drop expired records and enforce hard time limits (at most once per ``sweep_interval``)."""
        now = time.monotonic()
        if now < self.store.next_sweep:
            return
        with self.store.lock:
            self.store.next_sweep = now + self.sweep_interval
            for job_id in [k for k, r in self.store.jobs.items() if r.expires_at is not None and now > r.expires_at]:
                del self.store.jobs[job_id]
                self.store.counters["expired"] += 1
            running = [r for r in self.store.jobs.values() if r.info.state is JobState.RUNNING]
        for record in running:
            self._check_hard_limit(record)

    # --- lifecycle -----------------------------------------------------------------
    def join(self, timeout: float | None = None) -> bool:
        """Wait for the jobs this queue started; True if none is left running."""
        end = None if timeout is None else time.monotonic() + timeout
        for thread in list(self._threads):
            thread.join(None if end is None else max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in list(self._threads))

    def close(self) -> None:
        """Refuse new jobs; running ones finish (the store outlives the app)."""
        self._closed = True


def _parse_cursor(after: str | None) -> int:
    if after is None or after == "":
        return 0
    try:
        return int(after)
    except ValueError:
        raise ValueError(f"invalid event cursor {after!r}") from None


__all__ = ["InProcessQueue", "error_message", "time_limit_message", "to_json_value"]
