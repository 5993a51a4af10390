"""The RQ backend's job store: one queue's keys in Redis and their atomic state transitions.

Keys of queue ``Q`` (``NS = service:jobs:Q:``), so any web process or worker
on the same Redis sees every job:

* ``NS job:<id>`` hash: name, owner, state, created/started/ended_at, error,
  result (JSON), kwargs (JSON), meta (JSON), time_limit, ttl, worker, worker_kind.
* ``NS events:<id>`` stream: entries ``n`` (name) and ``d`` (JSON data); the
  stream id is the event id and read cursor. ``XADD MAXLEN ~``.
* ``NS cancel:<id>`` cooperative cancel marker; ``NS hb:<id>`` worker heartbeat.
* ``NS active`` sorted set of queued/running job ids; ``NS stats`` counters;
  ``NS workers`` the live workers' last beats.

State changes are Lua scripts, so "first terminal state wins" holds across
processes and nothing is appended after a job's end event. Every ended job's
keys expire ``ttl`` seconds after it ended. :meth:`RedisJobStore.reap` is the
liveness check: it ends the jobs whose worker died or whose RQ job vanished.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import redis
from rq.job import Job as RQJob

from core.jobs import END_EVENTS, Event, JobInfo, JobState, time_limit_message
from core.jobs.inprocess_store import to_json_value

log = logging.getLogger(__name__)

KEY_ROOT = "service:jobs:"
MAX_EVENTS = 10_000
HEARTBEAT_TTL = 15  # seconds without a heartbeat before a running job counts as lost
HEARTBEAT_INTERVAL = 5.0
LOST_QUEUED_AFTER = 10.0  # a queued job whose RQ job vanished for this long is lost
TERMINAL_STATES = ("finished", "failed", "cancelled", "suspended")
_DEAD_RQ_STATUSES = {"failed", "stopped", "canceled", "finished"}


# --- Lua: atomic state transitions -------------------------------------------------------
# KEYS: job, cancel, hb, stats, then any number of string keys to read along (the worker's generations);
# ARGV: now, worker, kind, heartbeat ttl.
# Returns {outcome, n, value 1..n, field, value, ...}: outcome '' (no record), the state it is in when not
# queued, 'cancel' or 'running'; n the number of keys read along and their values ('' for a missing key); the
# record's fields (as they were before the start) for the last two outcomes, so a worker reads and starts a
# job, and reads what it checks before every job, in one round trip.
_START = """
local f = redis.call('HGETALL', KEYS[1])
local st = redis.call('HGET', KEYS[1], 'state')
local out = {'', #KEYS - 4}
for i = 5, #KEYS do out[#out + 1] = redis.call('GET', KEYS[i]) or '' end
if (not st) or (not redis.call('HGET', KEYS[1], 'name')) then return out end
out[1] = st
if st ~= 'queued' then return out end
out[1] = 'cancel'
if redis.call('EXISTS', KEYS[2]) == 0 then
  out[1] = 'running'
  redis.call('HSET', KEYS[1], 'state', 'running', 'started_at', ARGV[1], 'worker', ARGV[2], 'worker_kind', ARGV[3])
  redis.call('SET', KEYS[3], ARGV[1], 'EX', ARGV[4])
  redis.call('HINCRBY', KEYS[4], 'started', 1)
end
for i = 1, #f do out[#out + 1] = f[i] end
return out
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
        """Start a queued job: ``running``, ``cancel`` (asked before it started), its state when it is not
        queued, or "" (no record)."""
        return self.start_with_fields(job_id, worker, kind)[0]

    def start_with_fields(self, job_id: str, worker: str, kind: str) -> tuple[str, dict[str, str]]:
        """:meth:`start` and the job's record (name, kwargs, ttl...) in one round trip; the record is
        empty unless the outcome is ``running`` or ``cancel``."""
        outcome, fields, _ = self.start_reading(job_id, worker, kind)
        return outcome, fields

    def start_reading(
        self, job_id: str, worker: str, kind: str, read: list[str] | tuple[str, ...] = ()
    ) -> tuple[str, dict[str, str], list[str | None]]:
        """:meth:`start_with_fields`, and the values of the string keys ``read`` (full key names, None for a
        missing one) read in the same round trip."""
        reply = self._start(
            keys=[self.job_key(job_id), self.cancel_key(job_id), self.hb_key(job_id), self.stats_key, *read],
            args=[time.time(), worker, kind, HEARTBEAT_TTL],
        )
        values = list(reply or ["", 0])
        n = int(values[1])
        rest = values[2 + n :]
        return str(values[0]), dict(zip(rest[::2], rest[1::2], strict=True)), [v or None for v in values[2 : 2 + n]]

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
        if not state or state in TERMINAL_STATES:
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


def info_of(job_id: str, f: dict[str, str]) -> JobInfo:
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
        cancel_requested=bool(f.get("cancel_requested")),
    )


def events_of(entries: list[tuple[str, dict[str, str]]]) -> list[Event]:
    return [
        Event(id=eid, name=fields.get("n", ""), data=json.loads(fields.get("d") or "null")) for eid, fields in entries
    ]


__all__ = [
    "HEARTBEAT_INTERVAL",
    "HEARTBEAT_TTL",
    "KEY_ROOT",
    "MAX_EVENTS",
    "TERMINAL_STATES",
    "RedisJobStore",
    "events_of",
    "info_of",
]
