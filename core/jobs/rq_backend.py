"""The RQ backend: jobs run on ``service worker`` processes, state and events live in Redis.

Four modules, one per concern:

* :mod:`core.jobs.rq_store`: one queue's keys and their atomic (Lua) state transitions,
  and the liveness check that ends jobs whose worker died (:meth:`RedisJobStore.reap`);
* :mod:`core.jobs.rq_redis`: the process-wide clients and what a Redis outage does
  (a 503 on the web side, retries on the worker side);
* :mod:`core.jobs.rq_worker`: the worker side (the RQ job function :func:`execute`,
  heartbeats, dead work horses);
* this module: :class:`RQQueue`, the :class:`~core.jobs.JobQueue` the web processes use.

The RQ job is ``core.jobs.rq_backend.execute`` (re-exported from :mod:`core.jobs.rq_worker`,
so jobs enqueued by any version find it) with the job id as its only argument (JSON
serializer, RQ job id = our job id). Its RQ result is discarded (``result_ttl=0``): the
outcome is in our hash, never a traceback.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rq import Queue
from rq.job import Job as RQJob
from rq.serializers import JSONSerializer

from core.errors import StartupError
from core.jobs import Event, JobInfo, JobQueue, JobState, UnknownJob, error_message
from core.jobs.inprocess_store import json_text
from core.jobs.rq_redis import blocking_xread, redis_client, unavailable_on_outage
from core.jobs.rq_store import HEARTBEAT_INTERVAL, TERMINAL_STATES, RedisJobStore, events_of, info_of
from core.jobs.rq_worker import execute, run_job, set_worker_app, worker_app, worker_classes

if TYPE_CHECKING:
    from flask import Flask

    from core.records import Job
    from core.settings import Settings

log = logging.getLogger(__name__)

_CURSOR = re.compile(r"^\d+-\d+$")


class RQQueue(JobQueue):
    """Jobs on RQ workers; state and event streams in Redis, shared by every process."""

    backend = "rq"
    #: how long a cooperative cancel may take on a forking worker before RQ's stop command kills the job
    cancel_grace_seconds = 2.0
    reap_interval = 5.0

    def __init__(
        self, app: Flask, settings: Settings, registry: Mapping[str, Job], *, queue_name: str = "service"
    ) -> None:
        if not settings.redis_url:
            raise StartupError("SERVICE_JOB_BACKEND=rq needs SERVICE_REDIS_URL")
        self.app = app
        self.settings = settings
        self.registry = registry
        self.queue_name = queue_name
        self.r: Any = redis_client(settings.redis_url)
        self.rq_conn = redis_client(settings.redis_url, decode=False)
        self.store = RedisJobStore(self.r, queue_name)
        self.rq_queue = Queue(queue_name, connection=self.rq_conn, serializer=JSONSerializer)
        self.ttl = max(1, int(settings.job_event_ttl_seconds))
        self.time_limit = int(settings.job_time_limit_seconds)
        self._next_reap = 0.0

    # --- enqueue ---------------------------------------------------------------------
    @unavailable_on_outage
    def enqueue(
        self,
        name: str,
        *,
        owner: str,
        kwargs: Mapping[str, Any] | None = None,
        job_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        if name not in self.registry:
            raise UnknownJob(name)
        # one encoding, which also refuses what is not JSON (it is what the worker reads back: no copy needed)
        args = json_text(dict(kwargs or {}), "job kwargs")
        meta_json = json_text(dict(meta or {}), "job meta")
        chosen = job_id is not None
        job_id = job_id or str(uuid.uuid4())
        key = self.store.job_key(job_id)
        now = time.time()
        # one round trip for a new job: its record, the active set, the counter and RQ's own job and queue
        # push in one MULTI/EXEC (the caller's own id is checked for a clash first: one more round trip)
        if chosen and not self.r.hsetnx(key, "state", "queued"):
            raise ValueError(f"job {job_id} already exists")
        pipe = self.rq_conn.pipeline(transaction=True)
        pipe.multi()  # explicit, as RQ expects of a caller's pipeline
        pipe.hset(
            key,
            mapping={
                "state": "queued",
                "name": name,
                "owner": str(owner),
                "created_at": now,
                "kwargs": args,
                "meta": meta_json,
                "time_limit": self.time_limit,
                "ttl": self.ttl,
            },
        )
        pipe.zadd(self.store.active_key, {job_id: now})
        pipe.hincrby(self.store.stats_key, "enqueued", 1)
        try:
            self.rq_queue.enqueue_call(
                "core.jobs.rq_backend.execute",
                args=(job_id,),
                job_id=job_id,
                description=name,
                timeout=(self.time_limit + 60) if self.time_limit else -1,  # the hard stop behind the soft limit
                result_ttl=0,
                failure_ttl=self.ttl,
                pipeline=pipe,
            )
            pipe.execute()
        except Exception as exc:
            self.store.end(job_id, JobState.FAILED, ttl=self.ttl, error=f"could not enqueue: {error_message(exc)}")
            raise
        return job_id

    # --- reading ---------------------------------------------------------------------
    def _fields(self, job_id: str) -> dict[str, str]:
        pipe = self.store.snapshot(job_id, self.r.pipeline(transaction=True))
        fields, hb, status = pipe.execute()
        if fields and self.store.reconcile(job_id, fields, bool(hb), status):
            fields = self.r.hgetall(self.store.job_key(job_id))
        return fields

    @unavailable_on_outage
    def info(self, job_id: str) -> JobInfo | None:
        fields = self._fields(job_id)
        if not fields or "name" not in fields:
            return None
        return info_of(job_id, fields)

    def emit(self, job_id: str, name: str, data: Any = None) -> str:
        """Append an event; returns "" when the job is unknown or has already ended."""
        return self.store.emit(job_id, name, data)

    @unavailable_on_outage
    def read_events(
        self, job_id: str, after: str | None = None, *, block_seconds: float = 0.0, limit: int = 1000
    ) -> list[Event]:
        if after and not _CURSOR.match(after):
            raise ValueError(f"invalid event cursor {after!r}")
        key = self.store.events_key(job_id)
        start = f"({after}" if after else "-"
        pipe = self.store.snapshot(job_id, self.r.pipeline(transaction=True))
        pipe.xrange(key, start, "+", count=limit)
        fields, hb, status, entries = pipe.execute()
        if not fields:
            return []
        if entries:
            return events_of(entries)
        if self.store.reconcile(job_id, fields, bool(hb), status):
            return events_of(self.r.xrange(key, start, "+", count=limit))
        if block_seconds <= 0 or fields.get("state") in TERMINAL_STATES:
            return []
        return events_of(blocking_xread(self.r, key, after or "0-0", count=limit, block_seconds=block_seconds))

    # --- cancel ----------------------------------------------------------------------
    @unavailable_on_outage
    def cancel(self, job_id: str) -> bool:
        key = self.store.job_key(job_id)
        state, kind, ttl = self.r.hmget(key, "state", "worker_kind", "ttl")
        if not state or state in TERMINAL_STATES:
            return False
        ttl = int(ttl or self.ttl)
        pipe = self.r.pipeline(transaction=True)
        pipe.set(self.store.cancel_key(job_id), "1", ex=ttl + self.time_limit + 60)
        pipe.hset(key, "cancel_requested", "1")
        pipe.hincrby(self.store.stats_key, "cancel_published", 1)
        pipe.execute()
        if state == "queued" and self.store.end(job_id, JobState.CANCELLED, ttl=ttl, expected="queued"):
            self.store.incr("cancelled_queued")
            try:
                RQJob.fetch(job_id, connection=self.rq_conn, serializer=JSONSerializer).delete()
            except Exception:  # already dequeued or gone: the worker will see the cancelled state
                log.debug("job %s: RQ job already gone", job_id, exc_info=True)
            return True
        kind = kind or self.r.hget(key, "worker_kind")
        if kind == "fork" and self.cancel_grace_seconds >= 0:
            if self.cancel_grace_seconds == 0:
                self._force_stop(job_id)
            else:
                timer = threading.Timer(self.cancel_grace_seconds, self._force_stop, args=(job_id,))
                timer.daemon = True
                timer.start()
        return True

    def _force_stop(self, job_id: str) -> None:
        """Stop a job that ignored the cooperative cancel (forking workers only)."""
        from rq.command import send_stop_job_command

        try:
            state, ttl = self.r.hmget(self.store.job_key(job_id), "state", "ttl")
            if state != "running":
                return
            try:
                send_stop_job_command(self.rq_conn, job_id, serializer=JSONSerializer)
                self.store.incr("stop_command_sent")
            except Exception as exc:  # not executing any more, or no such job: nothing to stop
                log.debug("job %s: stop command not applicable: %s", job_id, exc)
            if self.store.end(job_id, JobState.CANCELLED, ttl=int(ttl or self.ttl), expected="running"):
                self.store.incr("cancelled_forced")
        except Exception:
            log.exception("job %s: forced stop failed", job_id)

    # --- counts ----------------------------------------------------------------------
    @unavailable_on_outage
    def active_jobs(self) -> int:
        self.reap()
        return int(self.r.zcard(self.store.active_key))

    @unavailable_on_outage
    def reap(self) -> int:
        """End the jobs whose worker died or whose RQ job vanished (every process and worker sees the same
        Redis: any of them may). At most once per ``reap_interval`` per queue object; returns how many."""
        if time.monotonic() < self._next_reap:
            return 0
        self._next_reap = time.monotonic() + self.reap_interval
        return self.store.reap()

    @unavailable_on_outage
    def metrics(self) -> dict[str, Any]:
        from rq import Worker

        active = self.active_jobs()
        stats = {k: int(v) for k, v in (self.r.hgetall(self.store.stats_key) or {}).items()}
        return {
            "backend": "redis",
            "job_backend": self.backend,
            "queue": self.queue_name,
            "active_jobs": active,
            "queue_length": len(self.rq_queue),
            "workers": self.store.live_workers(),  # from heartbeats: a killed worker is gone within 2 periods
            "workers_registered": Worker.count(connection=self.rq_conn, queue=self.rq_queue),
            **{
                name: stats.get(name, 0)
                for name in (
                    "enqueued",
                    "started",
                    "finished",
                    "failed",
                    "cancelled",
                    "suspended",
                    "cancel_published",
                    "cancel_marker_hit",
                    "cancelled_queued",
                    "cancelled_forced",
                    "stop_command_sent",
                    "watchdog_ended",
                )
            },
        }


__all__ = [
    "HEARTBEAT_INTERVAL",
    "RQQueue",
    "RedisJobStore",
    "execute",
    "redis_client",
    "run_job",
    "set_worker_app",
    "worker_app",
    "worker_classes",
]
