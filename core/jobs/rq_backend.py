"""The RQ backend: jobs run on ``service worker`` processes, state and events live in Redis.

Keys of queue ``Q`` (``NS = service:jobs:Q:``), so any web process or worker
on the same Redis sees every job:

* ``NS job:<id>`` hash: name, owner, state, created/started/ended_at, error,
  result (JSON), kwargs (JSON), meta (JSON), time_limit, ttl, worker, worker_kind.
* ``NS events:<id>`` stream: entries ``n`` (name) and ``d`` (JSON data); the
  stream id is the event id and read cursor. ``XADD MAXLEN ~``.
* ``NS cancel:<id>`` cooperative cancel marker; ``NS hb:<id>`` worker heartbeat.
* ``NS active`` sorted set of queued/running job ids; ``NS stats`` counters.

State changes are Lua scripts, so "first terminal state wins" holds across
processes and nothing is appended after a job's end event. Every ended job's
keys expire ``ttl`` seconds after it ended.

The RQ job is :func:`execute` with the job id as its only argument (JSON
serializer, RQ job id = our job id); it reads the name and kwargs from Redis
and the registry from the worker's preloaded app. Its RQ result is discarded
(``result_ttl=0``): the outcome is in our hash, never a traceback.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import redis
from rq import Queue
from rq.job import Job as RQJob
from rq.serializers import JSONSerializer

from core.errors import StartupError
from core.jobs import (
    END_EVENTS,
    Event,
    JobBackendUnavailable,
    JobCancelled,
    JobContext,
    JobInfo,
    JobQueue,
    JobState,
    UnknownJob,
    error_message,
    run_to_end,
    time_limit_message,
)
from core.jobs.inprocess import to_json_value

if TYPE_CHECKING:
    from flask import Flask

    from core.records import Job
    from core.settings import Settings

log = logging.getLogger(__name__)

KEY_ROOT = "service:jobs:"
MAX_EVENTS = 10_000
HEARTBEAT_TTL = 15  # seconds without a heartbeat before a running job counts as lost
HEARTBEAT_INTERVAL = 5.0
LOST_QUEUED_AFTER = 10.0  # a queued job whose RQ job vanished for this long is lost
_TERMINAL = ("finished", "failed", "cancelled", "suspended")
_CURSOR = re.compile(r"^\d+-\d+$")
_DEAD_RQ_STATUSES = {"failed", "stopped", "canceled", "finished"}
#: how long a worker keeps retrying a write (event, end state) while Redis is unreachable
OUTAGE_GRACE_SECONDS = 60.0
_UNREACHABLE = (redis.ConnectionError, redis.TimeoutError)
F = TypeVar("F", bound=Callable[..., Any])


def unavailable_on_outage(func: F) -> F:
    """Turn "Redis unreachable" into :class:`JobBackendUnavailable` (a 503 with ``Retry-After``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except _UNREACHABLE as exc:
            log.warning("job queue: Redis unreachable: %s", exc)
            raise JobBackendUnavailable() from None

    return wrapper  # type: ignore[return-value]


def block_slice(client: redis.Redis) -> float:
    """The longest blocking read (seconds) that ends before the client's socket timeout.

    redis-py 8 gives every connection a 5 s socket timeout, so an ``XREAD BLOCK``
    of 5 s or more fails with a timeout while the job is merely quiet: long
    waits are cut into slices shorter than that timeout.
    """
    timeout = client.connection_pool.connection_kwargs.get("socket_timeout")
    if not timeout:
        return 3600.0
    return max(0.05, float(timeout) - min(1.0, float(timeout) / 2))


def blocking_xread(client: Any, key: str, after: str, *, count: int, block_seconds: float) -> list[Any]:
    """``XREAD BLOCK`` for up to ``block_seconds``, in slices below the socket timeout; [] when quiet."""
    deadline = time.monotonic() + block_seconds
    step = block_slice(client)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return []
        try:
            reply = client.xread({key: after}, count=count, block=max(1, int(min(remaining, step) * 1000)))
        except redis.TimeoutError:  # a reply slower than the socket timeout: still "nothing yet"
            reply = None
        if reply:
            return list(reply[0][1])


def retry_outage(what: str, func: Callable[[], Any], grace: float = OUTAGE_GRACE_SECONDS) -> Any:
    """Call ``func``, retrying for up to ``grace`` seconds while Redis is unreachable (worker side)."""
    deadline = time.monotonic() + grace
    delay = 0.1
    while True:
        try:
            return func()
        except _UNREACHABLE as exc:
            if time.monotonic() + delay > deadline:
                raise
            log.warning("%s: Redis unreachable (%s); retrying in %.1f s", what, exc, delay)
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


# --- Lua: atomic state transitions -------------------------------------------------------
_START = """
local st = redis.call('HGET', KEYS[1], 'state')
if st ~= 'queued' then return st or '' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'cancel' end
redis.call('HSET', KEYS[1], 'state', 'running', 'started_at', ARGV[1], 'worker', ARGV[2], 'worker_kind', ARGV[3])
redis.call('SET', KEYS[3], ARGV[1], 'EX', ARGV[4])
redis.call('HINCRBY', KEYS[4], 'started', 1)
return 'running'
"""
# KEYS: job, events, cancel, hb, active, stats
# ARGV: state, ended_at, error, result, ttl, event name, event data, maxlen, job id, expected state ('' any)
_END = """
local st = redis.call('HGET', KEYS[1], 'state')
if (not st) or st == 'finished' or st == 'failed' or st == 'cancelled' or st == 'suspended' then return 0 end
if ARGV[10] ~= '' and st ~= ARGV[10] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'ended_at', ARGV[2], 'error', ARGV[3], 'result', ARGV[4])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[8], '*', 'n', ARGV[6], 'd', ARGV[7])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('EXPIRE', KEYS[3], ARGV[5])
redis.call('DEL', KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[9])
redis.call('HINCRBY', KEYS[6], ARGV[1], 1)
return 1
"""
# KEYS: job, hb; ARGV: now, ttl. Beats (re-creating the key after an outage) only while the job runs.
_BEAT = """
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
return 1
"""
_EMIT = """
local st = redis.call('HGET', KEYS[1], 'state')
if (not st) or st == 'finished' or st == 'failed' or st == 'cancelled' or st == 'suspended' then
  return false
end
return redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'n', ARGV[2], 'd', ARGV[3])
"""

# --- process-wide clients (they survive app rebuilds; redis-py resets pools after fork) ---
_clients: dict[tuple[str, bool], redis.Redis] = {}
_clients_lock = threading.Lock()


#: per process and URL; above gunicorn's worker_connections (1,000) plus background users
MAX_REDIS_CONNECTIONS = 1100


def redis_client(url: str, *, decode: bool = True) -> redis.Redis:
    """The process-wide client for ``url`` (``decode=False`` for RQ, which stores bytes)."""
    with _clients_lock:
        client = _clients.get((url, decode))
        if client is None:
            # Every open event stream holds a connection during XREAD BLOCK: size the pool for a
            # gevent worker's 1,000 connections and make extra callers wait instead of failing
            # (the default pool raised MaxConnectionsError at 500 streams in flight).
            pool = redis.BlockingConnectionPool.from_url(
                url,
                max_connections=MAX_REDIS_CONNECTIONS,
                timeout=30,
                decode_responses=decode,
                health_check_interval=30,
            )
            client = redis.Redis(connection_pool=pool)
            _clients[(url, decode)] = client
        return client


def _f(value: str | None) -> float | None:
    return float(value) if value else None


class RedisJobStore:
    """Keys, scripts and state transitions of one queue's namespace (shared by web and worker)."""

    def __init__(self, client: redis.Redis, queue_name: str) -> None:
        self.r: Any = client  # decode_responses=True: str in, str out
        self.queue_name = queue_name
        self.ns = f"{KEY_ROOT}{queue_name}:"
        self.active_key = self.ns + "active"
        self.stats_key = self.ns + "stats"
        self.workers_key = self.ns + "workers"
        self._start = client.register_script(_START)
        self._end = client.register_script(_END)
        self._emit = client.register_script(_EMIT)
        self._beat = client.register_script(_BEAT)

    def job_key(self, job_id: str) -> str:
        return f"{self.ns}job:{job_id}"

    def events_key(self, job_id: str) -> str:
        return f"{self.ns}events:{job_id}"

    def cancel_key(self, job_id: str) -> str:
        return f"{self.ns}cancel:{job_id}"

    def hb_key(self, job_id: str) -> str:
        return f"{self.ns}hb:{job_id}"

    def start(self, job_id: str, worker: str, kind: str) -> str:
        return str(
            self._start(
                keys=[self.job_key(job_id), self.cancel_key(job_id), self.hb_key(job_id), self.stats_key],
                args=[time.time(), worker, kind, HEARTBEAT_TTL],
            )
        )

    def end(
        self,
        job_id: str,
        state: JobState,
        *,
        ttl: int,
        result: Any = None,
        error: str | None = None,
        expected: str = "",
        event_data: Any = None,
    ) -> bool:
        data = json.dumps({"error": error} if state is JobState.FAILED else event_data)
        done = self._end(
            keys=[
                self.job_key(job_id),
                self.events_key(job_id),
                self.cancel_key(job_id),
                self.hb_key(job_id),
                self.active_key,
                self.stats_key,
            ],
            args=[
                state.value,
                time.time(),
                error or "",
                json.dumps(result),
                max(1, int(ttl)),
                END_EVENTS[state],
                data,
                MAX_EVENTS,
                job_id,
                expected,
            ],
        )
        return bool(done)

    def emit(self, job_id: str, name: str, data: Any) -> str:
        payload = json.dumps(to_json_value(data, "event data"))
        event_id = self._emit(
            keys=[self.job_key(job_id), self.events_key(job_id)], args=[MAX_EVENTS, str(name), payload]
        )
        return event_id or ""

    def beat(self, job_id: str) -> None:
        self._beat(keys=[self.job_key(job_id), self.hb_key(job_id)], args=[time.time(), HEARTBEAT_TTL])

    # --- worker liveness ------------------------------------------------------------
    def worker_beat(self, name: str) -> None:
        self.r.zadd(self.workers_key, {name: time.time()})

    def worker_gone(self, name: str) -> None:
        self.r.zrem(self.workers_key, name)

    def live_workers(self) -> int:
        """Workers whose last beat is under two heartbeat periods old (the others are forgotten)."""
        pipe = self.r.pipeline(transaction=True)
        pipe.zremrangebyscore(self.workers_key, "-inf", time.time() - 2 * HEARTBEAT_INTERVAL)
        pipe.zcard(self.workers_key)
        return int(pipe.execute()[1])

    def incr(self, field: str, amount: int = 1) -> None:
        self.r.hincrby(self.stats_key, field, amount)

    # --- the watchdog ---------------------------------------------------------------
    def snapshot(self, job_id: str, pipe: Any = None) -> Any:
        """Queue, in ``pipe``, what :meth:`reconcile` needs: hash, heartbeat, RQ status."""
        pipe.hgetall(self.job_key(job_id))
        pipe.exists(self.hb_key(job_id))
        pipe.hget(RQJob.key_for(job_id), "status")
        return pipe

    def reconcile(self, job_id: str, fields: dict[str, str], hb_alive: bool, rq_status: str | None) -> bool:
        """End a job whose worker died or whose RQ job vanished; True if it was ended now."""
        state = fields.get("state")
        if not state or state in _TERMINAL:
            return False
        now = time.time()
        if state == "running":
            started = _f(fields.get("started_at")) or now
            # The heartbeat comes from the process running the job: while it beats, the job lives, whatever
            # RQ says (a SIGKILLed ``rq`` main process leaves its work horse running, and RQ's clean-up marks
            # the RQ job failed meanwhile). Without a beat, a vanished or ended RQ job means it is lost.
            if hb_alive:
                return False
            dead = rq_status is None or rq_status in _DEAD_RQ_STATUSES or now - started > HEARTBEAT_TTL
            reason = "The worker running this job stopped unexpectedly"
        else:
            created = _f(fields.get("created_at")) or now
            dead = rq_status in _DEAD_RQ_STATUSES or (rq_status is None and now - created > LOST_QUEUED_AFTER)
            reason = "The job was lost from the queue before it started"
        if not dead:
            return False
        return self.end_lost(job_id, fields, reason)

    def end_lost(self, job_id: str, fields: dict[str, str], reason: str) -> bool:
        ttl = int(fields.get("ttl") or 3600)
        limit = float(fields.get("time_limit") or 0)
        started = _f(fields.get("started_at"))
        if fields.get("cancel_requested"):
            ended = self.end(job_id, JobState.CANCELLED, ttl=ttl)
        else:
            if limit and started and time.time() > started + limit:
                reason = time_limit_message(limit)
            ended = self.end(job_id, JobState.FAILED, ttl=ttl, error=reason)
        if ended:
            self.incr("watchdog_ended")
            log.warning("job %s: %s", job_id, reason)
        return ended

    def reap(self) -> int:
        """Check every active job of this queue (worker start, ``active_jobs``); returns how many ended."""
        ids = self.r.zrange(self.active_key, 0, -1)
        ended = 0
        for start in range(0, len(ids), 200):
            chunk = ids[start : start + 200]
            pipe = self.r.pipeline(transaction=True)
            for job_id in chunk:
                self.snapshot(job_id, pipe)
            values = pipe.execute()
            for i, job_id in enumerate(chunk):
                fields, hb, status = values[3 * i : 3 * i + 3]
                if not fields:
                    self.r.zrem(self.active_key, job_id)
                    continue
                ended += self.reconcile(job_id, fields, bool(hb), status)
        return ended


class _Context(JobContext):
    """The job's view of itself inside a worker."""

    cancel_poll_interval = 0.05  # seconds between looks at the cancel marker

    def __init__(self, store: RedisJobStore, app: Flask, job_id: str, owner: str, time_limit: float) -> None:
        self.job_id = job_id
        self.owner = owner
        self.app = app
        self._store = store
        self._deadline = time.monotonic() + time_limit if time_limit else None
        self._next_poll = 0.0
        self._cancelled = False
        self.timed_out = False
        self.cancel_seen = False

    def emit(self, name: str, data: Any = None) -> str:
        event_id = retry_outage(f"job {self.job_id}", lambda: self._store.emit(self.job_id, name, data))
        if not event_id:  # ended from outside (forced cancel, watchdog)
            raise JobCancelled(self.job_id)
        return event_id

    def cancelled(self) -> bool:
        if self._deadline is not None and time.monotonic() > self._deadline:
            self.timed_out = True
        now = time.monotonic()
        if not self._cancelled and not self.timed_out and now >= self._next_poll:
            self._next_poll = now + self.cancel_poll_interval
            try:
                marked = self._store.r.exists(self._store.cancel_key(self.job_id))
            except _UNREACHABLE:  # Redis away: nobody can have asked since; look again later
                self._next_poll = now + 1.0
                marked = False
            if marked:
                self._cancelled = True
                retry_outage(f"job {self.job_id}", lambda: self._store.incr("cancel_marker_hit"))
        if self._cancelled or self.timed_out:
            self.cancel_seen = True
            return True
        return False


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
        args = json.dumps(to_json_value(dict(kwargs or {}), "job kwargs"))
        meta_json = json.dumps(to_json_value(dict(meta or {}), "job meta"))
        job_id = job_id or str(uuid.uuid4())
        key = self.store.job_key(job_id)
        now = time.time()
        if not self.r.hsetnx(key, "state", "queued"):
            raise ValueError(f"job {job_id} already exists")
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(
            key,
            mapping={
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
        pipe.execute()
        try:
            self.rq_queue.enqueue_call(
                "core.jobs.rq_backend.execute",
                args=(job_id,),
                job_id=job_id,
                description=name,
                timeout=(self.time_limit + 60) if self.time_limit else -1,  # the hard stop behind the soft limit
                result_ttl=0,
                failure_ttl=self.ttl,
            )
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
        return _info(job_id, fields)

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
            return _events(entries)
        if self.store.reconcile(job_id, fields, bool(hb), status):
            return _events(self.r.xrange(key, start, "+", count=limit))
        if block_seconds <= 0 or fields.get("state") in _TERMINAL:
            return []
        return _events(blocking_xread(self.r, key, after or "0-0", count=limit, block_seconds=block_seconds))

    # --- cancel ----------------------------------------------------------------------
    @unavailable_on_outage
    def cancel(self, job_id: str) -> bool:
        key = self.store.job_key(job_id)
        state, kind, ttl = self.r.hmget(key, "state", "worker_kind", "ttl")
        if not state or state in _TERMINAL:
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
        if time.monotonic() >= self._next_reap:
            self._next_reap = time.monotonic() + self.reap_interval
            self.store.reap()
        return int(self.r.zcard(self.store.active_key))

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


def _info(job_id: str, f: dict[str, str]) -> JobInfo:
    result = f.get("result")
    return JobInfo(
        id=job_id,
        name=f.get("name", ""),
        owner=f.get("owner", ""),
        state=JobState(f["state"]),
        created_at=float(f.get("created_at") or 0),
        started_at=_f(f.get("started_at")),
        ended_at=_f(f.get("ended_at")),
        result=json.loads(result) if result else None,
        error=f.get("error") or None,
        meta=json.loads(f.get("meta") or "{}"),
    )


def _events(entries: list[tuple[str, dict[str, str]]]) -> list[Event]:
    return [
        Event(id=eid, name=fields.get("n", ""), data=json.loads(fields.get("d") or "null")) for eid, fields in entries
    ]


# --- the worker side -----------------------------------------------------------------------
_worker_app: Flask | None = None
_worker_kind = "fork"


_worker_plugins_gen: int | None = None


def set_worker_app(app: Flask, kind: str = "fork") -> None:
    """Called by ``service worker`` before it forks: the app every job of this process runs in."""
    global _worker_app, _worker_kind
    _worker_app = app
    _worker_kind = kind


def worker_app() -> Flask:
    global _worker_app
    if _worker_app is None:  # started by a plain ``rq worker``: build the app once
        import flask

        if flask.has_app_context():
            _worker_app = flask.current_app._get_current_object()  # type: ignore[attr-defined]
        else:
            from core.app import create_app

            _worker_app = create_app(migrate=False)
    return _worker_app


def _caught_up(app: Flask) -> Flask:
    """The worker's app in step with the deployment: a new plugin set rebuilds it, reloaded bundles swap in."""
    global _worker_app, _worker_plugins_gen
    from core.app import create_app, state
    from core.extensions import APPS_GEN, generation, sync_components

    shared = state(app).shared
    if shared is not None:
        gen = generation(shared, APPS_GEN)
        if _worker_plugins_gen is None:  # the generation the app was built for, not the current one
            _worker_plugins_gen = state(app).plugins_generation
        if gen != _worker_plugins_gen:
            try:
                app = _worker_app = create_app(migrate=False)
                _worker_plugins_gen = gen
            except Exception:  # keep running jobs on the current app
                log.exception("worker app not rebuilt for plugin generation %s", gen)
    sync_components(app, force=True)
    return app


def execute(job_id: str) -> None:
    """The RQ job function: run service job ``job_id`` (everything else is read from Redis)."""
    from rq import get_current_job

    from core.app import state as app_state

    rq_job = get_current_job()
    queue_name = rq_job.origin if rq_job is not None else "service"
    worker_name = (rq_job.worker_name if rq_job is not None else None) or f"pid-{os.getpid()}"
    app = _caught_up(worker_app())
    service = app_state(app)
    store = RedisJobStore(redis_client(service.settings.redis_url or ""), queue_name)
    run_job(store, app, service.job_registry, job_id, worker_name, _worker_kind)


def run_job(store: RedisJobStore, app: Flask, registry: Mapping[str, Job], job_id: str, worker: str, kind: str) -> None:
    fields = store.r.hgetall(store.job_key(job_id))
    if not fields or "name" not in fields:
        log.warning("job %s: no record (expired or deleted); skipping", job_id)
        return
    ttl = int(fields.get("ttl") or 3600)
    limit = float(fields.get("time_limit") or 0)
    started = store.start(job_id, worker, kind)
    if started == "cancel":
        store.end(job_id, JobState.CANCELLED, ttl=ttl)
        return
    if started != "running":
        log.info("job %s is %s; not running it", job_id, started or "gone")
        return
    job = registry.get(fields["name"])
    if job is None:
        store.end(job_id, JobState.FAILED, ttl=ttl, error=f"job {fields['name']!r} is not registered on this worker")
        return
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(store, job_id, stop), daemon=True, name=f"hb-{job_id[:8]}")
    beat.start()

    ctx = _Context(store, app, job_id, fields.get("owner", ""), limit)

    def call() -> Any:
        with app.app_context():
            try:
                return to_json_value(job.func(ctx, **json.loads(fields.get("kwargs") or "{}")), "job result")
            finally:
                factory = app.extensions.get("service.db")
                if factory is not None:
                    factory.remove()

    try:
        ending = run_to_end(
            call,
            limit=limit,
            timed_out=lambda: ctx.timed_out,
            cancel_seen=lambda: ctx.cancel_seen,
            on_error=lambda exc: log.exception("job %s (%s) failed", job_id, fields["name"]),
        )
        retry_outage(  # the outcome survives a short Redis outage
            f"job {job_id}",
            lambda: store.end(
                job_id, ending.state, ttl=ttl, result=ending.result, error=ending.error, event_data=ending.event_data
            ),
        )
    finally:
        stop.set()


def _heartbeat(store: RedisJobStore, job_id: str, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_INTERVAL):
        try:
            store.beat(job_id)
        except Exception:
            log.warning("job %s: heartbeat failed", job_id, exc_info=True)


def on_rq_failure(rq_job: Any, reason: str) -> None:
    """Worker-side watchdog: RQ failed our job outside :func:`execute` (horse died, was stopped)."""
    try:
        app = worker_app()
        from core.app import state as app_state

        store = RedisJobStore(redis_client(app_state(app).settings.redis_url or ""), rq_job.origin)
        fields = store.r.hgetall(store.job_key(rq_job.id))
        if fields and fields.get("state") not in _TERMINAL:
            store.end_lost(rq_job.id, fields, reason)
    except Exception:
        log.exception("job %s: could not record the failure", getattr(rq_job, "id", "?"))


def worker_classes() -> tuple[type, type]:
    """RQ's forking and simple workers, each reporting dead work horses to :func:`on_rq_failure`."""
    from rq import SimpleWorker, Worker

    class _Mixin:
        def handle_job_failure(
            self, job: Any, queue: Any, started_job_registry: Any = None, exc_string: str = "", execution: Any = None
        ) -> None:
            super().handle_job_failure(  # type: ignore[misc]  # a mixin: Worker is the next class
                job,
                queue,
                started_job_registry=started_job_registry,
                exc_string=exc_string,
                execution=execution,
            )
            if exc_string:
                log.warning("job %s failed in RQ: %s", job.id, exc_string.strip().splitlines()[-1])
            on_rq_failure(job, "The worker running this job stopped unexpectedly")

        def work(self, *args: Any, **kwargs: Any) -> bool:
            """RQ's loop, with a thread beating for each queue (metrics count live workers from these)."""
            from core.app import state as app_state

            stores = [
                RedisJobStore(redis_client(app_state(worker_app()).settings.redis_url or ""), name)
                for name in self.queue_names()  # type: ignore[attr-defined]
            ]
            stop = threading.Event()

            def beat() -> None:
                while True:
                    for store in stores:
                        try:
                            store.worker_beat(self.name)  # type: ignore[attr-defined]
                        except Exception:
                            log.warning("worker %s: heartbeat failed", self.name, exc_info=True)  # type: ignore[attr-defined]
                    if stop.wait(HEARTBEAT_INTERVAL):
                        return

            thread = threading.Thread(target=beat, daemon=True, name="worker-heartbeat")
            thread.start()
            try:
                return bool(super().work(*args, **kwargs))  # type: ignore[misc]
            finally:
                stop.set()
                for store in stores:
                    try:
                        store.worker_gone(self.name)  # type: ignore[attr-defined]
                    except Exception:
                        log.debug("worker %s: could not deregister", self.name, exc_info=True)  # type: ignore[attr-defined]

    class ServiceWorker(_Mixin, Worker):
        pass

    class ServiceSimpleWorker(_Mixin, SimpleWorker):
        pass

    return ServiceWorker, ServiceSimpleWorker


__all__ = ["RQQueue", "RedisJobStore", "execute", "redis_client", "set_worker_app", "worker_app"]
