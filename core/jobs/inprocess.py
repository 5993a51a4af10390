"""The in-process job backend: jobs run in threads of the web process, visible to every process.

Under gunicorn's gevent workers the threads are greenlets (``threading`` is
monkey-patched); without gevent they are ordinary threads. A job runs in the
process that enqueued it. Its record and event stream live twice:

* in memory, in a store shared by every queue of the process (so an app
  rebuilt behind the WSGI holder still sees the jobs the previous app
  started): readers in the same process are served from there and wake on a
  per-job condition at once;
* in files under ``<config_dir>/jobs/`` (:mod:`core.jobs.localstore`), so the
  other web processes of the same config directory see the same job: its
  record, its events by cursor, blocking reads (a short cooperative sleep,
  1 to 10 ms), cancel (a marker file the job sees at its next check) and
  expiry. A reader that finds a job whose process died ends it with a final
  ``error`` event ("The worker running this job stopped unexpectedly").

* Event ids are byte offsets into the job's events file (``"23"``, ``"61"``,
  ...), increasing; the id is the read cursor, valid in every process.
* Every ended job's stream ends with one :data:`core.jobs.END_EVENTS` entry.
* A finished job's record and events expire ``job_event_ttl_seconds`` after it ends.
* ``job_time_limit_seconds`` is cooperative: once passed, ``ctx.cancelled()`` is
  true and a job that stops is marked failed with a time-limit message. A job
  that ignores it is marked failed anyway ``hard_grace_seconds`` later (its
  thread keeps running, but its further events are dropped and ``ctx.emit``
  raises :class:`JobCancelled`); the owning process enforces this.
* Only the process running a job appends its events: ``emit`` for a job of
  another process returns ``""``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.jobs import (
    END_EVENTS,
    Event,
    JobCancelled,
    JobContext,
    JobInfo,
    JobQueue,
    JobState,
    QueueClosed,
    UnknownJob,
    error_message,
    run_to_end,
    time_limit_message,
)
from core.jobs.inprocess_store import (
    Record,
    Store,
    default_store,
    info_from_file,
    json_text,
    parse_cursor,
    to_json_value,
)
from core.jobs.localstore import JobFiles, event_line, process_alive, valid_id

if TYPE_CHECKING:
    from flask import Flask

    from core.records import Job
    from core.settings import Settings

log = logging.getLogger(__name__)

MAX_EVENTS = 10_000  # per job kept in memory; older ones are still read from the events file


class _Context(JobContext):
    def __init__(self, queue: InProcessQueue, record: Record) -> None:
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
        if not record.cancel_requested and record.files.cancel_requested(record.info.id):
            with record.lock:  # asked by another process
                record.cancel_requested = True
            self._queue._count("cancel_marker_hit")
        if not record.cancel_requested and record.deadline is not None and time.monotonic() > record.deadline:
            with record.lock:
                record.timed_out = True
        if record.cancel_requested or record.timed_out or record.info.state.terminal:
            self.cancel_seen = True
            return True
        return False


class InProcessQueue(JobQueue):
    """Jobs in threads (greenlets under gevent); records and events in memory and in shared files."""

    backend = "inprocess"
    #: how long past its time limit a job that ignores ``cancelled()`` keeps its RUNNING state
    hard_grace_seconds = 30.0
    sweep_interval = 1.0
    #: how often one process of the config directory deletes expired job files
    file_sweep_interval = 30.0
    #: a blocked reader of another process's job re-checks the events file at most this often
    poll_max_seconds = 0.01
    #: ... and whether the job's process is still alive this often
    liveness_interval = 0.5

    def __init__(
        self, app: Flask, settings: Settings, registry: Mapping[str, Job], *, store: Store | None = None
    ) -> None:
        self.app = app
        self.settings = settings
        self.registry = registry
        self.store = store or default_store()
        self.files = JobFiles(settings.resolved_config_dir / "jobs")
        self.event_ttl = float(settings.job_event_ttl_seconds)
        self.time_limit = float(settings.job_time_limit_seconds)
        self._threads: set[threading.Thread] = set()
        self._closed = False
        self._next_file_sweep = 0.0

    # --- enqueue and run -----------------------------------------------------------
    def enqueue(
        self,
        name: str,
        *,
        owner: str,
        kwargs: Mapping[str, Any] | None = None,
        job_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        job = self.registry.get(name)
        if job is None:
            raise UnknownJob(name)
        if self._closed:
            raise QueueClosed("the job queue is closed")
        args = to_json_value(dict(kwargs or {}), "job kwargs")
        job_id = job_id or str(uuid.uuid4())
        if not valid_id(job_id):
            raise ValueError(f"invalid job id {job_id!r}")
        info = JobInfo(
            id=job_id,
            name=name,
            owner=str(owner),
            state=JobState.QUEUED,
            created_at=time.time(),
            meta=to_json_value(dict(meta or {}), "job meta"),
        )
        store = self.store
        self._sweep()
        with store.lock:
            taken = job_id in store.jobs
        if taken or self.files.exists(job_id):
            raise ValueError(f"job {job_id} already exists")
        record = Record(info, job.func, args, self.files, self.event_ttl, MAX_EVENTS)
        record.time_limit = self.time_limit
        self.files.write_info(job_id, record.file_record())  # the record first, then the marker
        try:
            self.files.mark_active(job_id)
        except FileExistsError:
            raise ValueError(f"job {job_id} already exists") from None
        with store.lock:
            store.jobs[job_id] = record
            store.counters["enqueued"] += 1
        thread = threading.Thread(target=self._run, args=(record,), name=f"job-{name}-{job_id[:8]}", daemon=True)
        self._threads.add(thread)
        thread.start()
        return job_id

    def _run(self, record: Record) -> None:
        info = record.info
        try:
            if record.files.cancel_requested(info.id):  # another process cancelled it before it started
                with record.lock:
                    record.cancel_requested = True
                self._count("cancel_marker_hit")
                self._end(record, JobState.CANCELLED)
                return
            with record.lock:
                if info.state is not JobState.QUEUED:  # cancelled before it started
                    return
                info.state = JobState.RUNNING
                info.started_at = time.time()
                if record.time_limit:
                    record.deadline = time.monotonic() + record.time_limit
                record.files.write_info(info.id, record.file_record())
            self._count("started")
            ctx = _Context(self, record)

            def call() -> Any:
                with self.app.app_context():
                    try:
                        return to_json_value(record.func(ctx, **record.kwargs), "job result")
                    finally:
                        factory = self.app.extensions.get("service.db")
                        if factory is not None:
                            factory.remove()

            ending = run_to_end(
                call,
                limit=record.time_limit,
                timed_out=lambda: record.timed_out,
                cancel_seen=lambda: ctx.cancel_seen,
                cancel_requested=lambda: record.cancel_requested,
                on_error=lambda exc: log.exception("job %s (%s) failed", info.id, info.name),
            )
            self._end(record, ending.state, result=ending.result, error=ending.error, event_data=ending.event_data)
        finally:
            self._threads.discard(threading.current_thread())

    def _end(
        self,
        record: Record,
        state: JobState,
        *,
        result: Any = None,
        error: str | None = None,
        event_data: Any = None,
    ) -> bool:
        """Move a job to a terminal state and append its end event (first caller wins).

        The end event is written before the terminal record: a process that sees the
        record ended finds the end event in the file.
        """
        with record.lock:
            info = record.info
            if info.state.terminal:
                return False
            try:
                data = {"error": error} if state is JobState.FAILED else event_data
                self._append(record, END_EVENTS[state], json.dumps(data))
            except OSError:
                log.exception("job %s: could not write its end event", info.id)
            info.state = state
            info.ended_at = time.time()
            info.result = result
            info.error = error
            record.expires_at = time.monotonic() + self.event_ttl
            try:
                record.files.write_info(info.id, record.file_record())
            except OSError:
                log.exception("job %s: could not write its record", info.id)
            record.files.unmark_active(info.id)
        self._count(state.value)
        return True

    def _append(self, record: Record, name: str, data_json: str) -> str:
        """Append an event to the file and to memory (the record's lock held); returns its id."""
        line = event_line(name, data_json)
        record.files.append(record.info.id, line)
        record.size += len(line)
        event = Event(id=str(record.size), name=name, data=json.loads(data_json))
        if len(record.events) == MAX_EVENTS:
            record.dropped_upto = int(record.events[0].id)
        record.events.append(event)
        record.cond.notify_all()
        return event.id

    # --- reading -------------------------------------------------------------------
    def _count(self, name: str) -> None:
        with self.store.lock:
            self.store.counters[name] += 1

    def _get(self, job_id: str) -> Record | None:
        """The live local record (expired ones are gone); the store's lock held."""
        record = self.store.jobs.get(job_id)
        if record is None:
            return None
        now = time.monotonic()
        if record.expires_at is not None and now > record.expires_at:
            self._expire_local(job_id)
            return None
        return record

    def _expire_local(self, job_id: str) -> None:
        record = self.store.jobs.pop(job_id)
        self.store.counters["expired"] += 1
        record.files.remove(job_id)

    def _remote(self, job_id: str) -> dict[str, Any] | None:
        """The file record of a job run by another process: expired ones are removed, orphans ended."""
        return self._remote_reaped(job_id)[0]

    def _remote_reaped(self, job_id: str) -> tuple[dict[str, Any] | None, bool]:
        """:meth:`_remote`, and whether this call ended the job (its process was gone)."""
        if not valid_id(job_id):
            return None, False
        data = self.files.read_info(job_id)
        if data is None:
            return None, False
        if JobState(data["state"]).terminal:
            if (data.get("ended_at") or 0) + float(data.get("ttl") or self.event_ttl) < time.time():
                self.files.remove(job_id)
                self._count("expired")
                return None, False
            return data, False
        if not process_alive(data):
            ended = self.files.end_orphan(job_id)
            if ended is not None and ended is not data and JobState(ended["state"]).terminal:
                log.warning("job %s: its process %s is gone; marked %s", job_id, data.get("pid"), ended["state"])
                self._count("orphans_ended")
                return ended, True
            return ended, False
        return data, False

    def _check_hard_limit(self, record: Record | None) -> bool:
        """End a local job that ignored its time limit past the hard grace; True if it was ended now."""
        if (
            record is not None
            and record.deadline is not None
            and record.info.state is JobState.RUNNING
            and time.monotonic() > record.deadline + self.hard_grace_seconds
        ):
            record.timed_out = True
            log.warning("job %s ignored its time limit; marking it failed", record.info.id)
            return self._end(record, JobState.FAILED, error=time_limit_message(record.time_limit))
        return False

    def emits_here(self, job_id: str) -> bool:
        """True when this process runs (or ran) the job: only it can append events to it."""
        with self.store.lock:
            return self._get(job_id) is not None

    runs_here = emits_here

    def reap(self) -> int:
        """End the active jobs of the config directory whose process is gone, and this process's jobs past
        their hard time limit (the next reader would; this ends them when nobody reads). Returns how many."""
        with self.store.lock:
            running = [r for r in self.store.jobs.values() if r.info.state is JobState.RUNNING]
        ended = sum(self._check_hard_limit(record) for record in running)
        self._sweep()
        for job_id in self.files.active_ids():
            with self.store.lock:
                record = self._get(job_id)
            if record is not None:
                ended += self._check_hard_limit(record)
                continue
            data, reaped = self._remote_reaped(job_id)
            ended += reaped
            if data is None or JobState(data["state"]).terminal:
                self.files.unmark_active(job_id)
        return ended

    def info(self, job_id: str) -> JobInfo | None:
        self._sweep()
        with self.store.lock:
            record = self._get(job_id)
        if record is None:
            data = self._remote(job_id)
            if data is None:
                return None
            info = info_from_file(data)
            if not info.cancel_requested and self.files.cancel_requested(job_id):  # asked from another process
                info.cancel_requested = True
            return info
        self._check_hard_limit(record)
        with record.lock:
            i = record.info
            return JobInfo(
                id=i.id,
                name=i.name,
                owner=i.owner,
                state=i.state,
                created_at=i.created_at,
                started_at=i.started_at,
                ended_at=i.ended_at,
                result=i.result,
                error=i.error,
                meta=dict(i.meta),
                cancel_requested=record.cancel_requested
                or (not i.state.terminal and record.files.cancel_requested(i.id)),
            )

    def emit(self, job_id: str, name: str, data: Any = None) -> str:
        """Append an event; returns "" when the job is unknown, ended, or run by another process."""
        text = json_text(data, "event data")
        with self.store.lock:
            record = self._get(job_id)
        if record is None:
            return ""
        with record.lock:
            if record.info.state.terminal:
                return ""
            try:
                return self._append(record, str(name), text)
            except OSError:
                log.exception("job %s: could not write an event", job_id)
                return ""

    def read_events(
        self, job_id: str, after: str | None = None, *, block_seconds: float = 0.0, limit: int = 1000
    ) -> list[Event]:
        cursor = parse_cursor(after)
        with self.store.lock:
            record = self._get(job_id)
        if record is None:
            return self._read_remote(job_id, cursor, block_seconds, limit)
        self._check_hard_limit(record)
        deadline = time.monotonic() + max(0.0, block_seconds)
        with record.cond:
            while True:
                if record.size > cursor:
                    if cursor < record.dropped_upto:
                        break  # older than what memory keeps: read the file
                    events = [e for e in record.events if int(e.id) > cursor]
                    return events[:limit]
                remaining = deadline - time.monotonic()
                if remaining <= 0 or record.info.state.terminal:
                    return []
                record.cond.wait(remaining)
        return record.files.read_events(job_id, cursor, limit)

    def _read_remote(self, job_id: str, cursor: int, block_seconds: float, limit: int) -> list[Event]:
        """Events of another process's job, from its file; a blocking read polls with a short sleep."""
        data = self._remote(job_id)
        if data is None:
            return []
        files = self.files
        deadline = time.monotonic() + max(0.0, block_seconds)
        stamp = files.info_stamp(job_id)
        next_liveness = time.monotonic() + self.liveness_interval
        delay = 0.001
        while True:
            if files.events_size(job_id) > cursor:
                events = files.read_events(job_id, cursor, limit)
                if events:
                    return events
            if JobState(data["state"]).terminal:
                return []
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return []
            time.sleep(min(delay, remaining))  # cooperative under gevent
            delay = min(delay * 2, self.poll_max_seconds)
            now = time.monotonic()
            new_stamp = files.info_stamp(job_id)
            if new_stamp != stamp or now >= next_liveness:  # rewritten (started, ended), or time to re-check
                stamp, next_liveness = new_stamp, now + self.liveness_interval
                data = self._remote(job_id)
                if data is None:
                    return []

    def cancel(self, job_id: str) -> bool:
        with self.store.lock:
            record = self._get(job_id)
        if record is None:
            return self._cancel_remote(job_id)
        with record.lock:
            if record.info.state.terminal:
                return False
            record.cancel_requested = True
            queued = record.info.state is JobState.QUEUED
        try:
            self.files.request_cancel(job_id)  # other processes see the request too
        except OSError:
            log.warning("job %s: could not write its cancel marker", job_id, exc_info=True)
        self._count("cancel_requested")
        if queued:
            self._end(record, JobState.CANCELLED)
        return True

    def _cancel_remote(self, job_id: str) -> bool:
        data = self._remote(job_id)
        if data is None or JobState(data["state"]).terminal:
            return False
        self.files.request_cancel(job_id)  # the running process sees it at the job's next check
        self._count("cancel_requested")
        return True

    def active_jobs(self) -> int:
        """Jobs queued or running in any process of this config directory (ends orphans on the way)."""
        self._sweep()
        count = 0
        for job_id in self.files.active_ids():
            with self.store.lock:
                record = self._get(job_id)
            if record is not None:
                count += not record.info.state.terminal
                continue
            data = self._remote(job_id)
            if data is None or JobState(data["state"]).terminal:
                self.files.unmark_active(job_id)
            else:
                count += 1
        return count

    def metrics(self) -> dict[str, Any]:
        """``active_jobs`` counts every process of the config directory; the rest is this process's."""
        active = self.active_jobs()
        with self.store.lock:
            states = Counter(r.info.state.value for r in self.store.jobs.values())
            counters = dict(self.store.counters)
        return {
            "backend": self.backend,
            "active_jobs": active,
            "queued": states["queued"],
            "running": states["running"],
            "stored_jobs": sum(states.values()),
            "started": counters.get("started", 0),
            "finished": counters.get("finished", 0),
            "failed": counters.get("failed", 0),
            "cancelled": counters.get("cancelled", 0),
            "suspended": counters.get("suspended", 0),
            "cancel_requested": counters.get("cancel_requested", 0),
            "cancel_marker_hit": counters.get("cancel_marker_hit", 0),
            "orphans_ended": counters.get("orphans_ended", 0),
            "expired": counters.get("expired", 0),
            "pid": os.getpid(),
        }

    def _sweep(self) -> None:
        """Drop expired records, enforce hard time limits (at most once per ``sweep_interval``),
        and now and then delete the expired files of every process."""
        now = time.monotonic()
        if now < self.store.next_sweep:
            return
        with self.store.lock:
            self.store.next_sweep = now + self.sweep_interval
            for job_id in [k for k, r in self.store.jobs.items() if r.expires_at is not None and now > r.expires_at]:
                self._expire_local(job_id)
            running = [r for r in self.store.jobs.values() if r.info.state is JobState.RUNNING]
        for record in running:
            self._check_hard_limit(record)
        if now >= self._next_file_sweep:
            self._next_file_sweep = now + self.file_sweep_interval
            try:
                if self.files.claim_sweep(self.file_sweep_interval):
                    self._sweep_files()
            except OSError:
                log.warning("job files sweep failed", exc_info=True)

    def _sweep_files(self) -> None:
        for job_id in self.files.expired_candidates(self.event_ttl):
            with self.store.lock:
                if job_id in self.store.jobs:
                    continue  # ours: expires with its record
            self._remote(job_id)  # removes it when expired

    # --- lifecycle -----------------------------------------------------------------
    def join(self, timeout: float | None = None) -> bool:
        """Wait for the jobs this queue started; True if none is left running."""
        end = None if timeout is None else time.monotonic() + timeout
        for thread in list(self._threads):
            if thread.ident is None:  # enqueued by another thread this instant, not started yet: left running
                continue
            thread.join(None if end is None else max(0.0, end - time.monotonic()))
        return not any(t.is_alive() or t.ident is None for t in list(self._threads))

    def close(self) -> None:
        """Refuse new jobs; running ones finish (the store outlives the app)."""
        self._closed = True


__all__ = ["InProcessQueue", "error_message", "time_limit_message", "to_json_value"]
